/**
 * Uploads into input/: each file of a multipart body is streamed to its own temp file in
 * input/ (created with O_EXCL | O_NOFOLLOW, so nothing existing is opened, and never through a
 * symbolic link), the size limit is enforced on the bytes read, and only when every file of the
 * request has passed its checks are the temp files put in place: renamed over the name with
 * overwrite (a symbolic link of that name is replaced, not followed), else linked to it (which
 * fails if the name exists). A refused, malformed or abandoned upload leaves input/ as it was;
 * so does one whose placing fails part way (a name taken meanwhile by another request): the
 * files it placed are taken back and the ones it replaced restored.
 */

import { randomBytes } from 'node:crypto';
import { constants, readdirSync, unlinkSync } from 'node:fs';
import { type FileHandle, link, lstat, open, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context } from 'hono';
import { fsyncDir } from '../project/atomic.js';
import { processAlive } from '../project/process-alive.js';
import { fileTypeProblem, nameProblem } from './file-names.js';
import { bodyChunks, HttpError } from './http.js';
import { multipartBoundary, readMultipart } from './multipart.js';

/** The default upload limit, per file and per request (web UI and POST /documents). */
export const DEFAULT_MAX_UPLOAD_BYTES = 20 * 1024 * 1024;

/** Multipart framing (boundaries, part headers) allowed on top of the file bytes. */
const FRAMING_BYTES = 64 * 1024;

const TEMP_PREFIX = '.noderag-upload-';

/**
 * Files per request: each costs an open, an fsync and a link, and within the byte limit a
 * body of empty parts could otherwise hold hundreds of thousands (20,000 took 16 s).
 */
export const MAX_FILES = 10_000;

export interface UploadOptions {
  /** The folder files go to (input/). */
  inputDir: string;
  /** Extensions the config admits. */
  allowed: ReadonlySet<string>;
  /** Largest file, and largest sum of the files of one request. */
  maxBytes: number;
  /** Replace files that exist; without it an existing name is a 409. */
  overwrite: boolean;
  /** Files per request (default MAX_FILES). */
  maxFiles?: number;
}

interface Staged {
  name: string;
  temp: string;
  handle: FileHandle | null;
}

export function tooLarge(max: number, name?: string): HttpError {
  return new HttpError(
    413,
    'file_too_large',
    `${name ? `"${name}" is` : 'the upload is'} larger than ${byteSize(max)}`,
  );
}

/** "20 MiB", "1.5 MiB", "64 KiB", "100 bytes". */
function byteSize(n: number): string {
  const unit = (size: number, name: string) => `${Number((n / size).toFixed(1))} ${name}`;
  if (n >= 1024 * 1024) return unit(1024 * 1024, 'MiB');
  if (n >= 1024) return unit(1024, 'KiB');
  return `${n} bytes`;
}

function exists(name: string): HttpError {
  return new HttpError(
    409,
    'file_exists',
    `"${name}" already exists in input/; send it again with ?overwrite=1 to replace it`,
  );
}

