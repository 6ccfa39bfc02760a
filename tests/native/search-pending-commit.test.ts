/**
 * Search while a build commit is pending (issue 18 item 2): a build killed with SIGKILL in
 * the middle of a commit leaves cache/.staging/COMMIT.json and a tree where some files are
 * new and some old. Search must serve the last committed set at once (no waiting, no "a
 * build commit has been pending"), and never a mix of the two generations.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommitStep } from '../../ts/indexing/commit.js';
import { recoverStaging } from '../../ts/indexing/commit.js';
import { readSnapshot } from '../../ts/search/index-files.js';
import { LoadedIndex } from '../../ts/search/loaded-index.js';
import { curieSpec, writeSearchIndex, writeSearchProject } from '../helpers/search-index.js';

const REPO = resolve(import.meta.dirname, '..', '..');
const NEW_TEXT = 'Parisian cafe culture flourished around 1900.';

let root: string;
let next: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'noderag-pending-'));
  next = await mkdtemp(join(tmpdir(), 'noderag-pending-next-'));
  await writeSearchProject(root, curieSpec());
  // The next generation: one text changed, state at generation 2.
  const spec = curieSpec();
  await writeSearchIndex(next, {
    ...spec,
    nodes: spec.nodes.map((n) => (n.id === 't-c' ? { ...n, text: NEW_TEXT } : n)),
    state: { generation: 2, last_finished_generation: 2 },
  });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(next, { recursive: true, force: true });
});

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(relative(next, join(e.parentPath, e.name)).split('\\').join('/'));
  }
  return out;
}

/** Commits `next`'s index into `root` in a child process killed with SIGKILL after `step`. */
async function commitAndKill(step: CommitStep, detail?: string): Promise<void> {
  const files = [...(await filesUnder(join(next, 'cache'))), 'info/state.json'];
  const script = join(root, 'child.mts');
  await writeFile(
    script,
    `
    import { readFile } from 'node:fs/promises';
    import { join } from 'node:path';
    import { StageCommit } from ${JSON.stringify(join(REPO, 'ts', 'indexing', 'commit.ts'))};
    const [root, next, step, detail, files] = [process.argv[2], process.argv[3], process.argv[4], process.argv[5] || undefined, JSON.parse(process.argv[6])];
    const commit = await StageCommit.begin(root, {
      afterStep: (s, d) => { if (s === step && d === detail) process.kill(process.pid, 'SIGKILL'); },
    });
    for (const f of files) await commit.put(f, await readFile(join(next, f)));
    await commit.commit();
  `,
  );
  const child = spawnSync(
    process.execPath,
    ['--import', 'tsx', script, root, next, step, detail ?? '', JSON.stringify(files)],
    { cwd: REPO, encoding: 'utf8', timeout: 60_000 },
  );
  expect(child.signal, child.stderr).toBe('SIGKILL');
  await rm(script);
}

async function textOf(snapshotRoot: string, id: string): Promise<string | undefined> {
  const s = await readSnapshot(snapshotRoot, { useSnapshot: false });
  const ids = s.tables!.text.utf8('hash_id');
  const contexts = s.tables!.text.utf8('context');
  return contexts[ids.indexOf(id)];
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

describe('search with a commit pending after kill -9', () => {
  const cases: [CommitStep, string | undefined, 1 | 2][] = [
    ['files-synced', undefined, 1], // before the commit point: the old generation
    ['manifest-written', undefined, 2], // past it, nothing moved yet
    ['file-renamed', 'cache/text.parquet', 2], // past it, half moved
    ['file-renamed', 'cache/HNSW.bin', 2],
  ];
  for (const [step, detail, generation] of cases) {
    it(`after ${step}${detail ? ` (${detail})` : ''}: serves generation ${generation} at once, never a mix`, async () => {
      await commitAndKill(step, detail);
      const pending = await exists(join(root, 'cache', '.staging', 'COMMIT.json'));
      expect(pending).toBe(generation === 2);

      const t0 = performance.now();
      const snapshot = await readSnapshot(root);
      expect(performance.now() - t0).toBeLessThan(2000);
      expect(snapshot.state.last_finished_generation).toBe(generation);
      const want = generation === 2 ? NEW_TEXT : 'Parisian cafe culture flourished.';
      expect(await textOf(root, 't-c')).toBe(want);

      // The whole load (tables, graph, the vector index from wherever HNSW.bin is) works.
      const index = await LoadedIndex.load(root, { dim: 4, unbalanceAdjust: false });
      expect(index.generation).toBe(generation);
      expect(index.texts[index.indexOf('t-c')!]).toBe(want);
      expect(index.vectors?.size).toBeGreaterThan(0);
      index.close();

      // The next build completes the commit: the same generation, now in place.
      await recoverStaging(root);
      expect(await exists(join(root, 'cache', '.staging', 'COMMIT.json'))).toBe(false);
      expect((await readSnapshot(root)).state.last_finished_generation).toBe(generation);
      expect(await textOf(root, 't-c')).toBe(want);
      expect(JSON.parse(await readFile(join(root, 'info', 'state.json'), 'utf8')).generation).toBe(
        generation,
      );
    });
  }
});
