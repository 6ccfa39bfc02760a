/**
 * cache/search_graph.bin (ts/index-io/graph-snapshot.ts): derived in the commit that finishes
 * a stage, recorded in checksums.json, used by search when it matches the committed graph
 * tables, and ignored (the tables read instead) when it is missing, damaged or stale. The
 * loaded index is the same either way.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readChecksums, StageCommit } from '../../ts/indexing/commit.js';
import { CACHE_FILES, INFO_FILES, resolveInProject } from '../../ts/project/layout.js';
import { readSnapshot } from '../../ts/search/index-files.js';
import { LoadedIndex } from '../../ts/search/loaded-index.js';
import { curieSpec, writeSearchProject } from '../helpers/search-index.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'noderag-graph-snapshot-'));
  await writeSearchProject(root, curieSpec());
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** One commit of state.json as it is: a stage's last commit, which derives the snapshot. */
async function commitState(): Promise<void> {
  const commit = await StageCommit.begin(root);
  await commit.put(INFO_FILES.state, await readFile(resolveInProject(root, INFO_FILES.state)));
  await commit.commit();
}

async function loaded(): Promise<{ graphUsed: boolean; shape: unknown }> {
  const snapshot = await readSnapshot(root);
  const index = await LoadedIndex.load(root, { dim: curieSpec().dim, unbalanceAdjust: true });
  try {
    return {
      graphUsed: snapshot.graph !== null,
      shape: {
        ids: [...index.ids],
        types: [...index.types],
        texts: [...index.texts],
        chunkOf: [...index.chunkOf],
        docOf: [...index.docOf],
        offsets: [...index.adjacency.offsets],
        // Neighbour sets per node (the order within a node follows the edge order).
        neighbours: index.ids.map((_, i) => [...index.neighbors(i)].sort((a, b) => a - b)),
        edges: index.graph.edgeCount,
      },
    };
  } finally {
    index.close();
  }
}

describe('search_graph.bin', () => {
  it('is derived by the commit, recorded in checksums.json, and loads the same index as the tables', async () => {
    const fromTables = await loaded();
    expect(fromTables.graphUsed).toBe(false);
    await commitState();
    const sums = await readChecksums(root);
    expect(sums.get(CACHE_FILES.searchGraph)?.size).toBeGreaterThan(0);
    for (const f of [CACHE_FILES.graphNodes, CACHE_FILES.graphEdges, CACHE_FILES.hnswGraph]) {
      expect(sums.get(f)?.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    const fromSnapshot = await loaded();
    expect(fromSnapshot.graphUsed).toBe(true);
    expect(fromSnapshot.shape).toEqual(fromTables.shape);
  });

  it('a damaged snapshot is ignored, and the next stage commit writes it again', async () => {
    await commitState();
    const good = await loaded();
    const path = resolveInProject(root, CACHE_FILES.searchGraph);
    const bytes = await readFile(path);
    bytes[bytes.length - 3]! ^= 0xff;
    await writeFile(path, bytes);
    const damaged = await loaded();
    expect(damaged.graphUsed).toBe(false);
    expect(damaged.shape).toEqual(good.shape);
    await commitState();
    expect((await loaded()).graphUsed).toBe(true);
  });

  it('a snapshot of other graph tables (stale) is ignored', async () => {
    await commitState();
    const before = await loaded();
    // The graph tables as another commit recorded them: the snapshot no longer matches.
    const checksumsPath = resolveInProject(root, 'cache/checksums.json');
    const checksums = JSON.parse(await readFile(checksumsPath, 'utf8'));
    checksums.files[CACHE_FILES.graphEdges].sha256 = '0'.repeat(64);
    await writeFile(checksumsPath, JSON.stringify(checksums));
    const stale = await loaded();
    expect(stale.graphUsed).toBe(false);
    expect(stale.shape).toEqual(before.shape);
  });

  it('a missing snapshot falls back to the tables', async () => {
    await commitState();
    const before = await loaded();
    await rm(resolveInProject(root, CACHE_FILES.searchGraph));
    const after = await loaded();
    expect(after.graphUsed).toBe(false);
    expect(after.shape).toEqual(before.shape);
  });
});