/** What is at `path`, without following a symbolic link: null when nothing. */
async function entryAt(path: string): Promise<'dir' | 'other' | null> {
  try {
    return (await lstat(path)).isDirectory() ? 'dir' : 'other';
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** Refuses a name that exists (without overwrite) or is a folder (always). */
async function checkTarget(path: string, name: string, overwrite: boolean): Promise<void> {
  const entry = await entryAt(path);
  if (entry === 'dir') throw new HttpError(409, 'file_exists', `"${name}" is a folder in input/`);
  if (entry !== null && !overwrite) throw exists(name);
}

/** A file this request put in place, and how to take it back. */
interface Placed {
  target: string;
  /** Inode of the file placed: only that file is removed again. */
  ino: number;
  /** With overwrite: a second link to the entry it replaced (restored by an undo). */
  backup: string | null;
}

function tempName(inputDir: string, ext: 'tmp' | 'bak'): string {
  return join(inputDir, `${TEMP_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}.${ext}`);
}

/** Puts a checked temp file in place as `name`. */
async function commit(s: Staged, inputDir: string, overwrite: boolean): Promise<Placed> {
  const target = join(inputDir, s.name);
  const { ino } = await lstat(s.temp);
  if (overwrite) {
    // The entry replaced keeps a second name until the whole request is in place, so an
    // upload that fails later can put it back (link does not follow a symbolic link).
    let backup: string | null = tempName(inputDir, 'bak');
    try {
      await link(target, backup);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      backup = null;
    }
    // rename replaces the directory entry itself: a symbolic link there is replaced, not followed.
    try {
      await rename(s.temp, target);
    } catch (e) {
      if (backup) await unlink(backup).catch(() => {});
      throw e;
    }
    return { target, ino, backup };
  }
  try {
    // link fails with EEXIST when the name exists, even as a dangling symbolic link.
    await link(s.temp, target);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw exists(s.name);
    // File systems without hard links: check, then rename (a narrow race, never a followed link).
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw e;
    await checkTarget(target, s.name, false);
    await rename(s.temp, target);
    return { target, ino, backup: null };
  }
  await unlink(s.temp);
  return { target, ino, backup: null };
}

/** Takes back a placed file: the replaced entry returns, or the new name goes (if still ours). */
async function undo(p: Placed): Promise<void> {
  if (p.backup) {
    await rename(p.backup, p.target);
    return;
  }
  const now = await lstat(p.target).catch(() => null);
  if (now?.ino === p.ino) await unlink(p.target);
}

/**
 * Places every staged file, or none: when one cannot be placed (a name taken meanwhile by
 * another request, a file-system error), those already placed are taken back.
 */
async function commitAll(staged: readonly Staged[], inputDir: string, overwrite: boolean): Promise<void> {
  const placed: Placed[] = [];
  try {
    for (const s of staged) placed.push(await commit(s, inputDir, overwrite));
  } catch (e) {
    for (const p of placed.reverse()) await undo(p).catch(() => {});
    throw e;
  }
  for (const p of placed) if (p.backup) await unlink(p.backup).catch(() => {});
}

/**
 * Receives the files of a `multipart/form-data` request (field `file`) into input/ and returns
 * their names. Throws an HttpError (400, 409, 413, 415, 499) and leaves input/ unchanged when
 * any file is refused.
 */
export async function receiveUpload(c: Context, opts: UploadOptions): Promise<string[]> {
  const { inputDir, maxBytes, overwrite, maxFiles = MAX_FILES } = opts;
  const boundary = multipartBoundary(c.req.header('content-type'));
  if (boundary === null) {
    throw new HttpError(400, 'invalid_body', 'expected a multipart/form-data body with files in "file"');
  }
  await requireInputFolder(inputDir, 'to upload into');
  const maxRequest = maxBytes + FRAMING_BYTES;
  if (Number(c.req.header('content-length') ?? '0') > maxRequest) throw tooLarge(maxBytes);
  const staged: Staged[] = [];
  const names = new Set<string>();
  let total = 0;
  try {
    await readMultipart(
      bodyChunks(c, maxRequest, () => tooLarge(maxBytes)),
      boundary,
      async (part) => {
        if (part.name !== 'file' || part.filename === undefined) return null;
        const name = part.filename;
        const bad = nameProblem(name);
        if (bad) throw new HttpError(400, 'invalid_file_name', bad);
        const wrongType = fileTypeProblem(name, opts.allowed);
        if (wrongType) throw new HttpError(415, 'unsupported_file_type', wrongType);
        if (names.has(name)) {
          throw new HttpError(400, 'invalid_file_name', `"${name}" is sent twice in one upload`);
        }
        if (names.size >= maxFiles) {
          throw new HttpError(
            413,
            'too_many_files',
            `an upload holds at most ${maxFiles.toLocaleString('en-US')} files; send the rest in another`,
          );
        }
        names.add(name);
        await checkTarget(join(inputDir, name), name, overwrite);
        const temp = tempName(inputDir, 'tmp');
        const s: Staged = { name, temp, handle: null };
        s.handle = await open(
          temp,
          constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
          0o644,
        );
        staged.push(s);
        let size = 0;
        return {
          write: async (chunk) => {
            size += chunk.byteLength;
            total += chunk.byteLength;
            if (size > maxBytes) throw tooLarge(maxBytes, name);
            // The limit holds for the request too: its files together.
            if (total > maxBytes) throw tooLarge(maxBytes);
            await s.handle!.write(chunk);
          },
          end: async () => {
            await s.handle!.sync();
            await s.handle!.close();
            s.handle = null;
          },
        };
      },
    );
    if (staged.length === 0) throw new HttpError(400, 'no_files', 'no files in the "file" field');
    // Every file is in; check the names again (they may have appeared meanwhile), then place them.
    for (const s of staged) await checkTarget(join(inputDir, s.name), s.name, overwrite);
    await commitAll(staged, inputDir, overwrite);
    await fsyncDir(inputDir);
    return staged.map((s) => s.name);
  } finally {
    for (const s of staged) {
      await s.handle?.close().catch(() => {});
      await rm(s.temp, { force: true });
    }
  }
}

/**
 * 409 `no_input_folder` unless `inputDir` is a folder (stat: input/ itself may be a link to
 * the documents' folder). `purpose`: "to upload into", "to build from".
 */
export async function requireInputFolder(inputDir: string, purpose: string): Promise<void> {
  if (!(await stat(inputDir).catch(() => null))?.isDirectory()) {
    throw new HttpError(
      409,
      'no_input_folder',
      `the project has no input/ folder ${purpose}; create it (a build reads its documents there)`,
    );
  }
}

/** Removes temp files that uploads of dead processes left in input/ (a kill during an upload). */
export function removeStaleUploads(inputDir: string): void {
  let names: string[];
  try {
    names = readdirSync(inputDir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^\.noderag-upload-(\d+)-[0-9a-f]+\.(?:tmp|bak)$/.exec(name);
    if (!m || processAlive(Number(m[1]))) continue;
    try {
      unlinkSync(join(inputDir, name));
    } catch {
      // Gone already, or not ours to remove: leave it.
    }
  }
}
