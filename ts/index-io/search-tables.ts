/**
 * The columns search reads from each table (docs/method.md §6.1): no embeddings (they live in
 * HNSW.bin). Read by search when cache/search_graph.bin is missing or stale, and by the commit
 * that derives that file (ts/index-io/graph-snapshot.ts), so both interpret the same columns.
 */
import { edgeKey } from '../model/graph-store.js';
import type { GraphEdge, GraphNode, NodeType } from '../model/types.js';
import { type ColumnRequest, TableReader } from './columns.js';
import {
  applyGraphDelta,
  GRAPH_DELTA_FILE,
  type GraphDelta,
  graphDeltaSize,
  readGraphDelta,
} from './graph-delta.js';
import { readTableFile } from './parquet.js';
import { graphNodeRows, TABLES, type TableName } from './tables.js';

/**
 * The second list of each request holds columns whose values repeat (edge endpoints, node
 * types, a unit's chunk id): read dictionary-encoded, so each distinct value becomes one JS
 * string and is resolved once.
 */
export const SEARCH_COLUMNS = {
  documents: TABLES.documents.columns(['doc_id', 'path']),
  text: TABLES.text.columns(['hash_id', 'context', 'doc_id']),
  units: TABLES.units.columns(['hash_id', 'context'], ['text_hash_id']),
  entities: TABLES.entities.columns(['hash_id', 'context'], ['text_hash_id']),
  relationships: TABLES.relationships.columns(['hash_id', 'context'], ['text_hash_id']),
  attributes: TABLES.attributes.columns(['hash_id', 'context', 'node']),
  elements: TABLES.elements.columns(['hash_id', 'context']),
  titles: TABLES.titles.columns(['hash_id', 'context', 'related_node']),
  graphNodes: TABLES.graphNodes.columns(['id'], ['type']),
  graphEdges: TABLES.graphEdges.columns(['weight'], ['source', 'target']),
  hnswGraph: TABLES.hnswGraph.columns([], ['source', 'target']),
  idMap: TABLES.idMap.columns(['id', 'node', 'retired']),
} satisfies Record<TableName, ColumnRequest[]>;

export const SEARCH_TABLE_NAMES = Object.keys(SEARCH_COLUMNS) as TableName[];

/** Project-relative paths of the tables search reads. */
export const SEARCH_TABLE_FILES: readonly string[] = SEARCH_TABLE_NAMES.map((name) => TABLES[name].file);

export type SearchTables = Record<TableName, TableReader>;

/**
 * Reads every search table; `pathOf` maps a project-relative path to where the file is. In the
 * middle of a build cycle the graph tables come with cache/graph_delta.json (graph-delta.ts),
 * applied here, so search sees the graph of the same commit as the other tables.
 */
export async function readSearchTables(pathOf: (relative: string) => string): Promise<SearchTables> {
  const read = async (name: TableName) => {
    const { file } = TABLES[name];
    return [name, new TableReader(file, await readTableFile(pathOf(file), SEARCH_COLUMNS[name]))] as const;
  };
  const tables = Object.fromEntries(await Promise.all(SEARCH_TABLE_NAMES.map(read))) as SearchTables;
  const delta = await readGraphDelta(pathOf(GRAPH_DELTA_FILE), GRAPH_DELTA_FILE);
  return delta && graphDeltaSize(delta) > 0 ? withGraphDelta(tables, delta) : tables;
}

/** The graph tables with `delta` applied (the columns search reads: node types, edge weights). */
function withGraphDelta(t: SearchTables, delta: GraphDelta): SearchTables {
  const nodes = new Map<string, GraphNode>();
  const ids = t.graphNodes.utf8('id');
  const types = t.graphNodes.utf8('type');
  ids.forEach((id, i) => {
    nodes.set(id, { type: types[i] as NodeType, weight: 0, generation: 0, updatedGeneration: 0 });
  });
  const edges = new Map<string, GraphEdge>();
  const sources = t.graphEdges.utf8('source');
  const targets = t.graphEdges.utf8('target');
  const weights = t.graphEdges.int('weight');
  sources.forEach((source, i) => {
    const target = targets[i]!;
    edges.set(edgeKey(source, target), { source, target, weight: weights[i]!, generation: 0 });
  });
  applyGraphDelta({ nodes, edges }, delta);
  const nodeRows = graphNodeRows(nodes);
  const nodeTable = TABLES.graphNodes.write(nodeRows);
  const edgeTable = TABLES.graphEdges.write(edges.values());
  return {
    ...t,
    graphNodes: new TableReader(t.graphNodes.label, nodeTable),
    graphEdges: new TableReader(t.graphEdges.label, edgeTable),
  };
}
