/**
 * Reading the committed index for search (docs/method.md §6.1): only the columns search needs
 * (no embeddings, which live in HNSW.bin), as one typed buffer per column, through the
 * index-io readers. A consistent snapshot: a read that overlaps a build commit is retried.
 */
import { readFile, stat } from 'node:fs/promises';
import { IndexFileError, IndexNotBuiltError } from '../errors.js';
import { type ColumnRequest, TableReader } from '../index-io/columns.js';
import { readTableFile } from '../index-io/parquet.js';
import { TABLES, type TableName } from '../index-io/tables.js';
import { CACHE_FILES, COMMIT_FILE, INFO_FILES, resolveInProject } from '../project/layout.js';
import { type BuildState, isSearchable, parseState } from '../project/state.js';

/**
 * The columns search reads from each table. The second list holds columns whose values repeat
 * (edge endpoints, node types, a unit's chunk id): read dictionary-encoded, so each distinct
 * value becomes one JS string and is resolved once.
 */
const COLUMNS = {
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

const NAMES = Object.keys(COLUMNS) as TableName[];

/** Files a searchable index must have (besides info/state.json). */
const SEARCH_FILES = [...NAMES.map((name) => TABLES[name].file), CACHE_FILES.hnswBin];

type IndexTables = Record<TableName, TableReader>;

export interface IndexSnapshot {
  state: BuildState;
  tables: IndexTables;
  /** Absolute path of HNSW.bin. */
  hnswPath: string;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function buildHint(root: string): string {
  return `run \`noderag build -f ${root}\``;
}

/** info/state.json as text, or null when the project was never built. */
export async function readStateText(root: string): Promise<string | null> {
  try {
    return await readFile(resolveInProject(root, INFO_FILES.state), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * What a failed load depends on: state.json's text and the index files' sizes and mtimes.
 * While it is unchanged, loading again would fail the same way.
 */
export async function indexFingerprint(root: string): Promise<string> {
  const parts: string[] = [(await readStateText(root).catch(() => null)) ?? '<no state.json>'];
  for (const relative of SEARCH_FILES) {
    try {
      const s = await stat(resolveInProject(root, relative));
      parts.push(`${relative}:${s.size}:${s.mtimeMs}`);
    } catch {
      parts.push(`${relative}:-`);
    }
  }
  return parts.join('\n');
}

/** Parses state.json text; a damaged file is "not built" (the server answers 503). */
export function parseStateText(text: string): BuildState {
  try {
    return parseState(text);
  } catch (e) {
    throw new IndexNotBuiltError(`index damaged: ${(e as Error).message}`, { cause: e });
  }
}

/** Throws IndexNotBuiltError unless a first build has finished. */
function requireSearchable(root: string, stateText: string | null): BuildState {
  if (stateText === null) {
    throw new IndexNotBuiltError(`no index in ${root} yet: ${buildHint(root)} first`);
  }
  const state = parseStateText(stateText);
  if (!isSearchable(state)) {
    throw new IndexNotBuiltError(
      `the index in ${root} is not built yet (build state: ${state.current_state}); ${buildHint(root)} and wait for it to finish`,
    );
  }
  return state;
}

const COMMIT_POLL_MS = 25;
const COMMIT_WAIT_MS = 10_000;

/** Waits while a build commit is being applied (it takes milliseconds). */
async function waitForCommit(root: string): Promise<void> {
  const path = resolveInProject(root, COMMIT_FILE);
  const deadline = Date.now() + COMMIT_WAIT_MS;
  while (await isFile(path)) {
    if (Date.now() > deadline) {
      throw new IndexNotBuiltError(
        `a build commit has been pending for ${COMMIT_WAIT_MS / 1000} s (${COMMIT_FILE}); run the build again to complete it`,
      );
    }
    await new Promise((r) => setTimeout(r, COMMIT_POLL_MS));
  }
}

async function readOnce(root: string): Promise<IndexTables> {
  for (const relative of SEARCH_FILES) {
    if (!(await isFile(resolveInProject(root, relative)))) {
      throw new IndexNotBuiltError(
        `index damaged: ${relative} is missing; restore it or rebuild (${buildHint(root)})`,
      );
    }
  }
  const read = await Promise.all(
    NAMES.map(async (name) => {
      const { file } = TABLES[name];
      return [
        name,
        new TableReader(file, await readTableFile(resolveInProject(root, file), COLUMNS[name])),
      ] as const;
    }),
  );
  return Object.fromEntries(read) as IndexTables;
}

const SNAPSHOT_ATTEMPTS = 3;

/**
 * Reads every table search needs. A build may commit meanwhile (tables only grow, each
 * commit is atomic): when state.json changed or a commit is pending after the read, the
 * read is repeated, so the tables always come from one committed state.
 */
export async function readSnapshot(root: string): Promise<IndexSnapshot> {
  for (let attempt = 1; ; attempt++) {
    await waitForCommit(root);
    const before = await readStateText(root);
    const state = requireSearchable(root, before);
    let tables: IndexTables;
    try {
      tables = await readOnce(root);
    } catch (e) {
      if (e instanceof IndexFileError) {
        throw new IndexNotBuiltError(`index damaged: ${e.message}`, { cause: e });
      }
      throw e;
    }
    const after = await readStateText(root);
    const committing = await isFile(resolveInProject(root, COMMIT_FILE));
    if ((after === before && !committing) || attempt >= SNAPSHOT_ATTEMPTS) {
      return { state, tables, hnswPath: resolveInProject(root, CACHE_FILES.hnswBin) };
    }
  }
}
