import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GRAPH_SNAPSHOT_SOURCES } from '../../ts/index-io/graph-snapshot.js';
import { type CommitStep, recoverStaging, StageCommit } from '../../ts/indexing/commit.js';

const REPO = resolve(import.meta.dirname, '..', '..');
const FILES = ['cache/a.parquet', 'cache/sub/b.bin', 'info/indices.json', 'info/state.json'] as const;

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'noderag-commit-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function writeOld(): Promise<void> {
  for (const f of FILES) {
    await mkdir(join(root, f, '..'), { recursive: true });
    await writeFile(join(root, f), `old ${f}`);
  }
}

async function contents(): Promise<string[]> {
  return Promise.all(FILES.map((f) => readFile(join(root, f), 'utf8').catch(() => '<missing>')));
}

const allOld = FILES.map((f) => `old ${f}`);
const allNew = FILES.map((f) => `new ${f}`);

async function stageAll(commit: StageCommit): Promise<void> {
  // Reverse order on purpose: the commit must still move info/state.json last.
  for (const f of [...FILES].reverse()) await commit.put(f, `new ${f}`);
}

describe('StageCommit', () => {
  it('deferGraphSnapshot: a mid-cycle commit of graph tables leaves search_graph.bin as it was', async () => {
    // Graph tables that are not parquet: deriving a snapshot from them would fail (and needs
    // the addon, which the unit tests refuse), so the commit succeeding shows nothing was read.
    await mkdir(join(root, 'cache'), { recursive: true });
    for (const f of GRAPH_SNAPSHOT_SOURCES) {
      await writeFile(join(root, f), `old ${f}`);
    }
    await writeFile(join(root, 'cache/search_graph.bin'), 'old snapshot');
    const commit = await StageCommit.begin(root);
    await commit.put('cache/graph_edges.parquet', 'new edges');
    await commit.put('info/state.json', '{}');
    await commit.commit({ deferGraphSnapshot: true });
    expect(await readFile(join(root, 'cache/graph_edges.parquet'), 'utf8')).toBe('new edges');
    expect(await readFile(join(root, 'cache/search_graph.bin'), 'utf8')).toBe('old snapshot');
    const sums = JSON.parse(await readFile(join(root, 'cache/checksums.json'), 'utf8')).files;
    expect(Object.keys(sums)).toEqual(['cache/graph_edges.parquet']);
  });

  it('moves every staged file into place, state.json last, and leaves staging empty', async () => {
    await writeOld();
    const order: string[] = [];
    const commit = await StageCommit.begin(root, {
      afterStep: (step, detail) => {
        order.push(detail ? `${step}:${detail}` : step);
      },
    });
    await stageAll(commit);
    // A writer that produces its own file (the native parquet writer) uses stagedPathFor.
    await writeFile(commit.stagedPathFor('cache/native.parquet'), 'native');
    expect(await contents()).toEqual(allOld);
    await commit.commit();
    expect(await contents()).toEqual(allNew);
    expect(await readFile(join(root, 'cache/native.parquet'), 'utf8')).toBe('native');
    expect(await readdir(join(root, 'cache', '.staging'))).toEqual([]);
    expect(order.at(-3)).toBe('file-renamed:info/state.json');
    expect(order.slice(0, 2)).toEqual(['files-synced', 'manifest-written']);
    expect(order.slice(-2)).toEqual(['renamed', 'done']);
  });

  it('refuses bad destinations, duplicates and unwritten staged files', async () => {
    const commit = await StageCommit.begin(root);
    for (const bad of ['../x', '/abs', 'cache/../../x', 'cache/.staging/x', 'a\\b', '']) {
      expect(() => commit.stagedPathFor(bad), bad).toThrow(/invalid commit destination/);
    }
    commit.stagedPathFor('cache/x.parquet');
    expect(() => commit.stagedPathFor('cache/x.parquet')).toThrow(/staged twice/);
    await expect(commit.commit()).rejects.toThrow(/cache\/x\.parquet was never written/);
    expect(existsSync(join(root, 'cache', '.staging', 'COMMIT.json'))).toBe(false);
  });

  it('a staged write still running is awaited by commit(); one that fails fails the commit, which changes nothing', async () => {
    await writeOld();
    const commit = await StageCommit.begin(root);
    let finish!: () => void;
    const late = new Promise<void>((done) => {
      finish = done;
    });
    const path = commit.stagedPathFor('cache/a.parquet');
    commit.track(late.then(() => writeFile(path, 'new cache/a.parquet')));
    for (const f of FILES.slice(1)) await commit.put(f, `new ${f}`);
    const committing = commit.commit();
    finish();
    await committing;
    expect(await contents()).toEqual(allNew);

    const failing = await StageCommit.begin(root);
    failing.stagedPathFor('cache/sub/b.bin');
    failing.track(Promise.reject(new Error('disk full while writing cache/sub/b.bin')));
    await failing.put('info/state.json', 'newer');
    await expect(failing.commit()).rejects.toThrow('disk full while writing cache/sub/b.bin');
    await failing.discard();
    expect(await contents()).toEqual(allNew);
    expect(existsSync(join(root, 'cache/.staging/COMMIT.json'))).toBe(false);
  });

  it('discard() removes staged files and changes nothing', async () => {
    await writeOld();
    const commit = await StageCommit.begin(root);
    await stageAll(commit);
    await commit.discard();
    expect(await contents()).toEqual(allOld);
    expect(await readdir(join(root, 'cache', '.staging'))).toEqual([]);
  });
});

