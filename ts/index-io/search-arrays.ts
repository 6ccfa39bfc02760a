/**
 * The arrays search works on (docs/method.md §6.1), derived from the search tables: dense node
 * indexes in ascending hash-id order (so the native ranking's tie-break by index is the
 * method's tie-break by id), every reference between the tables resolved to such an index.
 *
 * Search builds them from the tables when cache/search_graph.bin is missing or stale; the
 * commit that writes that file builds them here too and stores them (graph-snapshot.ts), so
 * both paths give the same index.
 */
import { IndexNotBuiltError } from '../errors.js';
import { NODE_TYPES, type NodeType } from '../model/types.js';
import type { TableReader } from './columns.js';
import type { SearchTables } from './search-tables.js';

const NO = -1;

export const TYPE_CODE: ReadonlyMap<string, number> = new Map(NODE_TYPES.map((t, i) => [t, i]));

/** A string per node (id, text): a plain array (tables) or decoded on demand (the snapshot). */
export interface NodeStrings {
  readonly length: number;
  at(index: number): string | undefined;
}

export interface SearchArrays {
  /** Hash ids in ascending order; position = dense node index. */
  ids: NodeStrings;
  /** Type code (index into NODE_TYPES) per node. */
  types: Uint8Array;
  /** Node text (`context`) per node. */
  texts: NodeStrings;
  /** Dense index of a hash id, or undefined. */
  indexOf: (id: string) => number | undefined;
  /** Index into `documents` of a node's source document, or −1. */
  docOf: Int32Array;
  /** Itself for a text chunk, the first chunk of a semantic unit; −1 otherwise. */
  chunkOf: Int32Array;
  /** Relative paths of the indexed documents. */
  documents: readonly string[];
  /** Entity → its attribute node, or −1. */
  attributeOf: Int32Array;
  /** Title → its element node, or −1. */
  elementOf: Int32Array;
  /** HNSW label → node index; −1 for retired labels. */
  labelNode: Int32Array;
  /** The labels that are −1 in `labelNode`, ascending. */
  retiredLabels: number[];
  edges: { src: Uint32Array; dst: Uint32Array; weight: Float64Array };
  similarity: { src: Uint32Array; dst: Uint32Array };
  /** The base graph as adjacency lists (both directions): neighbours of i are targets[offsets[i]..offsets[i+1]]. */
  adjacency: { offsets: Uint32Array; targets: Uint32Array };
}

function damaged(message: string): IndexNotBuiltError {
  return new IndexNotBuiltError(`index damaged: ${message}; rebuild the index`);
}

/** Undirected edge list → adjacency lists (counting sort: two passes, no per-node arrays). */
export function adjacencyOf(
  n: number,
  edges: { src: Uint32Array; dst: Uint32Array },
): { offsets: Uint32Array; targets: Uint32Array } {
  const offsets = new Uint32Array(n + 1);
  const m = edges.src.length;
  for (let i = 0; i < m; i++) {
    offsets[edges.src[i]! + 1]!++;
    offsets[edges.dst[i]! + 1]!++;
  }
  for (let i = 0; i < n; i++) offsets[i + 1]! += offsets[i]!;
  const fill = offsets.slice(0, n);
  const targets = new Uint32Array(2 * m);
  for (let i = 0; i < m; i++) {
    const u = edges.src[i]!;
    const v = edges.dst[i]!;
    targets[fill[u]!++] = v;
    targets[fill[v]!++] = u;
  }
  return { offsets, targets };
}

/** Node ids in ascending order and their type codes, from graph_nodes.parquet. */
function nodesFromTables(t: SearchTables): { ids: string[]; types: Uint8Array } {
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

/**
 * Assigns dense indexes and resolves every reference between the tables. `syncing` (a build
 * cycle is running): the vector-index files (id_map, hnsw_graph) are those of the last HNSW
 * commit, and a sync (docs/method.md §4.5) may have removed nodes they still name; those
 * labels count as retired and those similarity edges are left out until the cycle's HNSW
 * commit. Otherwise such references are damage (IndexNotBuiltError).
 */
export function arraysFromTables(t: SearchTables, syncing: boolean): SearchArrays {
  const { ids, types } = nodesFromTables(t);
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

  const edges = edgeArrays(t.graphEdges, indexOf);
  const similarity = syncing ? knownEdges(t.hnswGraph, indexOf) : endpointPairs(t.hnswGraph, indexOf);

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

  return {
    ids,
    types,
    texts,
    indexOf: (id) => indexOf.get(id),
    docOf,
    chunkOf,
    documents,
    attributeOf,
    elementOf,
    labelNode,
    retiredLabels,
    edges,
    similarity,
    adjacency: adjacencyOf(n, edges),
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

function endpointPairs(
  table: TableReader,
  indexOf: ReadonlyMap<string, number>,
): { src: Uint32Array; dst: Uint32Array } {
  return { src: endpointIndexes(table, 'source', indexOf), dst: endpointIndexes(table, 'target', indexOf) };
}

function edgeArrays(
  table: TableReader,
  indexOf: ReadonlyMap<string, number>,
): { src: Uint32Array; dst: Uint32Array; weight: Float64Array } {
  const weight = Float64Array.from(table.int('weight'));
  const bad = weight.findIndex((w) => !(w > 0));
  if (bad >= 0)
    throw damaged(`${table.label}: row ${bad} has weight ${weight[bad]}; weights must be positive`);
  return { ...endpointPairs(table, indexOf), weight };
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
