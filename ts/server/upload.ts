/**
 * Uploads into input/: each file of a multipart body is streamed to its own temp file in
 * input/ (created with O_EXCL | O_NOFOLLOW, so nothing existing is opened, and never through a
 * symbolic link), the size limit is enforced on the bytes read, and only when every file of the
 * request has passed its checks are the temp files put in place: renamed over the name with
 * overwrite (a symbolic link of that name is replaced, not followed), else linked to it (which
 * fails if the name exists). A refused, malformed or abandoned upload leaves input/ as it was.
 */
import { randomBytes } from 'node:crypto';
import { constants, readdirSync, unlinkSync } from 'node:fs';
import { type FileHandle, link, lstat, open, rename, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Context } from 'hono';
import { fsyncDir } from '../project/atomic.js';
import { fileTypeProblem, nameProblem } from './file-names.js';
import { bodyChunks, HttpError } from './http.js';
import { multipartBoundary, readMultipart } from './multipart.js';

/** The default upload limit, per file and per request (web UI and POST /documents). */
export const DEFAULT_MAX_UPLOAD_BYTES = 20 * 1024 * 1024;

/** Multipart framing (boundaries, part headers) allowed on top of the file bytes. */
const FRAMING_BYTES = 64 * 1024;

const TEMP_PREFIX = '.noderag-upload-';

export interface UploadOptions {
  /** The folder files go to (input/). */
  inputDir: string;
  /** Extensions the config admits. */
  allowed: ReadonlySet<string>;
  /** Largest file, and largest sum of the files of one request. */
  maxBytes: number;
  /** Replace files that exist; without it an existing name is a 409. */
  overwrite: boolean;
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
  return new HttpError(409, 'file_exists', `"${name}" already exists in input/; confirm to replace it`);
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

/** Puts a checked temp file in place as `name`. */
async function commit(s: Staged, inputDir: string, overwrite: boolean): Promise<void> {
  const target = join(inputDir, s.name);
  if (overwrite) {
    // rename replaces the directory entry itself: a symbolic link there is replaced, not followed.
    await rename(s.temp, target);
    return;
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
    return;
  }
  await unlink(s.temp);
}

/**
 * Receives the files of a `multipart/form-data` request (field `file`) into input/ and returns
 * their names. Throws an HttpError (400, 409, 413, 415, 499) and leaves input/ unchanged when
 * any file is refused.
 */
export async function receiveUpload(c: Context, opts: UploadOptions): Promise<string[]> {
  const { inputDir, maxBytes, overwrite } = opts;
  const boundary = multipartBoundary(c.req.header('content-type'));
  if (boundary === null) {
    throw new HttpError(400, 'invalid_body', 'expected a multipart/form-data body with files in "file"');
  }
  const maxRequest = maxBytes + FRAMING_BYTES;
  if (Number(c.req.header('content-length') ?? '0') > maxRequest) throw tooLarge(maxBytes);
  const staged: Staged[] = [];
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
        if (staged.some((s) => s.name === name)) {
          throw new HttpError(400, 'invalid_file_name', `"${name}" is sent twice in one upload`);
        }
        await checkTarget(join(inputDir, name), name, overwrite);
        const temp = join(inputDir, `${TEMP_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
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
    for (const s of staged) await commit(s, inputDir, overwrite);
    await fsyncDir(inputDir);
    return staged.map((s) => s.name);
  } finally {
    for (const s of staged) {
      await s.handle?.close().catch(() => {});
      await rm(s.temp, { force: true });
    }
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
    const m = /^\.noderag-upload-(\d+)-[0-9a-f]+\.tmp$/.exec(name);
    if (!m || processAlive(Number(m[1]))) continue;
    try {
      unlinkSync(join(inputDir, name));
    } catch {
      // Gone already, or not ours to remove: leave it.
    }
  }
}

function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