describe('crash safety (simulated by a failing hook)', () => {
  const crashPoints: { step: CommitStep; detail?: string; expected: 'old' | 'new' }[] = [
    { step: 'files-synced', expected: 'old' },
    { step: 'manifest-written', expected: 'new' },
    ...FILES.map((f) => ({ step: 'file-renamed' as const, detail: f, expected: 'new' as const })),
    { step: 'renamed', expected: 'new' },
  ];

  for (const point of crashPoints) {
    it(`crash after ${point.step}${point.detail ? ` (${point.detail})` : ''} → ${point.expected} content after recovery`, async () => {
      await writeOld();
      const commit = await StageCommit.begin(root, {
        afterStep: (step, detail) => {
          if (step === point.step && detail === point.detail) throw new Error('simulated crash');
        },
      });
      await stageAll(commit);
      await expect(commit.commit()).rejects.toThrow('simulated crash');

      const result = await recoverStaging(root);
      expect(result.outcome).toBe(point.expected === 'new' ? 'rolled-forward' : 'rolled-back');
      expect(await contents()).toEqual(point.expected === 'new' ? allNew : allOld);
      expect(await readdir(join(root, 'cache', '.staging'))).toEqual([]);
      // A second recovery finds nothing to do, and a new commit can start.
      expect((await recoverStaging(root)).outcome).toBe('clean');
      await (await StageCommit.begin(root)).commit();
    });
  }

  it('a crash during roll-forward is itself rolled forward on the next start', async () => {
    await writeOld();
    const commit = await StageCommit.begin(root, {
      afterStep: (step) => {
        if (step === 'manifest-written') throw new Error('first crash');
      },
    });
    await stageAll(commit);
    await expect(commit.commit()).rejects.toThrow('first crash');
    await expect(
      recoverStaging(root, {
        afterStep: (step, detail) => {
          if (step === 'file-renamed' && detail === 'cache/sub/b.bin') throw new Error('second crash');
        },
      }),
    ).rejects.toThrow('second crash');
    expect((await recoverStaging(root)).outcome).toBe('rolled-forward');
    expect(await contents()).toEqual(allNew);
  });

  it('recovery is clean without a staging folder, and begin() refuses a pending COMMIT.json', async () => {
    expect(await recoverStaging(root)).toEqual({ outcome: 'clean', files: [] });
    await mkdir(join(root, 'cache', '.staging'), { recursive: true });
    await writeFile(
      join(root, 'cache', '.staging', 'COMMIT.json'),
      '{"version":1,"created_at":"x","files":[]}',
    );
    await expect(StageCommit.begin(root)).rejects.toThrow(/recover the staging area/);
    expect((await recoverStaging(root)).outcome).toBe('rolled-forward');
  });

  it('an unreadable COMMIT.json is reported, not guessed at', async () => {
    await mkdir(join(root, 'cache', '.staging'), { recursive: true });
    await writeFile(
      join(root, 'cache', '.staging', 'COMMIT.json'),
      '{"version":1,"files":[{"staged":"../x","destination":"y"}]}',
    );
    await expect(recoverStaging(root)).rejects.toThrow(/COMMIT\.json is unreadable/);
  });
});

describe('crash safety (real SIGKILL of a child process)', () => {
  const CHILD = `
    import { StageCommit } from ${JSON.stringify(join(REPO, 'ts', 'indexing', 'commit.ts'))};
    const [root, killStep, killDetail, files] = [process.argv[2], process.argv[3], process.argv[4] || undefined, JSON.parse(process.argv[5])];
    const commit = await StageCommit.begin(root, {
      afterStep: (step, detail) => {
        if (step === killStep && detail === killDetail) process.kill(process.pid, 'SIGKILL');
      },
    });
    for (const f of [...files].reverse()) await commit.put(f, 'new ' + f);
    await commit.commit();
  `;

  // [step, detail, files already new when the process dies, outcome after recovery]
  const points: [CommitStep, string | undefined, number, 'old' | 'new'][] = [
    ['files-synced', undefined, 0, 'old'],
    ['manifest-written', undefined, 0, 'new'],
    ['file-renamed', 'cache/sub/b.bin', 2, 'new'],
    ['renamed', undefined, 4, 'new'],
  ];

  for (const [step, detail, newBefore, expected] of points) {
    it(`kill -9 after ${step}${detail ? ` (${detail})` : ''} → ${expected}`, async () => {
      await writeOld();
      const script = join(root, 'child.mts');
      await writeFile(script, CHILD);
      const child = spawnSync(
        process.execPath,
        ['--import', 'tsx', script, root, step, detail ?? '', JSON.stringify(FILES)],
        {
          cwd: REPO,
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      expect(child.signal, child.stderr).toBe('SIGKILL');
      // The process really died mid-commit: the tree is torn until recovery runs.
      expect((await contents()).filter((c) => c.startsWith('new ')).length).toBe(newBefore);
      await recoverStaging(root);
      expect(await contents()).toEqual(expected === 'new' ? allNew : allOld);
      expect(await readdir(join(root, 'cache', '.staging'))).toEqual([]);
    });
  }
});
