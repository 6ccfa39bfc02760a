/**
 * The HNSW stage's similarity edges (ts/indexing/stages/similarity-edges.ts) against the
 * plain definition: every layer-0 link between two active labels of different nodes, as an
 * undirected node pair, once, sorted by (source, target) as strings.
 */
import { describe, expect, it } from 'vitest';
import type { IdMapRow } from '../../ts/index-io/tables.js';
import { similarityEdges } from '../../ts/indexing/stages/similarity-edges.js';

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

function reference(idMap: IdMapRow[], src: Uint32Array, dst: Uint32Array) {
  const seen = new Map<string, { source: string; target: string }>();
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

describe('similarityEdges', () => {
  it('equals the plain definition, in file order, on either path', () => {
    for (const seed of [1, 2, 3]) {
      const { idMap, src, dst } = fixture(seed, 300, 5000);
      const want = reference(idMap, src, dst);
      expect(want.length).toBeGreaterThan(100);
      expect(similarityEdges(idMap, src, dst)).toEqual(want);
      // The path for indexes too large to pack a pair into one number.
      expect(similarityEdges(idMap, src, dst, 10)).toEqual(want);
    }
  });

  it('gives nothing for an empty index or links between retired labels only', () => {
    expect(similarityEdges([], new Uint32Array(0), new Uint32Array(0))).toEqual([]);
    const idMap: IdMapRow[] = [
      { label: 0, node: 'a', type: 'text', retired: true, generation: 1 },
      { label: 1, node: 'b', type: 'text', retired: false, generation: 1 },
    ];
    expect(similarityEdges(idMap, Uint32Array.of(0, 1), Uint32Array.of(1, 0))).toEqual([]);
  });
});
