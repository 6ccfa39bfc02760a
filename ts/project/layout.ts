/**
 * Where the build keeps its files inside a project folder (docs/method.md §5). Every path the
 * pipeline writes is named here once, relative to the project root with `/` separators, so
 * COMMIT.json can record destinations that survive moving the project folder.
 */
import { join } from 'node:path';

export const INPUT_DIR = 'input';
export const CACHE_DIR = 'cache';
export const STAGING_DIR = 'cache/.staging';
export const COMMIT_FILE = 'cache/.staging/COMMIT.json';

export const INFO_FILES = {
  state: 'info/state.json',
  indices: 'info/indices.json',
  documentHash: 'info/document_hash.json',
  /** Input files whose content could not be indexed, left out until they change (ts/indexing/unindexable.ts). */
  unindexable: 'info/unindexable.json',
  /**
   * What the cycle's Document stage changed (runBuild's report), committed with that stage,
   * so a run that resumes the cycle at a later stage reports it too.
   */
  cycleSync: 'info/cycle_sync.json',
  /** chunk_size, language and chat model of the indexed documents (ts/indexing/build-settings.ts). */
  buildSettings: 'info/build_settings.json',
  log: 'info/info.log',
  lock: 'info/build.lock',
} as const;

/** Files of cache/; a parquet table's key is its name in ts/index-io/tables.ts (TABLES). */
export const CACHE_FILES = {
  documents: 'cache/documents.parquet',
  text: 'cache/text.parquet',
  units: 'cache/semantic_units.parquet',
  entities: 'cache/entities.parquet',
  relationships: 'cache/relationship.parquet',
  attributes: 'cache/attributes.parquet',
  elements: 'cache/high_level_elements.parquet',
  titles: 'cache/high_level_elements_titles.parquet',
  graphNodes: 'cache/graph_nodes.parquet',
  graphEdges: 'cache/graph_edges.parquet',
  hnswGraph: 'cache/hnsw_graph.parquet',
  hnswBin: 'cache/HNSW.bin',
  /** The search graph as typed arrays, derived from the three graph tables (ts/index-io/graph-snapshot.ts). */
  searchGraph: 'cache/search_graph.bin',
  idMap: 'cache/id_map.parquet',
  textDecomposition: 'cache/text_decomposition.jsonl',
  llmCache: 'cache/response_cache/llm.jsonl',
  embeddingCache: 'cache/response_cache/embeddings.bin',
} as const;

/** Absolute path of a project-relative path (`/` separated). */
export function resolveInProject(root: string, relative: string): string {
  return join(root, ...relative.split('/'));
}

/**
 * The project folder of `path` when it is `<project>/<relative>`, else undefined (a file read
 * from cache/.staging/ while its commit is pending): for naming the project in messages.
 */
export function projectOf(path: string, relative: string): string | undefined {
  const suffix = `/${relative}`;
  return path.endsWith(suffix) ? path.slice(0, -suffix.length) : undefined;
}
