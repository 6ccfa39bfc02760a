/**
 * cache/checksums.json: the SHA-256 and size of every file a commit put in place
 * (ts/indexing/commit.ts records them), and the checks against them: a build's INIT
 * (ts/indexing/init.ts) checks the whole index, `vis` the tables it draws.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { IndexFileError } from '../errors.js';
import { isFile } from '../project/fs-probe.js';
import { CACHE_DIR, CACHE_FILES, COMMIT_FILE, INFO_FILES, resolveInProject } from '../project/layout.js';
import { rebuildHint } from '../project/state.js';

/** SHA-256 and size of every committed file under cache/, by project-relative path. */
export const CHECKSUMS_FILE = `${CACHE_DIR}/checksums.json`;
const CHECKSUMS_VERSION = 1;

/**
 * The info/ files whose checksum is recorded too: a missing or older one would reissue
 * numbers already in the tables (indices.json) or index documents again (document_hash.json).
 * state.json changes outside commits; unindexable.json only saves work when it is right.
 */
export const CHECKED_INFO_FILES: readonly string[] = [INFO_FILES.indices, INFO_FILES.documentHash];

export interface FileChecksum {
  sha256: string;
  size: number;
}

/** Hex SHA-256 and size of a file, streamed. */
export async function sha256File(path: string): Promise<FileChecksum> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

/**
 * The checksums recorded by the commits so far (empty when none were: an index written by
 * an older version, or an unreadable checksums.json, which then only loses the check).
 */
export async function readChecksums(root: string): Promise<Map<string, FileChecksum>> {
  return parseChecksums(await readChecksumsText(root)) ?? new Map();
}

/** The text of checksums.json, '' when there is none (or it cannot be read). */
function readChecksumsText(root: string): Promise<string> {
  return readFile(resolveInProject(root, CHECKSUMS_FILE), 'utf8').catch(() => '');
}

/**
 * The recorded checksums for the checks of a committed index (INIT, vis, search), refusing a
 * checksums.json that cannot be what a commit wrote, which would otherwise turn every check
 * off in silence:
 * - one that is there but unreadable, empty, not JSON or of another shape (a commit writes it
 *   whole, by rename);
 * - a missing one beside cache/search_graph.bin: the versions that write the snapshot record
 *   checksums with every commit (an index of an older version has neither).
 * An empty map means an older index: the checks fall back to probing the files.
 */
export async function readChecksumsForCheck(root: string): Promise<Map<string, FileChecksum>> {
  const path = resolveInProject(root, CHECKSUMS_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      if (await isFile(resolveInProject(root, CACHE_FILES.searchGraph))) {
        throw checksumsDamaged(root, 'missing, but the index was written by commits that record it');
      }
      return new Map();
    }
    throw checksumsDamaged(root, `unreadable (${code ?? (e as Error).message})`);
  }
  const parsed = parseChecksums(text);
  if (parsed === null) throw checksumsDamaged(root, text.trim() === '' ? 'empty' : 'not a checksums file');
  return parsed;
}

function checksumsDamaged(root: string, reason: string): IndexFileError {
  return new IndexFileError(
    'index_damaged',
    `index damaged: ${CHECKSUMS_FILE} is ${reason}; without it the index files cannot be checked: ${rebuildHint(root)}`,
  );
}

/** The recorded checksums, or null when `text` is not a checksums file of this version. */
function parseChecksums(text: string): Map<string, FileChecksum> | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  const out = new Map<string, FileChecksum>();
  const files = (raw as { version?: unknown; files?: unknown } | null)?.files;
  if ((raw as { version?: unknown })?.version !== CHECKSUMS_VERSION || typeof files !== 'object' || !files) {
    return null;
  }
  for (const [path, value] of Object.entries(files as Record<string, unknown>)) {
    const v = value as Partial<FileChecksum> | null;
    if (v && typeof v.sha256 === 'string' && /^[0-9a-f]{64}$/.test(v.sha256) && typeof v.size === 'number') {
      out.set(path, { sha256: v.sha256, size: v.size });
    }
  }
  return out;
}

export function serializeChecksums(checksums: ReadonlyMap<string, FileChecksum>): string {
  const files: Record<string, FileChecksum> = {};
  for (const path of [...checksums.keys()].sort()) files[path] = checksums.get(path)!;
  return `${JSON.stringify({ version: CHECKSUMS_VERSION, files }, null, 2)}\n`;
}

/** Why the file at `abs` differs from its recorded checksum `want` ("missing", "damaged (…)"), or null. */
export async function checksumProblem(abs: string, want: FileChecksum | undefined): Promise<string | null> {
  if (!(await isFile(abs))) return 'missing';
  if (!want) return null;
  // The commit that wrote it recorded its checksum: any changed byte shows.
  const got = await sha256File(abs);
  if (got.size !== want.size) return `damaged (${got.size} bytes, ${want.size} when it was committed)`;
  if (got.sha256 !== want.sha256)
    return 'damaged (its SHA-256 differs from the one recorded when it was committed)';
  return null;
}

/** Checks of a reader racing a build's commits before a mismatch counts as damage. */
const VERIFY_ATTEMPTS = 5;

/**
 * For readers that do not go through a build's INIT (vis): throws an IndexFileError when one
 * of `files` is missing or differs from what its commit recorded. Files without a recorded
 * checksum (an index of an older version) are only required to exist; `optional` files
 * (written only by some builds) only when recorded.
 *
 * A build may commit meanwhile (checksums.json and the files renamed into place one by
 * one): a mismatch is reported only when checksums.json is the same before and after the
 * check, else the check starts again; a commit still pending is named as such.
 */
export async function verifyCommittedFiles(
  root: string,
  files: readonly string[],
  optional: readonly string[] = [],
): Promise<void> {
  let problem: { relative: string; reason: string } | null = null;
  for (let attempt = 0; attempt < VERIFY_ATTEMPTS; attempt++) {
    const before = await readChecksumsText(root);
    const recorded = parseChecksums(before) ?? (await readChecksumsForCheck(root));
    problem = null;
    for (const relative of [...files, ...optional.filter((f) => recorded.has(f))]) {
      const reason = await checksumProblem(resolveInProject(root, relative), recorded.get(relative));
      if (reason !== null) {
        problem = { relative, reason };
        break;
      }
    }
    if (problem === null) return;
    if (!(await isFile(resolveInProject(root, COMMIT_FILE))) && (await readChecksumsText(root)) === before)
      break;
    await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
  }
  const { relative, reason } = problem!;
  // A build applying its commit renames files one by one: not damage, a moment to wait.
  if (await isFile(resolveInProject(root, COMMIT_FILE))) {
    throw new IndexFileError(
      'index_busy',
      `a commit of a new index generation is pending in ${root} (${relative} is being replaced): run this again when the build has finished (a build that was killed completes it when run again)`,
    );
  }
  throw new IndexFileError(
    'index_damaged',
    `index damaged: ${relative} is ${reason}; restore it or ${rebuildHint(root)}`,
  );
}
