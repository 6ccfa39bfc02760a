/**
 * All-or-nothing stage commits (docs/method.md §4.4).
 *
 * A stage stages each output in cache/.staging/, then `commit()`:
 *   1. fsyncs every staged file (but the search snapshot: see #unsynced) and the staging folder;
 *   2. writes cache/.staging/COMMIT.json (temp + fsync + rename) mapping staged → destination;
 *   3. renames each staged file into place (info/state.json last) and fsyncs the folders;
 *   4. deletes COMMIT.json.
 * At start-up `recoverStaging` finishes a commit whose COMMIT.json exists (roll forward) and
 * deletes staged files without one (roll back). COMMIT.json is the commit point: before it
 * exists nothing has changed, after it exists the commit will complete.
 *
 * Every commit also records the SHA-256 of each file it puts under cache/ (but the search
 * snapshot) in cache/checksums.json, staged with the files (so the checksums always describe
 * the files in place); INIT compares them at the start of every build (ts/indexing/init.ts).
 *
 * Readers (search) never wait for a pending commit: past the commit point the new set is
 * committed, and COMMIT.json says where each of its files is (still staged, or already
 * moved), so ts/search/index-files.ts reads that set even when the process applying it
 * died (kill -9) and nothing completes it until the next build.
 */
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, posix } from 'node:path';
import { IndexFileError, InternalError } from '../errors.js';
import {
  CHECKED_INFO_FILES,
  CHECKSUMS_FILE,
  type FileChecksum,
  readChecksums,
  serializeChecksums,
  sha256File,
} from '../index-io/checksums.js';
import {
  deriveGraphSnapshot,
  GRAPH_SNAPSHOT_FILE,
  GRAPH_SNAPSHOT_SOURCES,
  graphSnapshotCurrent,
  SnapshotUnavailable,
} from '../index-io/graph-snapshot.js';
import { fsyncDir, fsyncFile, writeFileAtomic, writeFileSynced } from '../project/atomic.js';
import { CACHE_DIR, COMMIT_FILE, INFO_FILES, resolveInProject, STAGING_DIR } from '../project/layout.js';
import { rebuildHint } from '../project/state.js';

const MANIFEST_VERSION = 1;

/** Points where a test can observe (or simulate a crash in) a commit. */
export type CommitStep =
  | 'files-synced' // staged files durable, no COMMIT.json yet: a crash rolls back
  | 'manifest-written' // COMMIT.json durable: a crash rolls forward
  | 'file-renamed' // one file moved into place (detail = its destination)
  | 'renamed' // all files in place, folders synced, COMMIT.json still present
  | 'done'; // COMMIT.json deleted

export interface CommitHooks {
  /** Called after each step; throwing (or killing the process) here simulates a crash. */
  afterStep?: (step: CommitStep, detail?: string) => void | Promise<void>;
}

interface ManifestEntry {
  /** File name inside cache/.staging/. */
  staged: string;
  /** Project-relative destination, `/` separated. */
  destination: string;
}

interface Manifest {
  version: number;
  created_at: string;
  files: ManifestEntry[];
}

/** Reject destinations that could escape the project or clobber the staging area. */
function checkDestination(destination: string): void {
  const normal = posix.normalize(destination);
  if (
    destination === '' ||
    normal !== destination ||
    posix.isAbsolute(destination) ||
    destination.includes('\\') ||
    normal.startsWith('../') ||
    normal === '..' ||
    normal === STAGING_DIR ||
    normal.startsWith(`${STAGING_DIR}/`)
  ) {
    throw new InternalError('internal_error', `invalid commit destination ${JSON.stringify(destination)}`);
  }
}

