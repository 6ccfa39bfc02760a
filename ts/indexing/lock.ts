/**
 * info/build.lock: one build per project at a time (docs/method.md §4.2 step 1).
 *
 * The lock is created whole and atomically: its content goes to a temp file that is then
 * hard-linked to build.lock (link fails if the name exists), so no reader ever sees a
 * half-written lock. A lock whose pid is dead, or whose pid now belongs to a process that
 * started after the lock was taken (pid reuse, common in containers), is stale and replaced.
 */

import { readFileSync } from 'node:fs';
import { link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { tempPathBeside } from '../project/atomic.js';
import { INFO_FILES, resolveInProject } from '../project/layout.js';
import { processAlive } from '../project/process-alive.js';
import { BuildLockedError } from './errors.js';

interface LockInfo {
  pid: number;
  /** ISO-8601 UTC time the lock was taken. */
  started_at: string;
}

export interface BuildLock {
  readonly path: string;
  readonly info: LockInfo;
  /** Remove the lock if it is still ours. Safe to call twice. */
  release(): Promise<void>;
}

/** Locks this process holds, so a stale lock carrying our own pid is told apart from ours. */
const held = new Set<string>();

function parseLock(text: string): LockInfo | null {
  try {
    const o = JSON.parse(text) as Partial<LockInfo>;
    if (
      typeof o.pid === 'number' &&
      Number.isInteger(o.pid) &&
      o.pid > 0 &&
      typeof o.started_at === 'string'
    ) {
      return { pid: o.pid, started_at: o.started_at };
    }
  } catch {
    // fall through: unparsable
  }
  return null;
}

/**
 * Start time of a process in ms since the epoch, from /proc (Linux), or null elsewhere.
 * /proc/<pid>/stat field 22 is the start in clock ticks after boot (USER_HZ, 100 on Linux).
 */
function processStartMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const startTicks = Number(fields[19]);
    const btime = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'));
    if (!btime || !Number.isFinite(startTicks)) return null;
    return Number(btime[1]) * 1000 + (startTicks / 100) * 1000;
  } catch {
    return null;
  }
}

/** Whether the process that wrote `info` still holds the lock. */
export function lockIsLive(info: LockInfo, lockPath: string): boolean {
  if (info.pid === process.pid) return held.has(lockPath);
  if (!processAlive(info.pid)) return false;
  const lockedAt = Date.parse(info.started_at);
  const startedAt = processStartMs(info.pid);
  // A process always starts before it takes its lock; allow for clock granularity.
  if (startedAt !== null && Number.isFinite(lockedAt) && startedAt > lockedAt + 2000) return false;
  return true;
}

/**
 * The live holder of info/build.lock (another process's build, e.g. one started in a
 * terminal), or null: for a UI that must not change the config under a running build.
 */
export async function buildLockHolder(root: string): Promise<LockInfo | null> {
  const path = resolveInProject(root, INFO_FILES.lock);
  const holder = parseLock((await readFile(path, 'utf8').catch(() => '')) ?? '');
  return holder !== null && lockIsLive(holder, path) ? holder : null;
}

/** Take info/build.lock or throw BuildLockedError naming the holder's pid. */
export async function acquireBuildLock(root: string, now: () => Date = () => new Date()): Promise<BuildLock> {
  const path = resolveInProject(root, INFO_FILES.lock);
  await mkdir(dirname(path), { recursive: true });
  const info: LockInfo = { pid: process.pid, started_at: now().toISOString() };
  const content = `${JSON.stringify(info)}\n`;

  for (let attempt = 0; attempt < 5; attempt++) {
    const temp = tempPathBeside(path);
    try {
      await writeFile(temp, content);
    } catch (error) {
      // A full disk leaves the file created empty: gone with the failure, not left behind.
      await rm(temp, { force: true });
      throw error;
    }
    try {
      await link(temp, path);
      held.add(path);
      let released = false;
      return {
        path,
        info,
        async release() {
          if (released) return;
          released = true;
          held.delete(path);
          const current = await readFile(path, 'utf8').catch(() => null);
          if (current !== null && current === content) await rm(path, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      await rm(temp, { force: true });
    }

    const text = await readFile(path, 'utf8').catch(() => null);
    if (text === null) continue; // released meanwhile: try again
    const holder = parseLock(text);
    // An unparsable lock cannot come from a crash (it is linked whole): treat it as stale.
    if (holder !== null && lockIsLive(holder, path)) throw new BuildLockedError(holder.pid, path);
    await removeStaleLock(path, text);
  }
  throw new BuildLockedError(parseLock((await readFile(path, 'utf8').catch(() => '')) ?? '')?.pid ?? 0, path);
}

/**
 * Remove a stale lock without removing a fresh one another process just took: move it
 * aside, check it is the one judged stale, and put it back if it is not.
 */
async function removeStaleLock(path: string, staleText: string): Promise<void> {
  const aside = tempPathBeside(path);
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = await readFile(aside, 'utf8').catch(() => null);
  if (moved !== null && moved !== staleText) {
    // We took a live lock by mistake: restore it unless someone locked meanwhile.
    await link(aside, path).catch(() => undefined);
  }
  await rm(aside, { force: true });
}
