/**
 * An index loaded for search (docs/method.md §6.1): node ids, types and texts in dense arrays,
 * the native search graph (base + similarity edges), the vector index with retired labels
 * excluded, and the phrase matcher over entity names and titles. Immutable once built, so
 * any number of queries can use it at once; `close()` frees the native memory.
 *
 * Dense node indexes follow ascending hash id (graph_nodes.parquet order), so the native
 * ranking's tie-break by index is the method's tie-break by id.
 */
import { stat } from 'node:fs/promises';
import { IndexFileError, IndexNotBuiltError } from '../errors.js';
import { PhraseMatcher, SearchGraph } from '../graph/index.js';
import type { TableReader } from '../index-io/columns.js';
import { adjacencyOf } from '../index-io/graph-snapshot.js';
import { NODE_TYPES, type NodeType } from '../model/types.js';
import { CACHE_FILES, resolveInProject } from '../project/layout.js';
import { VectorIndex } from '../vector/index.js';
import { type IndexSnapshot, readSnapshot } from './index-files.js';

export interface LoadOptions {
  /** `config.dim`: the vector index must have it. */
  dim: number;
  /** `config.unbalance_adjust`. */
  unbalanceAdjust: boolean;
}

/** Milliseconds spent in each loading step. */
export interface LoadTimings {
  readMs: number;
  mapMs: number;
  nativeMs: number;
  totalMs: number;
}

const NO = -1;

const TYPE_CODE: ReadonlyMap<string, number> = new Map(NODE_TYPES.map((t, i) => [t, i]));

function damaged(message: string): IndexNotBuiltError {
  return new IndexNotBuiltError(`index damaged: ${message}; rebuild the index`);
}

/** The arrays of a loaded index, before the native structures are attached. */
interface IndexArrays {
  ids: string[];
  types: Uint8Array;
  texts: string[];
  indexOf: Map<string, number>;
  docOf: Int32Array;
  chunkOf: Int32Array;
  documents: string[];
  attributeOf: Int32Array;
  elementOf: Int32Array;
  labelNode: Int32Array;
  retiredLabels: number[];
  edges: { src: Uint32Array; dst: Uint32Array; weight: Float64Array };
  similarity: { src: Uint32Array; dst: Uint32Array };
  /** The base graph's adjacency when the snapshot carries it; else built from `edges`. */
  adjacency: { offsets: Uint32Array; targets: Uint32Array } | null;
  names: [number, string][];
}

export class LoadedIndex {
  /** Generation of the last finished build cycle in this snapshot. */
  readonly generation: number;
  /** Hash ids in ascending order; position = dense node index. */
  readonly ids: readonly string[];
  /** Type code (index into NODE_TYPES) per node. */
  readonly types: Uint8Array;
  /** Node text (`context`) per node. */
  readonly texts: readonly string[];
  /** Index into `documents` of a node's source document, or −1. */
  readonly docOf: Int32Array;
  /**
   * The text node a node's text was taken from: itself for a text chunk, the first chunk of a
   * semantic unit; −1 otherwise. Lets a context leave out a unit whose chunk it already holds.
   */
  readonly chunkOf: Int32Array;
  /** Relative paths of the indexed documents. */
  readonly documents: readonly string[];
  /** Entity → its attribute node, or −1. */
  readonly attributeOf: Int32Array;
  /** Title → its element node, or −1. */
  readonly elementOf: Int32Array;
  /** HNSW label → node index; −1 for retired labels. */
  readonly labelNode: Int32Array;
  /** Labels not retired. */
  readonly activeVectors: number;
  readonly graph: SearchGraph;
  /**
   * The base graph (no similarity edges) as adjacency lists: the neighbours of node i are
   * `targets[offsets[i] .. offsets[i + 1]]`. Bridge passages (ts/search/bridge.ts) walk it.
   */
  readonly adjacency: { offsets: Uint32Array; targets: Uint32Array };
  /** Null when the index holds no vector. */
  readonly vectors: VectorIndex | null;
  readonly matcher: PhraseMatcher<number>;
  readonly timings: LoadTimings;
  readonly #indexOf: Map<string, number>;