/** info/state.json goes last, so the state advances only once every data file is in place. */
function commitOrder(entries: ManifestEntry[]): ManifestEntry[] {
  const rank = (e: ManifestEntry) => (e.destination === INFO_FILES.state ? 1 : 0);
  return [...entries].sort((a, b) => rank(a) - rank(b));
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** One stage's set of outputs, staged and then committed together. */
export class StageCommit {
  private readonly entries: ManifestEntry[] = [];
  private readonly destinations = new Set<string>();
  /** Staged writes still running (`track`); `commit` and `discard` wait for them. */
  private readonly writing: Promise<unknown>[] = [];
  private finished = false;

  private constructor(
    readonly root: string,
    private readonly hooks: CommitHooks,
  ) {}

  /** Start a commit. `recoverStaging` must have run first (run-algorithm step 2). */
  static async begin(root: string, hooks: CommitHooks = {}): Promise<StageCommit> {
    const staging = resolveInProject(root, STAGING_DIR);
    await mkdir(staging, { recursive: true });
    if (await exists(resolveInProject(root, COMMIT_FILE))) {
      throw new InternalError(
        'internal_error',
        `${COMMIT_FILE} exists: recover the staging area before a new commit`,
      );
    }
    return new StageCommit(root, hooks);
  }

  /**
   * The absolute staging path for `destination`, for writers that produce the file
   * themselves (the native parquet writer). The file must exist when `commit()` runs.
   */
  stagedPathFor(destination: string): string {
    if (this.finished) throw new InternalError('internal_error', 'commit already finished');
    checkDestination(destination);
    if (this.destinations.has(destination)) {
      throw new InternalError('internal_error', `${destination} is staged twice in one commit`);
    }
    this.destinations.add(destination);
    const staged = `${String(this.entries.length).padStart(4, '0')}-${destination.replaceAll('/', '__')}`;
    this.entries.push({ staged, destination });
    return resolveInProject(this.root, `${STAGING_DIR}/${staged}`);
  }

  /** Stage `data` as the new content of `destination` (written in the background: `track`). */
  async put(destination: string, data: string | Uint8Array): Promise<void> {
    this.track(writeFileSynced(this.stagedPathFor(destination), data));
  }

  /**
   * A write of a staged file that runs while the stage goes on (the native parquet writer
   * compresses on the pool while the next table's columns are built): `commit` waits for it
   * and fails with its error; until then its failure is held here, never unhandled.
   */
  track(write: Promise<unknown>): void {
    write.catch(() => undefined);
    this.writing.push(write);
  }

  /** `put` for the files commit() itself adds: written before it goes on. */
  async #putNow(destination: string, data: string | Uint8Array): Promise<void> {
    await writeFileSynced(this.stagedPathFor(destination), data);
  }

  /**
   * Whether `destination` is written without fsync and left out of checksums.json: the search
   * snapshot, derived from the tables and checked whole when read (its payload's SHA-256 and
   * the tables' it names), so a copy torn by a power loss is read as stale, never as the
   * index; INIT does not check it. On the 10 MB corpus of `bench scale` its 113 MB took
   * 0.06–0.6 s to fsync and 0.2 s to read back and hash at every build's last commit.
   */
  static #unsynced(destination: string): boolean {
    return destination === GRAPH_SNAPSHOT_FILE;
  }

  /** Project-relative destinations staged so far, in staging order. */
  get staged(): readonly string[] {
    return this.entries.map((e) => e.destination);
  }

  /**
   * Make every staged file visible at its destination, atomically as a set.
   * `deferGraphSnapshot`: leave cache/search_graph.bin as it is (a commit in the middle of a
   * cycle: the cycle's last commit derives it once; meanwhile it no longer matches the
   * recorded tables, so search reads the tables, which are always current).
   */
  async commit(options: { deferGraphSnapshot?: boolean } = {}): Promise<void> {
    if (this.finished) throw new InternalError('internal_error', 'commit already finished');
    await Promise.all(this.writing);
    const stagingDir = resolveInProject(this.root, STAGING_DIR);
    for (const entry of this.entries) {
      const path = `${stagingDir}/${entry.staged}`;
      if (!(await exists(path))) {
        this.finished = true;
        throw new InternalError('internal_error', `staged file for ${entry.destination} was never written`);
      }
    }
    const sources = options.deferGraphSnapshot
      ? new Map<string, FileChecksum>()
      : await this.#stageGraphSnapshot();
    await this.#stageChecksums(sources);
    this.finished = true;
    for (const entry of this.entries) {
      if (!StageCommit.#unsynced(entry.destination)) await fsyncFile(`${stagingDir}/${entry.staged}`);
    }
    await fsyncDir(stagingDir);
    await this.hooks.afterStep?.('files-synced');

    const manifest: Manifest = {
      version: MANIFEST_VERSION,
      created_at: new Date().toISOString(),
      files: commitOrder(this.entries),
    };
    // Set first: the rename may land and a later step of the write fail (the folder's fsync).
    // Staged files kept without a COMMIT.json are only rolled back by the next run.
    this.#pastCommitPoint = true;
    await writeFileAtomic(resolveInProject(this.root, COMMIT_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    await this.hooks.afterStep?.('manifest-written');

    await applyManifest(this.root, manifest, this.hooks);
  }

  /**
   * Stages cache/search_graph.bin (ts/index-io/graph-snapshot.ts) when this commit changes one
   * of the graph tables, or finishes a stage (stages info/state.json) while the committed
   * snapshot is missing or stale: the snapshot is always part of the commit of the tables it
   * derives from. Returns the checksums of committed source tables that checksums.json did
   * not record yet (computed here), to be recorded with this commit's.
   */
  async #stageGraphSnapshot(): Promise<Map<string, FileChecksum>> {
    const found = new Map<string, FileChecksum>();
    if (this.destinations.has(GRAPH_SNAPSHOT_FILE)) return found;
    const changesGraph = GRAPH_SNAPSHOT_SOURCES.some((f) => this.destinations.has(f));
    if (!changesGraph && !this.destinations.has(INFO_FILES.state)) return found;
    const stagingDir = resolveInProject(this.root, STAGING_DIR);
    const stagedName = new Map(this.entries.map((e) => [e.destination, e.staged]));
    const pathOf = (relative: string) => {
      const staged = stagedName.get(relative);
      return staged === undefined ? resolveInProject(this.root, relative) : `${stagingDir}/${staged}`;
    };
    const recorded = await readChecksums(this.root);
    const sources: Record<string, string> = {};
    for (const f of GRAPH_SNAPSHOT_SOURCES) {
      const path = pathOf(f);
      // No graph yet (an early stage of a first build): nothing to derive.
      if (!(await exists(path))) return found;
      let sum = stagedName.has(f) ? undefined : recorded.get(f);
      if (sum === undefined) {
        sum = await sha256File(path);
        if (!stagedName.has(f)) found.set(f, sum);
      }
      sources[f] = sum.sha256;
    }
    if (
      !changesGraph &&
      (await graphSnapshotCurrent(resolveInProject(this.root, GRAPH_SNAPSHOT_FILE), sources))
    ) {
      return found;
    }
    let bytes: Uint8Array;
    try {
      bytes = await deriveGraphSnapshot(pathOf, sources);
    } catch (e) {
      // Tables it cannot represent: search reads them directly (and reports their damage).
      if (e instanceof SnapshotUnavailable || e instanceof IndexFileError) return found;
      throw e;
    }
    await writeFile(this.stagedPathFor(GRAPH_SNAPSHOT_FILE), bytes);
    return found;
  }

  /**
   * Adds cache/checksums.json: the recorded checksums with those of this commit's cache/ files
   * and index counters and document hashes (CHECKED_INFO_FILES).
   */
  async #stageChecksums(extra: ReadonlyMap<string, FileChecksum> = new Map()): Promise<void> {
    const mine = this.entries.filter(
      (e) =>
        (e.destination.startsWith(`${CACHE_DIR}/`) &&
          e.destination !== CHECKSUMS_FILE &&
          !StageCommit.#unsynced(e.destination)) ||
        CHECKED_INFO_FILES.includes(e.destination),
    );
    if ((mine.length === 0 && extra.size === 0) || this.destinations.has(CHECKSUMS_FILE)) return;
    const checksums = await readChecksums(this.root);
    // Recorded by earlier versions; it describes nothing a check reads.
    checksums.delete(GRAPH_SNAPSHOT_FILE);
    for (const [path, sum] of extra) checksums.set(path, sum);
    const stagingDir = resolveInProject(this.root, STAGING_DIR);
    for (const e of mine) checksums.set(e.destination, await sha256File(`${stagingDir}/${e.staged}`));
    await this.#putNow(CHECKSUMS_FILE, serializeChecksums(checksums));
  }

  /**
   * COMMIT.json is written: the commit will complete (here, or by the next run's
   * `recoverStaging`), so its staged files must stay until they are moved into place.
   */
  #pastCommitPoint = false;

  /**
   * Drop everything staged (a stage that failed before committing). Past the commit point
   * (a rename that failed part way: a permission, a file in the way, another filesystem)
   * nothing is dropped: the next run rolls the commit forward once the cause is fixed. (A
   * staged file deleted here would read as "already moved" then, leaving the new tables
   * beside the old ones that were never replaced.)
   */
  async discard(): Promise<void> {
    this.finished = true;
    await Promise.allSettled(this.writing);
    if (this.#pastCommitPoint) return;
    for (const entry of this.entries) {
      await rm(resolveInProject(this.root, `${STAGING_DIR}/${entry.staged}`), { force: true });
    }
  }
}

/** Steps 3 and 4: move files into place, sync folders, delete COMMIT.json. Idempotent. */
async function applyManifest(root: string, manifest: Manifest, hooks: CommitHooks): Promise<void> {
  const stagingDir = resolveInProject(root, STAGING_DIR);
  const touched = new Set<string>();
  for (const entry of manifest.files) {
    const from = `${stagingDir}/${entry.staged}`;
    const to = resolveInProject(root, entry.destination);
    if (await exists(from)) {
      await mkdir(dirname(to), { recursive: true });
      await rename(from, to);
    } else if (!(await exists(to))) {
      // Only a rename removes a staged file, so the destination must be there.
      throw new IndexFileError(
        'index_damaged',
        `${COMMIT_FILE} lists ${entry.staged} for ${entry.destination}, but neither file exists; the index is damaged: ${rebuildHint(root)}`,
      );
    }
    touched.add(dirname(to));
    await hooks.afterStep?.('file-renamed', entry.destination);
  }
  for (const dir of touched) await fsyncDir(dir);
  await hooks.afterStep?.('renamed');
  await rm(resolveInProject(root, COMMIT_FILE));
  await fsyncDir(stagingDir);
  await hooks.afterStep?.('done');
}

function parseManifest(text: string, root: string): Manifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    raw = null;
  }
  const m = raw as Partial<Manifest> | null;
  const valid =
    m !== null &&
    typeof m === 'object' &&
    m.version === MANIFEST_VERSION &&
    Array.isArray(m.files) &&
    m.files.every(
      (f) =>
        typeof f === 'object' &&
        f !== null &&
        typeof f.staged === 'string' &&
        !f.staged.includes('/') &&
        !f.staged.startsWith('.') &&
        typeof f.destination === 'string',
    );
  if (!valid) {
    // Written by temp + rename, so a torn COMMIT.json means something other than a crash.
    throw new IndexFileError(
      'index_damaged',
      `index damaged: ${COMMIT_FILE} is unreadable; the last commit cannot be completed: ${rebuildHint(root)}`,
    );
  }
  for (const f of m.files!) checkDestination(f.destination);
  return m as Manifest;
}

