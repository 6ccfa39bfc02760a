/**
 * Reading the committed index for search (docs/method.md §6.1): only the columns search needs
 * (no embeddings, which live in HNSW.bin), as one typed buffer per column, through the
 * index-io readers. A consistent snapshot: a read that overlaps a build commit is retried.
 *
 * A pending commit (cache/.staging/COMMIT.json, see ts/indexing/commit.ts) is past its
 * commit point: its set of files is the committed index, even while it is being moved into
 * place or when the process moving it died (kill -9) and nothing completes it until the next
 * build. So search never waits for it: each file it lists is read where it is, still staged
 * or already moved, and every other file from its usual place. A reader never mixes files of
 * two commits.
 */

import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { IndexFileError, IndexNotBuiltError } from '../errors.js';
import { CHECKSUMS_FILE } from '../index-io/checksums.js';
import { type KeptGeneration, keptGeneration } from '../index-io/finished-generation.js';
import {
  GRAPH_SNAPSHOT_FILE,
  GRAPH_SNAPSHOT_SOURCES,
  type GraphSnapshot,
  readGraphSnapshot,
} from '../index-io/graph-snapshot.js';
import { readSearchTables, SEARCH_TABLE_FILES, type SearchTables } from '../index-io/search-tables.js';
import { isFile } from '../project/fs-probe.js';
import {
  CACHE_DIR,
  CACHE_FILES,
  COMMIT_FILE,
  INFO_FILES,
  resolveInProject,
  STAGING_DIR,
} from '../project/layout.js';
import { readTextIfExists } from '../project/read-optional.js';
import {
  type BuildState,
  isCycleUnfinished,
  isSearchable,
  parseState,
  rebuildHint,
} from '../project/state.js';
import { shellArg } from '../shell-arg.js';

/** Files a searchable index must have (besides info/state.json). */
const SEARCH_FILES = [...SEARCH_TABLE_FILES, CACHE_FILES.hnswBin];

/** What search loads: cache/search_graph.bin when it is current, else the tables. */
export type IndexSource = { graph: GraphSnapshot; tables: null } | { graph: null; tables: SearchTables };

export type IndexSnapshot = IndexSource & {
  state: BuildState;
  /**
   * True when the files are those of a build cycle in progress (its stages' commits so far):
   * an index that had no kept finished generation when the cycle started (an older version
   * built it). Else they are one finished generation's.
   */
  syncing: boolean;
  /**
   * Absolute path of HNSW.bin (in cache/.staging/ while a commit that replaces it is pending,
   * in cache/finished/ during a cycle).
   */
  hnswPath: string;
  /** Changes when a build commits files this snapshot depends on: see `committedKey`. */
  key: string;
};

function buildHint(root: string): string {
  return `run \`noderag build -f ${shellArg(root)}\``;
}