  private constructor(
    generation: number,
    a: IndexArrays,
    native: { graph: SearchGraph; vectors: VectorIndex | null; matcher: PhraseMatcher<number> },
    timings: LoadTimings,
  ) {
    this.generation = generation;
    this.ids = a.ids;
    this.types = a.types;
    this.texts = a.texts;
    this.docOf = a.docOf;
    this.chunkOf = a.chunkOf;
    this.documents = a.documents;
    this.attributeOf = a.attributeOf;
    this.elementOf = a.elementOf;
    this.labelNode = a.labelNode;
    this.activeVectors = a.labelNode.length - a.retiredLabels.length;
    this.#indexOf = a.indexOf;
    this.graph = native.graph;
    this.adjacency = a.adjacency ?? adjacencyOf(a.ids.length, a.edges);
    this.vectors = native.vectors;
    this.matcher = native.matcher;
    this.timings = timings;
  }

  /** Reads the committed index of `root` and builds the search structures. */
  static async load(root: string, options: LoadOptions): Promise<LoadedIndex> {
    const t0 = performance.now();
    // The vector index loads (off the main thread) while the tables are read; it is
    // checked against the snapshot afterwards and loaded again if a build replaced it.
    const early = EarlyVectors.start(resolveInProject(root, CACHE_FILES.hnswBin), options.dim);
    let snapshot: IndexSnapshot;
    let arrays: IndexArrays;
    try {
      snapshot = await readSnapshot(root);
    } catch (e) {
      await early.discard();
      throw e;
    }
    const t1 = performance.now();
    try {
      arrays = buildArrays(snapshot);
    } catch (e) {
      await early.discard();
      throw e;
    }
    const t2 = performance.now();
    const native = await buildNative(snapshot, arrays, options, early);
    const t3 = performance.now();
    return new LoadedIndex(snapshot.state.last_finished_generation, arrays, native, {
      readMs: t1 - t0,
      mapMs: t2 - t1,
      nativeMs: t3 - t2,
      totalMs: t3 - t0,
    });
  }

  get nodeCount(): number {
    return this.ids.length;
  }

  /** Neighbours of `node` in the base graph (a view, not a copy). */
  neighbors(node: number): Uint32Array {
    const { offsets, targets } = this.adjacency;
    return targets.subarray(offsets[node]!, offsets[node + 1]!);
  }

  indexOf(id: string): number | undefined {
    return this.#indexOf.get(id);
  }

  typeOf(index: number): NodeType {
    return NODE_TYPES[this.types[index]!]!;
  }

  /** Relative path of the document a node came from (its first chunk's), or null. */
  documentOf(index: number): string | null {
    const d = this.docOf[index]!;
    return d === NO ? null : this.documents[d]!;
  }

  close(): void {
    this.graph.close();
    this.vectors?.close();
    this.matcher.close();
  }
}

/** Node ids in ascending order and their type codes, from graph_nodes.parquet. */
function nodesFromTables(t: IndexSnapshot['tables']): { ids: string[]; types: Uint8Array } {
  const nodeIds = t.graphNodes.utf8('id');
  // Seven distinct type names over all rows: resolve each once, then index by key.
  const nodeTypes = t.graphNodes.utf8Dictionary('type');
  const codeOfKey = nodeTypes.values.map((name) => {
    const code = TYPE_CODE.get(name);
    if (code === undefined) throw damaged(`graph_nodes.parquet: unknown node type ${JSON.stringify(name)}`);
    return code;
  });
  const n = nodeIds.length;

  // graph_nodes.parquet is sorted by id; sort defensively if a writer did not.
  let order: number[] | null = null;
  for (let i = 1; i < n; i++) {
    if (nodeIds[i - 1]! >= nodeIds[i]!) {
      order = Array.from({ length: n }, (_, k) => k).sort((a, b) =>
        nodeIds[a]! < nodeIds[b]! ? -1 : nodeIds[a]! > nodeIds[b]! ? 1 : 0,
      );
      break;
    }
  }
  const ids = order ? order.map((k) => nodeIds[k]!) : nodeIds;
  const types = new Uint8Array(n);
  for (let i = 0; i < n; i++) types[i] = codeOfKey[nodeTypes.keys[order ? order[i]! : i]!]!;
  return { ids, types };
}

