/**
 * Durable file replacement: write a temp file beside the target, fsync it, rename it over
 * the target, fsync the directory. A reader (or a crash) sees the old file or the new one,
 * never a torn one (docs/method.md §4.4).
 */

import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { processAlive } from './process-alive.js';

/** fsync a directory so a rename or unlink in it survives power loss. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch (error) {
    // Some filesystems (and non-Linux platforms) refuse fsync on directories; the rename
    // itself is still atomic there, so durability is the best we can get.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'EPERM' && code !== 'EBADF') throw error;
  } finally {
    await handle.close();
  }
}

/** fsync an existing file's contents (used on files written by other code, e.g. the native store). */
export async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A unique temp name in the same directory as `path`, so the final rename stays on one filesystem. */
export function tempPathBeside(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/**
 * Removes the temp files `tempPathBeside(path)` names that processes no longer running left
 * (a Ctrl-C or a kill between the write and the rename). Best effort.
 */
export async function removeDeadTempsBeside(path: string): Promise<void> {
  const prefix = `.${basename(path)}.`;
  let names: string[];
  try {
    names = await readdir(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const m = /^(\d+)\.[0-9a-f]+\.tmp$/.exec(name.slice(prefix.length));
    if (m && !processAlive(Number(m[1])))
      await rm(join(dirname(path), name), { force: true }).catch(() => {});
  }
}

/** Write `data` to a new file and fsync it (the file must not be visible to readers yet). */
export async function writeFileSynced(path: string, data: string | Uint8Array): Promise<void> {
  const handle = await open(path, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Replace `path` atomically with `data` (temp + fsync + rename + directory fsync). */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const temp = tempPathBeside(path);
  try {
    await writeFileSynced(temp, data);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await fsyncDir(dir);
}
