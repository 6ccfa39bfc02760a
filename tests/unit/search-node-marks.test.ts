import { describe, expect, it } from 'vitest';
import { NodeMarks, NodeValues, retrievalScratch } from '../../ts/search/node-marks.js';

describe('NodeMarks (the per-index sets of a retrieval)', () => {
  it('is a set of node indexes that clear() empties', () => {
    const m = new NodeMarks(5);
    expect(m.add(3)).toBe(true);
    expect(m.add(3)).toBe(false);
    expect(m.add(0)).toBe(true);
    expect([0, 1, 2, 3, 4].filter((i) => m.has(i))).toEqual([0, 3]);
    m.clear();
    expect([0, 1, 2, 3, 4].filter((i) => m.has(i))).toEqual([]);
    expect(m.add(3)).toBe(true);
    expect(m.has(3)).toBe(true);
  });

  it('many clears never bring back an old member', () => {
    const m = new NodeMarks(4);
    for (let round = 0; round < 1000; round++) {
      m.clear();
      expect(m.has(round % 4)).toBe(false);
      m.add(round % 4);
    }
  });

  it('NodeValues answers like a Map<number, number> of the nodes set since clear()', () => {
    const v = new NodeValues(6);
    v.set(2, 0.5);
    v.set(4, 0);
    v.set(2, 0.75);
    expect([0, 1, 2, 3, 4, 5].map((i) => v.get(i))).toEqual([
      undefined,
      undefined,
      0.75,
      undefined,
      0,
      undefined,
    ]);
    v.clear();
    expect(v.get(2)).toBeUndefined();
    expect(v.get(4)).toBeUndefined();
    v.set(5, 1.5);
    expect(v.get(5)).toBe(1.5);
  });

  it('one scratch per index object, made once', () => {
    const a = {};
    const b = {};
    expect(retrievalScratch(a, 10)).toBe(retrievalScratch(a, 10));
    expect(retrievalScratch(a, 10)).not.toBe(retrievalScratch(b, 10));
    expect(retrievalScratch(b, 10).links.length).toBe(10);
  });
});
