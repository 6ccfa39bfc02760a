import { describe, expect, it } from 'vitest';
import { orderTiesByNode } from '../../ts/search/retrieve.js';

/** Deterministic pseudo-random integers in 0..n-1. */
function ints(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % n;
  };
}

describe('orderTiesByNode (vector hits in (distance, node) order)', () => {
  it('orders the nodes of equal distances by node and moves nothing across distances', () => {
    const nodes = [9, 4, 7, 3, 8, 1, 5];
    const distances = [0.1, 0.2, 0.2, 0.2, 0.3, 0.4, 0.4];
    orderTiesByNode(nodes, distances);
    expect(nodes).toEqual([9, 3, 4, 7, 8, 1, 5]);
  });

  it('gives what sorting (distance, node) pairs gives, on hits sorted by distance only', () => {
    const next = ints(7);
    for (let round = 0; round < 200; round++) {
      const n = next(60);
      const pairs = Array.from({ length: n }, () => ({ node: next(1000), distance: next(6) / 4 }));
      pairs.sort((a, b) => a.distance - b.distance); // stable: ties keep an arbitrary order
      const nodes = pairs.map((p) => p.node);
      const distances = pairs.map((p) => p.distance);
      orderTiesByNode(nodes, distances);
      const expected = [...pairs].sort((a, b) => a.distance - b.distance || a.node - b.node);
      expect(nodes).toEqual(expected.map((p) => p.node));
    }
  });
});