/** Assigns dense indexes and resolves every reference between the tables. */
function buildArrays(snapshot: IndexSnapshot): IndexArrays {
  const t = snapshot.tables;
  const { ids, types } = snapshot.graph ?? nodesFromTables(t);
  const n = ids.length;
  const indexOf = new Map<string, number>();
  for (let i = 0; i < n; i++) indexOf.set(ids[i]!, i);
  if (indexOf.size !== n) {
    const dup = ids.find((id, i) => indexOf.get(id) !== i);
    throw damaged(`graph_nodes.parquet: node ${dup} appears twice`);
  }

  // Documents: text rows point at documents; other rows at their first chunk.
  const docIds = t.documents.int('doc_id');
  const documents = t.documents.utf8('path');
  const docIndex = new Map(docIds.map((id, i) => [id, i]));
  const textDoc = new Map<string, number>();
  const textIds = t.text.utf8('hash_id');
  const textDocIds = t.text.int('doc_id');
  textIds.forEach((id, i) => {
    textDoc.set(id, docIndex.get(textDocIds[i]!) ?? NO);
  });

  const texts = new Array<string>(n);
  const docOf = new Int32Array(n).fill(NO);
  const chunkOf = new Int32Array(n).fill(NO);
  const place = (table: TableReader, type: NodeType, eachRow?: (row: number, node: number) => void) => {
    const code = TYPE_CODE.get(type)!;
    const hashIds = table.utf8('hash_id');
    const contexts = table.utf8('context');
    hashIds.forEach((id, row) => {
      // Rows not yet in the graph belong to a cycle in progress (§6.1): not searchable yet.
      const node = indexOf.get(id);
      if (node === undefined) return;
      if (types[node] !== code) {
        throw damaged(
          `${table.label}: row ${row} (${id}) is a ${NODE_TYPES[types[node]!]} in graph_nodes.parquet`,
        );
      }
      texts[node] = contexts[row]!;
      eachRow?.(row, node);
    });
  };
  const firstChunk = (table: TableReader, keepChunk = false) => {
    // Many rows share a chunk: resolve each distinct chunk id once.
    const chunk = table.utf8Dictionary('text_hash_id');
    const docOfKey = Int32Array.from(chunk.values, (id) => textDoc.get(id) ?? NO);
    const nodeOfKey = Int32Array.from(chunk.values, (id) => indexOf.get(id) ?? NO);
    return (row: number, node: number) => {
      docOf[node] = docOfKey[chunk.keys[row]!]!;
      if (keepChunk) chunkOf[node] = nodeOfKey[chunk.keys[row]!]!;
    };
  };
  place(t.text, 'text', (row, node) => {
    docOf[node] = textDoc.get(textIds[row]!) ?? NO;
    chunkOf[node] = node;
  });
  place(t.units, 'semantic_unit', firstChunk(t.units, true));
  place(t.entities, 'entity', firstChunk(t.entities));
  place(t.relationships, 'relationship', firstChunk(t.relationships));

  const attributeOf = new Int32Array(n).fill(NO);
  const attrEntity = t.attributes.utf8('node');
  place(t.attributes, 'attribute', (row, node) => {
    const entity = indexOf.get(attrEntity[row]!);
    if (entity === undefined || types[entity] !== TYPE_CODE.get('entity')) {
      throw damaged(
        `${t.attributes.label}: row ${row} names entity ${attrEntity[row]}, which is not in the graph`,
      );
    }
    attributeOf[entity] = node;
    docOf[node] = docOf[entity]!;
  });
  place(t.elements, 'high_level_element');
  const elementOf = new Int32Array(n).fill(NO);
  const titleElement = t.titles.utf8('related_node');
  place(t.titles, 'high_level_element_title', (row, node) => {
    const element = indexOf.get(titleElement[row]!);
    if (element === undefined || types[element] !== TYPE_CODE.get('high_level_element')) {
      throw damaged(
        `${t.titles.label}: row ${row} names element ${titleElement[row]}, which is not in the graph`,
      );
    }
    elementOf[node] = element;
  });
  for (let i = 0; i < n; i++) {
    if (texts[i] === undefined) {
      throw damaged(`graph node ${ids[i]} (${NODE_TYPES[types[i]!]}) has no row in its table`);
    }
  }

  // During a build cycle the vector-index files (id_map, hnsw_graph) are those of the last
  // HNSW commit: a sync (docs/method.md §4.5) may have removed nodes they still name. Those
  // labels count as retired and those similarity edges are left out until the cycle's HNSW
  // commit; in a finished index they are damage.
  const syncing = snapshot.state.current_state !== 'FINISHED';
  const g = snapshot.graph;
  const edges = g ? g.edges : edgeArrays(t.graphEdges, indexOf, true);
  const sim = g
    ? g.similarity
    : syncing
      ? knownEdges(t.hnswGraph, indexOf)
      : edgeArrays(t.hnswGraph, indexOf, false);

  // id_map: label i on row i (checked), retired labels excluded from search.
  const labels = t.idMap.int('id');
  const labelNodes = t.idMap.utf8('node');
  const retired = t.idMap.boolean('retired');
  const labelNode = new Int32Array(labels.length).fill(NO);
  const retiredLabels: number[] = [];
  labels.forEach((label, row) => {
    if (label !== row)
      throw damaged(`${t.idMap.label}: row ${row} has label ${label}; labels must run 0, 1, 2, …`);
    if (retired[row]) {
      retiredLabels.push(label);
      return;
    }
    const node = indexOf.get(labelNodes[row]!);
    if (node === undefined && syncing) {
      retiredLabels.push(label);
      return;
    }
    if (node === undefined)
      throw damaged(`${t.idMap.label}: label ${label} names ${labelNodes[row]}, which is not in the graph`);
    labelNode[label] = node;
  });

  const names: [number, string][] = [];
  const entityCode = TYPE_CODE.get('entity');
  const titleCode = TYPE_CODE.get('high_level_element_title');
  for (let i = 0; i < n; i++) {
    if (types[i] === entityCode || types[i] === titleCode) names.push([i, texts[i]!]);
  }

  return {
    ids,
    types,
    texts,
    indexOf,
    docOf,
    chunkOf,
    documents,
    attributeOf,
    elementOf,
    labelNode,
    retiredLabels,
    edges: { src: edges.src, dst: edges.dst, weight: edges.weight ?? new Float64Array(0) },
    similarity: { src: sim.src, dst: sim.dst },
    adjacency: g ? g.adjacency : null,
    names,
  };
}

