import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BuildLockedError } from '../../ts/indexing/errors.js';
import { acquireBuildLock, lockIsLive } from '../../ts/indexing/lock.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'noderag-lock-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const lockPath = () => join(root, 'info', 'build.lock');

/** A pid that is certainly dead: a child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => child.on('exit', r));
  return child.pid!;
}

describe('build.lock', () => {
  it('holds pid and start time, refuses a second build, and is removed on release', async () => {
    const lock = await acquireBuildLock(root);
    const content = JSON.parse(await readFile(lockPath(), 'utf8'));
    expect(content.pid).toBe(process.pid);
    expect(Date.parse(content.started_at)).not.toBeNaN();
    await expect(acquireBuildLock(root)).rejects.toThrow(`another build (pid ${process.pid}) is running`);
    await expect(acquireBuildLock(root)).rejects.toBeInstanceOf(BuildLockedError);
    await lock.release();
    await lock.release();
    expect(await readdir(join(root, 'info'))).toEqual([]);
    const again = await acquireBuildLock(root);
    await again.release();
  });

  it('refuses while another live process holds it', async () => {
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      await mkdir(join(root, 'info'));
      await writeFile(
        lockPath(),
        JSON.stringify({ pid: sleeper.pid, started_at: new Date(Date.now() + 1000).toISOString() }),
      );
      await expect(acquireBuildLock(root)).rejects.toThrow(`another build (pid ${sleeper.pid}) is running`);
      // The refused attempt leaves the holder's lock and no temp files.
      expect(await readdir(join(root, 'info'))).toEqual(['build.lock']);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('replaces a stale lock whose pid is dead', async () => {
    const pid = await deadPid();
    await mkdir(join(root, 'info'));
    await writeFile(lockPath(), JSON.stringify({ pid, started_at: new Date().toISOString() }));
    const lock = await acquireBuildLock(root);
    expect(JSON.parse(await readFile(lockPath(), 'utf8')).pid).toBe(process.pid);
    await lock.release();
  });

  it('replaces an unparsable lock and a lock from our own pid that this process does not hold', async () => {
    await mkdir(join(root, 'info'));
    await writeFile(lockPath(), 'garbage');
    (await acquireBuildLock(root)).release();
    await writeFile(lockPath(), JSON.stringify({ pid: process.pid, started_at: '2020-01-01T00:00:00Z' }));
    const lock = await acquireBuildLock(root);
    await lock.release();
  });

  it.runIf(process.platform === 'linux')(
    'treats a live pid that started after the lock as reused (stale)',
    () => {
      // Our own process started long after 2020: the pid cannot be the lock's owner.
      expect(lockIsLive({ pid: process.ppid, started_at: '2020-01-01T00:00:00Z' }, '/x/build.lock')).toBe(
        false,
      );
      expect(lockIsLive({ pid: process.ppid, started_at: new Date().toISOString() }, '/x/build.lock')).toBe(
        true,
      );
    },
  );
});
