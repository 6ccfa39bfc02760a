/**
 * Sampled betweenness with pivots chosen by id (docs/method.md §3.5): above 5,000 nodes the
 * 500 pivots are the ids of smallest seeded hash, so renumbering the nodes (another id order,
 * as a sync's merged graph numbers them) moves each value with its id, and a small change of
 * the graph leaves most values where they were.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../ts/errors.js';
import { betweenness, type GraphEdges } from '../../ts/graph/index.js';

const N = 6000;
const id = (i: number) => createHash('sha256').update(`node ${i}`).digest('hex');

/** A random sparse graph over nodes 0..n-1 (xorshift, fixed seed), each node linked to the previous one too. */
function randomEdges(n: number): [number, number][] {
  let x = 0x9e3779b9;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  const pairs: [number, number][] = [];
  for (let v = 1; v < n; v++) {
    pairs.push([v - 1, v]);
    pairs.push([v, Math.floor(next() * v)]);
  }
  return pairs;
}

function numbered(pairs: [number, number][], order: number[]): GraphEdges {
  // order[j] = the original node placed at index j.
  const at = new Map(order.map((v, j) => [v, j]));
  return {
    nodeCount: order.length,
    src: Uint32Array.from(pairs.map((p) => at.get(p[0])!)),
    dst: Uint32Array.from(pairs.map((p) => at.get(p[1])!)),
  };
}

describe('betweenness with pivots by id', () => {
  const pairs = randomEdges(N);
  const byId = [...Array(N).keys()].sort((a, b) => (id(a) < id(b) ? -1 : 1));

  it('gives each id the same value whatever the node order', async () => {
    const reversed = [...byId].reverse();
    const a = await betweenness(numbered(pairs, byId), 42, byId.map(id));
    const b = await betweenness(numbered(pairs, reversed), 42, reversed.map(id));
    for (let j = 0; j < N; j++) {
      const k = N - 1 - j; // the same node in the reversed numbering
      expect(Math.abs(a[j]! - b[k]!)).toBeLessThanOrEqual(1e-9 * Math.max(1, a[j]!));
    }
    // By position (no ids) the two numberings draw different samples.
    const c = await betweenness(numbered(pairs, byId));
    const d = await betweenness(numbered(pairs, reversed));
    let moved = 0;
    for (let j = 0; j < N; j++) if (Math.abs(c[j]! - d[N - 1 - j]!) > 1e-9 * Math.max(1, c[j]!)) moved++;
    expect(moved).toBeGreaterThan(N / 2);
  });

  it('refuses ids that are not one per node', async () => {
    await expect(betweenness(numbered(pairs, byId), 42, ['a', 'b'])).rejects.toThrow(InvalidArgumentError);
    await expect(betweenness(numbered(pairs, byId), 42, ['a', 'b'])).rejects.toThrow(/one per node/);
  });
});