/**
 * Node indexes of a dictionary-encoded endpoint column: each distinct id is looked up once
 * (an edge table of a million rows names only as many ids as the graph has nodes).
 */
function endpointIndexes(
  table: TableReader,
  name: string,
  indexOf: ReadonlyMap<string, number>,
): Uint32Array {
  const { keys, values } = table.utf8Dictionary(name);
  const nodeOf = Int32Array.from(values, (id) => indexOf.get(id) ?? -1);
  const out = new Uint32Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const node = nodeOf[keys[i]!]!;
    if (node < 0) {
      throw damaged(`${table.label}: row ${i} has ${name} ${values[keys[i]!]}, which is not in the graph`);
    }
    out[i] = node;
  }
  return out;
}

function edgeArrays(
  table: TableReader,
  indexOf: ReadonlyMap<string, number>,
  weighted: boolean,
): { src: Uint32Array; dst: Uint32Array; weight?: Float64Array } {
  const src = endpointIndexes(table, 'source', indexOf);
  const dst = endpointIndexes(table, 'target', indexOf);
  if (!weighted) return { src, dst };
  const weight = Float64Array.from(table.int('weight'));
  const bad = weight.findIndex((w) => !(w > 0));
  if (bad >= 0)
    throw damaged(`${table.label}: row ${bad} has weight ${weight[bad]}; weights must be positive`);
  return { src, dst, weight };
}

