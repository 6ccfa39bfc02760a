/**
 * The committed index of a project, loaded table by table on first use and kept in memory
 * for the rest of the run. Stages edit these objects and then commit the tables they
 * changed; a stage that fails ends the run, so the in-memory copy never outlives a failed
 * commit. Missing files read as empty tables (the stage that writes them has not run yet).
 */
import { stat } from 'node:fs/promises';
import { BaseGraph } from '../model/graph-store.js';
import type {
  AttributeRow,
  DecompositionRecord,
  DocumentRow,
  EntityRow,
  HighLevelElementRow,
  RelationshipRow,
  SemanticUnitRow,
  TextRow,
  TitleRow,
} from '../model/types.js';
import { CACHE_FILES, resolveInProject } from '../project/layout.js';
import { type ColumnRequest, TableReader } from './columns.js';
import { readDecompositions } from './decomposition.js';
import { readTableFile } from './parquet.js';
import {
  attributeColumns,
  attributesFromTable,
  DOCUMENT_COLUMNS,
  documentsFromTable,
  ENTITY_COLUMNS,
  elementColumns,
  elementsFromTable,
  entitiesFromTable,
  GRAPH_EDGE_COLUMNS,
  GRAPH_NODE_COLUMNS,
  graphEdgesFromTable,
  graphNodesFromTable,
  ID_MAP_COLUMNS,
  type IdMapRow,
  idMapFromTable,
  RELATIONSHIP_COLUMNS,
  relationshipsFromTable,
  TITLE_COLUMNS,
  textColumns,
  textFromTable,
  titlesFromTable,
  unitColumns,
  unitsFromTable,
} from './tables.js';

async function exists(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function byId<T extends { hashId: string }>(rows: readonly T[]): Map<string, T> {
  return new Map(rows.map((r) => [r.hashId, r]));
}

export class IndexData {
  readonly #memo = new Map<string, Promise<unknown>>();

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

  async #read<T>(
    relative: string,
    columns: ColumnRequest[],
    parse: (t: TableReader) => T,
    empty: T,
  ): Promise<T> {
    const path = resolveInProject(this.root, relative);
    if (!(await exists(path))) return empty;
    return parse(new TableReader(relative, await readTableFile(path, columns)));
  }

  /** documents.parquet rows, by doc_id. */
  documents(): Promise<DocumentRow[]> {
    return this.#once('documents', () =>
      this.#read(CACHE_FILES.documents, DOCUMENT_COLUMNS, documentsFromTable, []),
    );
  }

  /** text.parquet rows by hash id (insertion order = text_id order). */
  texts(): Promise<Map<string, TextRow>> {
    return this.#once('texts', async () =>
      byId(await this.#read(CACHE_FILES.text, textColumns(this.dim), textFromTable, [])),
    );
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
    return this.#once('units', async () =>
      byId(await this.#read(CACHE_FILES.semanticUnits, unitColumns(this.dim), unitsFromTable, [])),
    );
  }

  entities(): Promise<Map<string, EntityRow>> {
    return this.#once('entities', async () =>
      byId(await this.#read(CACHE_FILES.entities, ENTITY_COLUMNS, entitiesFromTable, [])),
    );
  }

  relationships(): Promise<Map<string, RelationshipRow>> {
    return this.#once('relationships', async () =>
      byId(await this.#read(CACHE_FILES.relationship, RELATIONSHIP_COLUMNS, relationshipsFromTable, [])),
    );
  }

  attributes(): Promise<Map<string, AttributeRow>> {
    return this.#once('attributes', async () =>
      byId(await this.#read(CACHE_FILES.attributes, attributeColumns(this.dim), attributesFromTable, [])),
    );
  }

  elements(): Promise<Map<string, HighLevelElementRow>> {
    return this.#once('elements', async () =>
      byId(await this.#read(CACHE_FILES.highLevelElements, elementColumns(this.dim), elementsFromTable, [])),
    );
  }

  titles(): Promise<Map<string, TitleRow>> {
    return this.#once('titles', async () =>
      byId(await this.#read(CACHE_FILES.highLevelElementTitles, TITLE_COLUMNS, titlesFromTable, [])),
    );
  }

  /** The base graph from graph_nodes.parquet and graph_edges.parquet. */
  graph(): Promise<BaseGraph> {
    return this.#once('graph', async () => {
      const graph = new BaseGraph();
      const nodes = await this.#read(
        CACHE_FILES.graphNodes,
        GRAPH_NODE_COLUMNS,
        graphNodesFromTable,
        new Map(),
      );
      const edges = await this.#read(
        CACHE_FILES.graphEdges,
        GRAPH_EDGE_COLUMNS,
        graphEdgesFromTable,
        new Map(),
      );
      for (const [id, n] of nodes) graph.nodes.set(id, n);
      for (const [key, e] of edges) graph.edges.set(key, e);
      return graph;
    });
  }

  /** id_map.parquet rows by label (empty when the vector index is missing or being rebuilt). */
  idMap(): Promise<IdMapRow[]> {
    return this.#once('idMap', () => this.#read(CACHE_FILES.idMap, ID_MAP_COLUMNS, idMapFromTable, []));
  }

  /** Replace a memoised value after a stage rebuilt it from scratch (e.g. a new id_map). */
  replace<T>(key: 'idMap', value: T): void {
    this.#memo.set(key, Promise.resolve(value));
  }
}