/** info/state.json as text, or null when the project was never built. */
export async function readStateText(root: string): Promise<string | null> {
  try {
    return await readTextIfExists(resolveInProject(root, INFO_FILES.state));
  } catch (e) {
    // Served as "not searchable" (503) with the reason, like a damaged state.json.
    throw new IndexNotBuiltError(`index damaged: ${(e as Error).message}`, { cause: e });
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
export function parseStateText(text: string, root?: string): BuildState {
  try {
    return parseState(text, undefined, root);
  } catch (e) {
    throw new IndexNotBuiltError(`index damaged: ${(e as Error).message}`, { cause: e });
  }
}

/** Throws IndexNotBuiltError unless a first build has finished. */
function requireSearchable(root: string, stateText: string | null): BuildState {
  if (stateText === null) {
    // As a build says it (ts/indexing/init.ts): an index without its state is damaged, not unbuilt.
    if (existsSync(resolveInProject(root, CHECKSUMS_FILE))) {
      throw new IndexNotBuiltError(
        `index damaged: ${INFO_FILES.state} is missing, but cache/ holds an index (${CHECKSUMS_FILE}); restore it, or ${rebuildHint(root)}`,
      );
    }
    throw new IndexNotBuiltError(`no index in ${root} yet: ${buildHint(root)} first`);
  }
  const state = parseStateText(stateText, root);
  if (!isSearchable(state)) {
    throw new IndexNotBuiltError(
      `the index in ${root} is not built yet (build state: ${state.current_state}); ${buildHint(root)} and wait for it to finish`,
    );
  }
  return state;
}

/**
 * Where the files of the committed index are: a project-relative path → absolute path,
 * and a key that changes whenever the answer may (COMMIT.json's text and state.json's).
 */
interface CommittedFiles {
  key: string;
  stateText: string | null;
  pathOf(relative: string): string;
}

async function readTextOrNull(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** COMMIT.json's destination → staged file name, or null when it is not a manifest. */
function parseManifest(text: string): Map<string, string> | null {
  try {
    const m = JSON.parse(text) as { files?: { staged?: unknown; destination?: unknown }[] };
    if (!Array.isArray(m.files)) return null;
    const out = new Map<string, string>();
    for (const f of m.files) {
      const staged = f?.staged;
      const destination = f?.destination;
      if (
        typeof staged !== 'string' ||
        typeof destination !== 'string' ||
        staged.includes('/') ||
        staged.includes('\\') ||
        staged.startsWith('.')
      ) {
        return null;
      }
      out.set(destination, staged);
    }
    return out;
  } catch {
    return null;
  }
}

async function committedFiles(root: string): Promise<CommittedFiles> {
  const manifestText = await readTextOrNull(resolveInProject(root, COMMIT_FILE));
  const staged = manifestText === null ? new Map<string, string>() : parseManifest(manifestText);
  if (staged === null) {
    // Written by temp + rename, so an unreadable COMMIT.json is not a crash's doing.
    throw new IndexNotBuiltError(`index damaged: ${COMMIT_FILE} is unreadable; ${buildHint(root)}`);
  }
  const where = new Map<string, string>();
  for (const [destination, name] of staged) {
    const path = resolveInProject(root, `${STAGING_DIR}/${name}`);
    // Not moved yet: read it in staging. Already moved: it is at its destination.
    if (await isFile(path)) where.set(destination, path);
  }
  const pathOf = (relative: string) => where.get(relative) ?? resolveInProject(root, relative);
  const stateText = await readTextOrNull(pathOf(INFO_FILES.state));
  return { key: `${manifestText ?? ''}\n${stateText ?? ''}`, stateText, pathOf };
}

/** During a build cycle, the last finished generation as the build kept it, if it did. */
async function keptFor(root: string, state: BuildState | null): Promise<KeptGeneration | null> {
  return state !== null && isCycleUnfinished(state)
    ? keptGeneration(root, state.last_finished_generation)
    : null;
}

/**
 * The files a read takes: during a cycle, the kept finished generation's
 * (ts/index-io/finished-generation.ts), so search never reads a cycle's partial commits;
 * `syncing` when the cycle runs without one. And what the read depends on (`key`): the kept
 * set (its files never change, so the cycle's commits do not invalidate a read of it), else
 * COMMIT.json's and state.json's text.
 */
function generationFiles(
  committed: CommittedFiles,
  state: BuildState | null,
  kept: KeptGeneration | null,
): { files: CommittedFiles; syncing: boolean; key: string } {
  if (kept) {
    const files = { ...committed, pathOf: (r: string) => kept.files.get(r) ?? committed.pathOf(r) };
    return { files, syncing: false, key: `finished ${kept.identity}` };
  }
  return { files: committed, syncing: state !== null && isCycleUnfinished(state), key: committed.key };
}

/**
 * The search snapshot, when it was derived from the committed search tables (their SHA-256 as
 * recorded in cache/checksums.json by the commits that wrote them); else null.
 */
async function readGraph(files: CommittedFiles): Promise<GraphSnapshot | null> {
  const text = await readTextOrNull(files.pathOf(`${CACHE_DIR}/checksums.json`));
  if (text === null) return null;
  let recorded: Record<string, { sha256?: unknown }>;
  try {
    recorded = (JSON.parse(text) as { files?: Record<string, { sha256?: unknown }> }).files ?? {};
  } catch {
    return null;
  }
  const expected: Record<string, string> = {};
  for (const f of GRAPH_SNAPSHOT_SOURCES) {
    const sum = recorded[f]?.sha256;
    if (typeof sum !== 'string') return null;
    expected[f] = sum;
  }
  return readGraphSnapshot(files.pathOf(GRAPH_SNAPSHOT_FILE), expected);
}

async function readOnce(root: string, files: CommittedFiles, useSnapshot: boolean): Promise<IndexSource> {
  for (const relative of SEARCH_FILES) {
    if (!(await isFile(files.pathOf(relative)))) {
      throw new IndexNotBuiltError(
        `index damaged: ${relative} is missing; restore it or rebuild (${buildHint(root)})`,
      );
    }
  }
  // The snapshot holds everything the tables would give; they are read only when it is not usable.
  const graph = useSnapshot ? await readGraph(files) : null;
  return graph ? { graph, tables: null } : { graph: null, tables: await readSearchTables(files.pathOf) };
}

const SNAPSHOT_ATTEMPTS = 5;

/**
 * The `key` of a snapshot read now: when it differs from an earlier snapshot's, a build
 * committed in between (and may have moved or removed files that snapshot named).
 */
export async function committedKey(root: string): Promise<string> {
  const committed = await committedFiles(root);
  let state: BuildState | null = null;
  try {
    if (committed.stateText !== null) state = parseState(committed.stateText, undefined, root);
  } catch {
    // A damaged state.json: the text is the key.
  }
  return generationFiles(committed, state, await keptFor(root, state)).key;
}

/**
 * Reads what search needs (the snapshot, or every table when it is not current; `useSnapshot:
 * false` reads the tables), from the last committed set of files (see the header: a pending
 * commit's set is read where its files are). A build may commit meanwhile: when the files
 * the read depends on changed during it (`generationFiles`), or a file moved under it, the read is
 * repeated, so everything comes from one committed state.
 */
export async function readSnapshot(root: string, { useSnapshot = true } = {}): Promise<IndexSnapshot> {
  for (let attempt = 1; ; attempt++) {
    const committed = await committedFiles(root);
    const state = requireSearchable(root, committed.stateText);
    const { files, syncing, key } = generationFiles(committed, state, await keptFor(root, state));
    let read: IndexSource;
    try {
      read = await readOnce(root, files, useSnapshot);
    } catch (e) {
      // A file moved or replaced by a commit that ran meanwhile: read again.
      if (attempt < SNAPSHOT_ATTEMPTS && (await committedKey(root)) !== key) continue;
      if (e instanceof IndexFileError) {
        throw new IndexNotBuiltError(`index damaged: ${e.message}`, { cause: e });
      }
      throw e;
    }
    if ((await committedKey(root)) === key || attempt >= SNAPSHOT_ATTEMPTS) {
      return { state, syncing, ...read, hnswPath: files.pathOf(CACHE_FILES.hnswBin), key };
    }
  }
}
