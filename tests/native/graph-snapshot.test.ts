/**
 * cache/search_graph.bin (ts/index-io/graph-snapshot.ts): derived in the commit that finishes
 * a stage (not fsynced, not in checksums.json: it names the checksums of its source tables and
 * of its payload), used by search when it matches the committed search tables, and ignored
 * (the tables read instead) when it is missing, damaged or stale. The loaded index is the same
 * either way.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readChecksums } from '../../ts/index-io/checksums.js';
import { decodeGraphSnapshot, GRAPH_SNAPSHOT_SOURCES } from '../../ts/index-io/graph-snapshot.js';
import { StageCommit } from '../../ts/indexing/commit.js';
import { CACHE_FILES, INFO_FILES, resolveInProject } from '../../ts/project/layout.js';
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
  const index = await LoadedIndex.load(root, { dim: curieSpec().dim, unbalanceAdjust: true });
  try {
    return {
      graphUsed: index.timings.snapshot,
      shape: {
        ids: [...index.ids],
        // Every id found by its own lookup, an unknown one by none.
        lookups: [...index.ids.map((id) => index.indexOf(id)), index.indexOf('no-such-id')],
        types: [...index.types],
        texts: index.ids.map((_, i) => index.textOf(i)),
        chunkOf: [...index.chunkOf],
        docOf: [...index.docOf],
        documents: [...index.documents],
        attributeOf: [...index.attributeOf],
        elementOf: [...index.elementOf],
        labelNode: [...index.labelNode],
        activeVectors: index.activeVectors,
        offsets: [...index.adjacency.offsets],
        // Neighbour sets per node (the order within a node follows the edge order).
        neighbours: index.ids.map((_, i) => [...index.neighbors(i)].sort((a, b) => a - b)),
        edges: index.graph.edgeCount,
        names: index.matcher.nameCount,
        matches: index.matcher.find(['Marie Curie', 'Paris', 'radium']),
      },
    };
  } finally {
    index.close();
  }
}

describe('search_graph.bin', () => {
  it('is derived by the commit, names its source tables as checksums.json records them, and loads the same index as the tables', async () => {
    const fromTables = await loaded();
    expect(fromTables.graphUsed).toBe(false);
    await commitState();
    expect(existsSync(resolveInProject(root, CACHE_FILES.searchGraph))).toBe(true);
    const sums = await readChecksums(root);
    // Derived and checked whole when read: not recorded, nor fsynced (commit.ts #unsynced).
    expect(sums.has(CACHE_FILES.searchGraph)).toBe(false);
    for (const f of GRAPH_SNAPSHOT_SOURCES) {
      expect(sums.get(f)?.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    const fromSnapshot = await loaded();
    expect(fromSnapshot.graphUsed).toBe(true);
    expect(fromSnapshot.shape).toEqual(fromTables.shape);
  });

  it('a damaged snapshot is ignored, and the next stage commit writes it again', async () => {
    await commitState();
    const good = await loaded();
    expect(good.graphUsed).toBe(true);
    const path = resolveInProject(root, CACHE_FILES.searchGraph);
    const whole = await readFile(path);
    // The format version (another version is not read), a byte of the id table (last
    // section: only the checksum catches it), of a node text (found by its content), and a
    // truncated file.
    const text = whole.indexOf('Marie Curie');
    expect(text).toBeGreaterThan(0);
    for (const at of [4, whole.length - 3, text]) {
      const bytes = Buffer.from(whole);
      bytes[at]! ^= 0x01;
      await writeFile(path, bytes);
      const damaged = await loaded();
      expect(damaged.graphUsed).toBe(false);
      expect(damaged.shape).toEqual(good.shape);
    }
    await writeFile(path, whole.subarray(0, whole.length - 8));
    expect((await loaded()).graphUsed).toBe(false);
    await commitState();
    expect((await loaded()).graphUsed).toBe(true);
  });

  it('a snapshot of other tables (stale) is ignored', async () => {
    await commitState();
    const before = await loaded();
    // A table as another commit recorded it: the snapshot no longer matches.
    const checksumsPath = resolveInProject(root, 'cache/checksums.json');
    const original = await readFile(checksumsPath, 'utf8');
    for (const table of [CACHE_FILES.graphEdges, 'cache/semantic_units.parquet']) {
      const checksums = JSON.parse(original);
      checksums.files[table].sha256 = '0'.repeat(64);
      await writeFile(checksumsPath, JSON.stringify(checksums));
      const stale = await loaded();
      expect(stale.graphUsed).toBe(false);
      expect(stale.shape).toEqual(before.shape);
    }
  });

  it('maps stored type codes by the names in its header', async () => {
    await commitState();
    const whole = await readFile(resolveInProject(root, CACHE_FILES.searchGraph));
    const expected = Object.fromEntries(
      [...(await readChecksums(root))].map(([file, sum]) => [file, sum.sha256]),
    );
    const original = decodeGraphSnapshot(Buffer.from(whole), expected)!;
    expect(original.verify()).toBe(true);
    // The same file as a writer with 'text' and 'entity' swapped in its type list would write
    // it: header names swapped (same length, so sections stay where they are), codes swapped.
    const headerLength = whole.readUInt32LE(8);
    const header = JSON.parse(whole.toString('utf8', 12, 12 + headerLength));
    const [a, b] = [header.types.indexOf('text'), header.types.indexOf('entity')];
    [header.types[a], header.types[b]] = [header.types[b], header.types[a]];
    const start = ((12 + headerLength + 7) >> 3) << 3;
    const idSection = ((header.idBytes + 7) >> 3) << 3;
    const swapped = Buffer.from(whole);
    for (let i = 0; i < header.n; i++) {
      const at = start + idSection + i;
      swapped[at] = swapped[at] === a ? b : swapped[at] === b ? a : swapped[at]!;
    }
    header.payloadSha256 = createHash('sha256').update(swapped.subarray(start)).digest('hex');
    swapped.write(JSON.stringify(header), 12, 'utf8');
    expect(swapped.readUInt32LE(8)).toBe(headerLength);
    const remapped = decodeGraphSnapshot(swapped, expected)!;
    expect(remapped.verify()).toBe(true);
    expect([...remapped.types]).toEqual([...original.types]);
    expect(new Set(original.types).has(a)).toBe(true);
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
