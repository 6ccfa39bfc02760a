import { InternalError } from '../errors.js';
import { BaseGraph, edgeKey } from '../model/graph-store.js';
import type {
  AttributeRow,
  DecompositionRecord,
  DocumentRow,
  EntityRow,
  HighLevelElementRow,
  NodeType,
  RelationshipRow,
  SemanticUnitRow,
  TextRow,
  TitleRow,
} from '../model/types.js';
import { isFile } from '../project/fs-probe.js';
import { CACHE_FILES, resolveInProject } from '../project/layout.js';
import { ATTRIBUTE_INPUTS_FILE, type AttributeInputs, readAttributeInputs } from './attribute-inputs.js';
import { type ColumnRequest, TableReader } from './columns.js';
import { readDecompositions } from './decomposition.js';
import { ELEMENT_MEMBERS_FILE, readElementMembers } from './element-members.js';
import {
  applyGraphDelta,
  copyGraphRows,
  diffGraph,
  GRAPH_DELTA_FILE,
  type GraphDelta,
  type GraphRows,
  readGraphDelta,
  serializeGraphDelta,
  trackedGraphDelta,
} from './graph-delta.js';
import { readTableFile } from './parquet.js';
import type { IndexTable } from './table-spec.js';
import { checkNodeType, type IdMapRow, TABLES } from './tables.js';

const NO_ROWS: GraphRows = { nodes: new Map(), edges: new Map() };

function byId<T extends { hashId: string }>(rows: readonly T[]): Map<string, T> {
  return new Map(rows.map((r) => [r.hashId, r]));
}

export class IndexData {
  /**
   * Tests: also diff the whole graph against a copy of the committed tables at each
   * graphChanges() and fail when the tracked changes differ (an edit that bypassed
   * BaseGraph's recording). Read when the graph is loaded.
   */
  static verifyGraphChanges = false;

  readonly #memo = new Map<string, Promise<unknown>>();
  /**
   * Rows of graph_nodes.parquet plus graph_edges.parquet as last written whole. The graph
   * records its changes since then (BaseGraph.trackChanges), so the delta is read from them.
   */
  #graphTableRows = 0;
  /** verifyGraphChanges: the rows of the tables as last written whole. */
  #graphTablesCopy: GraphRows | null = null;
  /** Whether cache/graph_delta.json exists (committed, or staged by this run). */
  #graphDeltaFile = false;
  /** The graph once loaded (`graph()`). */
  #graphLoaded: BaseGraph | null = null;

  constructor(
    readonly root: string,
    /** config.dim: every stored vector must have this length. */
    readonly dim: number,
  ) {}