export interface RecoveryResult {
  outcome: 'clean' | 'rolled-forward' | 'rolled-back';
  /** Destinations completed (roll forward) or staged names deleted (roll back). */
  files: string[];
}

/** Run-algorithm step 2: finish or discard what a previous process left in cache/.staging/. */
export async function recoverStaging(root: string, hooks: CommitHooks = {}): Promise<RecoveryResult> {
  const stagingDir = resolveInProject(root, STAGING_DIR);
  let names: string[];
  try {
    names = await readdir(stagingDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { outcome: 'clean', files: [] };
    throw error;
  }
  const manifestPath = resolveInProject(root, COMMIT_FILE);
  if (names.includes('COMMIT.json')) {
    const manifest = parseManifest(await readFile(manifestPath, 'utf8'), root);
    await applyManifest(root, manifest, hooks);
    // Anything else still there was never part of the commit (e.g. a temp file).
    for (const name of await readdir(stagingDir))
      await rm(`${stagingDir}/${name}`, { recursive: true, force: true });
    return { outcome: 'rolled-forward', files: manifest.files.map((f) => f.destination) };
  }
  for (const name of names) await rm(`${stagingDir}/${name}`, { recursive: true, force: true });
  if (names.length > 0) await fsyncDir(stagingDir);
  return { outcome: names.length > 0 ? 'rolled-back' : 'clean', files: names.sort() };
}