/** The edges of an unweighted edge table whose both ends are in the graph. */
function knownEdges(
  table: TableReader,
  indexOf: ReadonlyMap<string, number>,
): { src: Uint32Array; dst: Uint32Array } {
  const ends = (name: string) => {
    const { keys, values } = table.utf8Dictionary(name);
    const nodeOf = Int32Array.from(values, (id) => indexOf.get(id) ?? -1);
    return Int32Array.from(keys, (k) => nodeOf[k]!);
  };
  const a = ends('source');
  const b = ends('target');
  const src: number[] = [];
  const dst: number[] = [];
  for (let i = 0; i < a.length; i++) {
    if (a[i]! >= 0 && b[i]! >= 0) {
      src.push(a[i]!);
      dst.push(b[i]!);
    }
  }
  return { src: Uint32Array.from(src), dst: Uint32Array.from(dst) };
}

/** HNSW.bin loading started before the tables are read. */
class EarlyVectors {
  private constructor(
    readonly path: string,
    readonly fileBefore: Promise<string>,
    readonly result: Promise<{ index: VectorIndex } | { error: unknown }>,
  ) {}

  static start(path: string, dim: number): EarlyVectors {
    return new EarlyVectors(
      path,
      fileIdentity(path),
      VectorIndex.load(path, { expectedDim: dim }).then(
        (index) => ({ index }),
        (error: unknown) => ({ error }),
      ),
    );
  }

  /** The early index if it is the file of the snapshot with `count` vectors; else null (and closed). */
  async take(path: string, count: number): Promise<VectorIndex | null> {
    const r = await this.result;
    if (!('index' in r)) return null;
    // The snapshot may come from a pending commit, whose HNSW.bin is still in staging.
    const unchanged = path === this.path && (await this.fileBefore) === (await fileIdentity(this.path));
    if (unchanged && r.index.size === count) return r.index;
    r.index.close();
    return null;
  }

  async discard(): Promise<void> {
    const r = await this.result;
    if ('index' in r) r.index.close();
  }
}

async function fileIdentity(path: string): Promise<string> {
  try {
    const s = await stat(path);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return 'missing';
  }
}

async function loadVectors(
  snapshot: IndexSnapshot,
  a: IndexArrays,
  options: LoadOptions,
  early: EarlyVectors,
): Promise<VectorIndex | null> {
  if (a.labelNode.length === 0) {
    await early.discard();
    return null;
  }
  const taken = await early.take(snapshot.hnswPath, a.labelNode.length);
  // Not usable (damaged, replaced meanwhile, other count): load it again, with the checks.
  return (
    taken ??
    VectorIndex.load(snapshot.hnswPath, { expectedDim: options.dim, expectedCount: a.labelNode.length })
  );
}

async function buildNative(
  snapshot: IndexSnapshot,
  a: IndexArrays,
  options: LoadOptions,
  early: EarlyVectors,
): Promise<{ graph: SearchGraph; vectors: VectorIndex | null; matcher: PhraseMatcher<number> }> {
  // The three builds run off the main thread, side by side.
  const results = await Promise.allSettled([
    SearchGraph.build({
      nodeTypes: a.types,
      edges: { nodeCount: a.ids.length, ...a.edges },
      similarity: a.similarity,
      unbalanceAdjust: options.unbalanceAdjust,
    }),
    loadVectors(snapshot, a, options, early),
    PhraseMatcher.buildWithIds(a.names),
  ] as const);
  const [graph, vectors, matcher] = results;
  const failure = results.find((r) => r.status === 'rejected');
  if (failure) {
    // Free whatever was built before reporting.
    if (graph.status === 'fulfilled') graph.value.close();
    if (vectors.status === 'fulfilled') vectors.value?.close();
    if (matcher.status === 'fulfilled') matcher.value.close();
    const e = (failure as PromiseRejectedResult).reason;
    if (e instanceof IndexFileError)
      throw new IndexNotBuiltError(`index damaged: ${e.message}`, { cause: e });
    throw e;
  }
  const index = vectors.status === 'fulfilled' ? vectors.value : null;
  if (index && a.retiredLabels.length > 0) index.retire(a.retiredLabels);
  return {
    graph: (graph as PromiseFulfilledResult<SearchGraph>).value,
    vectors: index,
    matcher: (matcher as PromiseFulfilledResult<PhraseMatcher<number>>).value,
  };
}