  /** Loads once; later calls share the same object. */
  #once<T>(key: string, load: () => Promise<T>): Promise<T> {
    let p = this.#memo.get(key) as Promise<T> | undefined;
    if (!p) {
      p = load();
      this.#memo.set(key, p);
    }
    return p;
  }

  /** The rows of a table, or none when its file does not exist yet. */
  async #rows<R>(table: IndexTable<R>): Promise<R[]> {
    return (await isFile(resolveInProject(this.root, table.file))) ? table.load(this.root, this.dim) : [];
  }

  /** documents.parquet rows, by doc_id. */
  documents(): Promise<DocumentRow[]> {
    return this.#once('documents', () => this.#rows(TABLES.documents));
  }

  /** text.parquet rows by hash id (insertion order = text_id order). */
  texts(): Promise<Map<string, TextRow>> {
    return this.#once('texts', async () => byId(await this.#rows(TABLES.text)));
  }

  /** text_decomposition.jsonl records by text hash id. */
  decompositions(): Promise<Map<string, DecompositionRecord>> {
    return this.#once('decompositions', async () => {
      const records = await readDecompositions(
        resolveInProject(this.root, CACHE_FILES.textDecomposition),
        CACHE_FILES.textDecomposition,
      );
      return new Map(records.map((r) => [r.text_hash_id, r]));
    });
  }

  units(): Promise<Map<string, SemanticUnitRow>> {
    return this.#once('units', async () => byId(await this.#rows(TABLES.units)));
  }

  entities(): Promise<Map<string, EntityRow>> {
    return this.#once('entities', async () => byId(await this.#rows(TABLES.entities)));
  }

  relationships(): Promise<Map<string, RelationshipRow>> {
    return this.#once('relationships', async () => byId(await this.#rows(TABLES.relationships)));
  }

  attributes(): Promise<Map<string, AttributeRow>> {
    return this.#once('attributes', async () => byId(await this.#rows(TABLES.attributes)));
  }

  elements(): Promise<Map<string, HighLevelElementRow>> {
    return this.#once('elements', async () => byId(await this.#rows(TABLES.elements)));
  }

  titles(): Promise<Map<string, TitleRow>> {
    return this.#once('titles', async () => byId(await this.#rows(TABLES.titles)));
  }

  /** cache/element_members.json: element id → the members of the communities that produced it. */
  elementMembers(): Promise<Map<string, string[]>> {
    return this.#once('elementMembers', () =>
      readElementMembers(resolveInProject(this.root, ELEMENT_MEMBERS_FILE), ELEMENT_MEMBERS_FILE),
    );
  }

  /** cache/attribute_inputs.json: what each attribute was written from, and those a sync retired. */
  attributeInputs(): Promise<AttributeInputs> {
    return this.#once('attributeInputs', () =>
      readAttributeInputs(resolveInProject(this.root, ATTRIBUTE_INPUTS_FILE), ATTRIBUTE_INPUTS_FILE),
    );
  }

  /** The base graph: graph_nodes.parquet and graph_edges.parquet with cache/graph_delta.json applied. */
  graph(): Promise<BaseGraph> {
    return this.#once('graph', async () => {
      const graph = await this.#graphTablesRead();
      this.#graphTableRows = graph.nodes.size + graph.edges.size;
      if (IndexData.verifyGraphChanges) this.#graphTablesCopy = copyGraphRows(graph);
      // From here every change is recorded against the tables, the delta's own included.
      // Without tables (a first build) every row is a change: nothing is recorded, and the
      // stage that stages the graph writes the tables whole (graphChanges compares with none).
      if (this.#graphTableRows > 0) graph.trackChanges();
      const delta = await readGraphDelta(resolveInProject(this.root, GRAPH_DELTA_FILE), GRAPH_DELTA_FILE);
      if (delta) {
        this.#graphDeltaFile = true;
        applyGraphDelta(graph, delta);
      }
      this.#graphLoaded = graph;
      return graph;
    });
  }

  /**
   * graph_nodes.parquet and graph_edges.parquet as a BaseGraph: the largest tables a sync
   * loads (70k rows on HotpotQA-100), so read column by column, node types and edge ends
   * dictionary-encoded (one JS string per distinct id), rather than through the generic rows.
   */
  async #graphTablesRead(): Promise<BaseGraph> {
    const graph = new BaseGraph();
    const read = async (file: string, columns: ColumnRequest[]) => {
      const path = resolveInProject(this.root, file);
      return (await isFile(path)) ? new TableReader(file, await readTableFile(path, columns)) : null;
    };
    const { graphNodes, graphEdges } = TABLES;
    const n = await read(
      graphNodes.file,
      graphNodes.columns(['id', 'weight', 'generation', 'updated_generation'], ['type']),
    );
    if (n) {
      const ids = n.utf8('id');
      const type = n.utf8Dictionary('type');
      const [weight, generation, updated] = [
        n.int('weight'),
        n.int('generation'),
        n.int('updated_generation'),
      ];
      type.values.forEach((value, key) => {
        const row = type.keys.indexOf(key);
        if (row >= 0) checkNodeType(n.label, row, value);
      });
      for (let i = 0; i < ids.length; i++) {
        graph.nodes.load(ids[i]!, {
          type: type.values[type.keys[i]!] as NodeType,
          weight: weight[i]!,
          generation: generation[i]!,
          updatedGeneration: updated[i]!,
        });
      }
    }
    const e = await read(graphEdges.file, graphEdges.columns(['weight', 'generation'], ['source', 'target']));
    if (e) {
      const source = e.utf8Dictionary('source');
      const target = e.utf8Dictionary('target');
      const [weight, generation] = [e.int('weight'), e.int('generation')];
      for (let i = 0; i < weight.length; i++) {
        const s = source.values[source.keys[i]!]!;
        const t = target.values[target.keys[i]!]!;
        graph.edges.load(edgeKey(s, t), {
          source: s,
          target: t,
          weight: weight[i]!,
          generation: generation[i]!,
        });
      }
    }
    return graph;
  }

  /** What changed in the graph since its tables were last written whole (`graphTableRows`: their rows). */
  async graphChanges(): Promise<GraphDelta> {
    const graph = await this.graph();
    const delta = graph.nodes.tracking ? trackedGraphDelta(graph) : diffGraph(NO_ROWS, graph);
    if (this.#graphTablesCopy) {
      const whole = serializeGraphDelta(diffGraph(this.#graphTablesCopy, graph));
      if (serializeGraphDelta(delta) !== whole) {
        throw new InternalError(
          'internal_error',
          'the graph changes recorded differ from a comparison of the whole graph (an edit bypassed BaseGraph)',
        );
      }
    }
    return delta;
  }

  /** Rows (nodes + edges) of the graph tables as last written or read; 0 before any. */
  get graphTableRows(): number {
    return this.#graphTableRows;
  }

  /** Whether cache/graph_delta.json exists (read with the graph, or staged since). */
  get hasGraphDelta(): boolean {
    return this.#graphDeltaFile;
  }

  /** A stage staged the graph: as a delta, or (`whole`) as both tables and an empty delta. */
  graphStaged(whole: boolean): void {
    if (!whole) {
      this.#graphDeltaFile = true;
      return;
    }
    // The graph as staged is the new base (its rows were turned into columns already).
    const g = this.#graphLoaded;
    if (!g) throw new InternalError('internal_error', 'graphStaged before the graph was loaded');
    this.#graphTableRows = g.nodes.size + g.edges.size;
    if (this.#graphTablesCopy) this.#graphTablesCopy = copyGraphRows(g);
    g.trackChanges();
  }

  /** id_map.parquet rows by label (empty when the vector index is missing or being rebuilt). */
  idMap(): Promise<IdMapRow[]> {
    return this.#once('idMap', () => this.#rows(TABLES.idMap));
  }

  /** Replace a memoised value after a stage rebuilt it from scratch (e.g. a new id_map). */
  replace<T>(key: 'idMap', value: T): void {
    this.#memo.set(key, Promise.resolve(value));
  }
}
