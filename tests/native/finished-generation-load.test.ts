/**
 * Loading during a build cycle (docs/method.md §6.1): search reads the finished generation
 * kept in cache/finished/ (ts/index-io/finished-generation.ts), never the cycle's commits,
 * and a cycle that finishes while a load runs does not fail it.
 */
import { copyFile, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NodeConfig } from '../../ts/config/node-config.js';
import { discardFinishedGeneration, keepFinishedGeneration } from '../../ts/index-io/finished-generation.js';
import { writeFileAtomic } from '../../ts/project/atomic.js';
import { writeState } from '../../ts/project/state.js';
import { committedKey } from '../../ts/search/index-files.js';
import { LoadedIndex } from '../../ts/search/loaded-index.js';
import { NodeSearch } from '../../ts/search/node-search.js';
import { VectorIndex } from '../../ts/vector/index.js';
import { curieSpec, finishedState, writeSearchProject } from '../helpers/search-index.js';

const DIM = 4;
const options = { dim: DIM, unbalanceAdjust: false };
const loaded: LoadedIndex[] = [];
let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'noderag-finished-load-'));
  await writeSearchProject(root, curieSpec());
});
afterEach(async () => {
  vi.restoreAllMocks();
  for (const index of loaded.splice(0)) index.close();
  await rm(root, { recursive: true, force: true });
});

/** What the build does when cycle 2 starts: keep generation 1, then say a cycle runs. */
async function startCycle2(): Promise<void> {
  expect(await keepFinishedGeneration(root, 1)).toBeNull();
  await writeState(root, finishedState(DIM, { current_state: 'Graph pipeline', generation: 2 }));
}

/**
 * Cycle 2 running, its HNSW.bin replaced (same vectors, another file: the kept one is loaded
 * after the tables were read); cycle 2 finishes when the kept HNSW.bin is about to load
 * (`removeSet`: and the set is removed). Returns whether it finished and the loads' paths.
 */
async function finishWhileKeptVectorsLoad(
  removeSet: boolean,
): Promise<{ finished: () => boolean; paths: string[] }> {
  await startCycle2();
  const hnsw = join(root, 'cache', 'HNSW.bin');
  await copyFile(hnsw, `${hnsw}.new`);
  await rename(`${hnsw}.new`, hnsw);
  let finished = false;
  const paths = spyVectorLoads(async (path) => {
    if (finished || !path.includes(`${sep}finished${sep}`)) return;
    finished = true;
    await writeState(root, finishedState(DIM, { generation: 2, last_finished_generation: 2 }));
    if (removeSet) await discardFinishedGeneration(root);
  });
  return { finished: () => finished, paths };
}

async function load(): Promise<LoadedIndex> {
  const index = await LoadedIndex.load(root, options);
  loaded.push(index);
  return index;
}

/** Counts VectorIndex.load calls; `before` runs ahead of each with its path. */
function spyVectorLoads(before: (path: string) => Promise<void> = async () => {}): string[] {
  const paths: string[] = [];
  const real = VectorIndex.load.bind(VectorIndex);
  vi.spyOn(VectorIndex, 'load').mockImplementation(async (path, o) => {
    paths.push(path);
    await before(path);
    return real(path, o);
  });
  return paths;
}

describe('loading while a build cycle runs', () => {
  it('a search file the finished generation did not have is not read from the cycle', async () => {
    await startCycle2();
    // The cycle's first commits wrote a graph delta for tables the loader does not read.
    await writeFileAtomic(join(root, 'cache', 'graph_delta.json'), '{ "generation": 2, "nodes": [');
    const index = await load();
    expect(index.generation).toBe(1);
    expect(index.nodeCount).toBe(23);
  });

  it('loads HNSW.bin once when the kept file is the one in cache/ (a hard link)', async () => {
    await startCycle2();
    const paths = spyVectorLoads();
    await load();
    expect(paths).toHaveLength(1);
  });

  it('a cycle that finishes (removing the kept generation) while HNSW.bin loads: the load reads the new files', async () => {
    const { finished, paths } = await finishWhileKeptVectorsLoad(true);
    const index = await load();
    expect(finished()).toBe(true);
    expect(index.generation).toBe(2);
    expect(index.nodeCount).toBe(23);
    expect(paths.some((p) => p.includes(`${sep}finished${sep}`))).toBe(true);
  });

  it('the read key is the kept set during a cycle: stage commits do not change it, the cycle finishing does', async () => {
    await startCycle2();
    const during = await committedKey(root);
    expect(during).toMatch(/^finished 1:/);
    await writeState(root, finishedState(DIM, { current_state: 'Summary pipeline', generation: 2 }));
    expect(await committedKey(root)).toBe(during);
    await writeState(root, finishedState(DIM, { generation: 2, last_finished_generation: 2 }));
    expect(await committedKey(root)).not.toBe(during);
  });

  it('a cycle that finishes while the kept HNSW.bin loads (and loads fine): the load is of the new generation', async () => {
    const { finished } = await finishWhileKeptVectorsLoad(false);
    const index = await load();
    expect(finished()).toBe(true);
    expect(index.generation).toBe(2);
  });

  it('an engine that watches loads a generation it never saw finished, kept while the next cycle runs', async () => {
    const search = new NodeSearch(NodeConfig.fromMainFolder(root, { env: {} }), {
      watch: true,
      watchIntervalMs: 0,
    });
    try {
      expect((await search.status()).generation).toBe(1);
      // Cycle 2 finished and cycle 3 started before the engine looked again.
      await writeState(root, finishedState(DIM, { generation: 2, last_finished_generation: 2 }));
      expect(await keepFinishedGeneration(root, 2)).toBeNull();
      await writeState(
        root,
        finishedState(DIM, { current_state: 'Text pipeline', generation: 3, last_finished_generation: 2 }),
      );
      await search.status();
      await search.reloaded();
      expect((await search.status()).generation).toBe(2);
    } finally {
      search.close();
    }
  });
});
