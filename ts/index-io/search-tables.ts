/**
 * The columns search reads from each table (docs/method.md §6.1): no embeddings (they live in
 * HNSW.bin). Read by search when cache/search_graph.bin is missing or stale, and by the commit
 * that derives that file (ts/index-io/graph-snapshot.ts), so both interpret the same columns.
 */
import { type ColumnRequest, TableReader } from './columns.js';
import { readTableFile } from './parquet.js';
import { TABLES, type TableName } from './tables.js';

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

/** Reads every search table; `pathOf` maps a project-relative path to where the file is. */
export async function readSearchTables(pathOf: (relative: string) => string): Promise<SearchTables> {
  const read = async (name: TableName) => {
    const { file } = TABLES[name];
    return [name, new TableReader(file, await readTableFile(pathOf(file), SEARCH_COLUMNS[name]))] as const;
  };
  return Object.fromEntries(await Promise.all(SEARCH_TABLE_NAMES.map(read))) as SearchTables;
}
