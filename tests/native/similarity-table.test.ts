/**
 * hnsw_graph.parquet as the HNSW stage writes it (crates/noderag_store/src/similarity.rs via
 * ts/store writeSimilarityTable) against the plain definition: every layer-0 link between two
 * active labels of different nodes, as an undirected node pair, once, sorted by (source,
 * target) as JS compares strings; and the same bytes as the table writer gives those rows.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TableReader } from '../../ts/index-io/columns.js';
import { writeTableFile } from '../../ts/index-io/parquet.js';
import { type IdMapRow, type SimilarityEdge, TABLES } from '../../ts/index-io/tables.js';
import { readTable, writeSimilarityTable } from '../../ts/store/index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'noderag-similarity-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** An id map with retired labels and nodes that lost their first label, and random links. */
function fixture(seed: number, n: number, links: number) {
  const rand = seeded(seed);
  const idMap: IdMapRow[] = [];
  for (let label = 0; label < n; label++) {
    const reuse = label > 0 && rand() < 0.05;
    // A regenerated node: its old label retired, the same id on a new label.
    if (reuse) idMap[Math.floor(rand() * label)]!.retired = true;
    const node = reuse
      ? idMap.find((r) => r.retired && !idMap.some((q) => q.node === r.node && !q.retired))?.node
      : undefined;
    idMap.push({
      label,
      node: node ?? Math.floor(rand() * 2 ** 48).toString(16),
      type: 'text',
      retired: rand() < 0.05,
      generation: 1,
    });
  }
  const src = new Uint32Array(links);
  const dst = new Uint32Array(links);
  for (let i = 0; i < links; i++) {
    src[i] = Math.floor(rand() * n);
    // Some self-links, some links out of range (ignored), many repeated pairs both ways.
    dst[i] = rand() < 0.02 ? src[i]! : rand() < 0.01 ? n + 3 : Math.floor(rand() * Math.min(n, 40));
  }
  return { idMap, src, dst };
}

function reference(idMap: IdMapRow[], src: Uint32Array, dst: Uint32Array): SimilarityEdge[] {
  const seen = new Map<string, SimilarityEdge>();
  for (let i = 0; i < src.length; i++) {
    const a = idMap[src[i]!];
    const b = idMap[dst[i]!];
    if (!a || !b || a.retired || b.retired || a.node === b.node) continue;
    const [source, target] = a.node < b.node ? [a.node, b.node] : [b.node, a.node];
    seen.set(`${source}|${target}`, { source, target });
  }
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return [...seen.values()].sort((p, q) => cmp(p.source, q.source) || cmp(p.target, q.target));
}

/** Writes the table natively; its rows as read back, and the file's bytes. */
async function written(idMap: IdMapRow[], src: Uint32Array, dst: Uint32Array) {
  const path = join(dir, 'native.parquet');
  const count = await writeSimilarityTable(
    path,
    idMap.map((r) => r.node),
    Uint8Array.from(idMap, (r) => (r.retired ? 1 : 0)),
    src,
    dst,
  );
  const t = new TableReader('hnsw_graph.parquet', await readTable(path));
  const sources = t.utf8('source');
  const targets = t.utf8('target');
  return {
    count,
    rows: sources.map((source, i) => ({ source, target: targets[i]! })),
    bytes: await readFile(path),
  };
}

describe('similarity table', () => {
  it('equals the plain definition, in file order, with the bytes of the table writer', async () => {
    for (const seed of [1, 2, 3]) {
      const { idMap, src, dst } = fixture(seed, 300, 5000);
      const want = reference(idMap, src, dst);
      expect(want.length).toBeGreaterThan(100);
      const got = await written(idMap, src, dst);
      expect(got.rows).toEqual(want);
      expect(got.count).toBe(want.length);
      const path = join(dir, 'ts.parquet');
      await writeTableFile(path, TABLES.hnswGraph.write(want));
      expect(got.bytes.equals(await readFile(path))).toBe(true);
    }
  });

  it('orders ids as JS does (UTF-16 code units), not by their UTF-8 bytes', async () => {
    const idMap: IdMapRow[] = ['\u{E000}', '\u{1F600}', 'a'].map((node, label) => ({
      label,
      node,
      type: 'text',
      retired: false,
      generation: 1,
    }));
    const got = await written(idMap, Uint32Array.of(0, 0, 1), Uint32Array.of(1, 2, 2));
    expect(got.rows).toEqual(reference(idMap, Uint32Array.of(0, 0, 1), Uint32Array.of(1, 2, 2)));
    expect(got.rows[0]).toEqual({ source: 'a', target: '\u{1F600}' });
  });

  it('gives an empty table for an empty index or links between retired labels only', async () => {
    expect((await written([], new Uint32Array(0), new Uint32Array(0))).rows).toEqual([]);
    const idMap: IdMapRow[] = [
      { label: 0, node: 'a', type: 'text', retired: true, generation: 1 },
      { label: 1, node: 'b', type: 'text', retired: false, generation: 1 },
    ];
    const got = await written(idMap, Uint32Array.of(0, 1), Uint32Array.of(1, 0));
    expect(got.rows).toEqual([]);
    expect(got.count).toBe(0);
  });
});
