import { describe, expect, it } from 'vitest';
import { NodeMarks, retrievalScratch } from '../../ts/search/node-marks.js';

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

  it('one scratch per index object, made once', () => {
    const a = {};
    const b = {};
    expect(retrievalScratch(a, 10)).toBe(retrievalScratch(a, 10));
    expect(retrievalScratch(a, 10)).not.toBe(retrievalScratch(b, 10));
    expect(retrievalScratch(b, 10).links.length).toBe(10);
  });
});
