/**
 * The naive top-k baseline of ts/eval on hand-made chunks: exact ranking (the native exact
 * search) and the token-budget fill (the native token counts).
 */
import { describe, expect, it } from 'vitest';
import { type Chunk, fillBudget, rankChunks, topK } from '../../ts/eval/index.js';
import { countTokens } from '../../ts/text/index.js';

describe('naive baseline', () => {
  const chunk = (id: string, text: string, v: number[]): Chunk => ({
    id,
    text,
    document: `${id}.md`,
    vector: Float32Array.from(v),
  });
  const chunks = [
    chunk('a', 'Alpha paragraph about the observatory founder Margaret Okafor and her catalogue.', [1, 0]),
    chunk('b', 'Beta paragraph about the railway that reached Eastmere in 1884.', [0, 1]),
    chunk('c', 'Gamma paragraph, halfway between.', [0.7, 0.7]),
  ];

  it('ranks by exact distance, fills whole chunks, cuts the last one at the budget', () => {
    const ranking = rankChunks(chunks, Float32Array.from([1, 0.1]), 'cosine');
    expect(ranking).toEqual([0, 2, 1]);
    const two = topK(chunks, ranking, 2);
    const budget = countTokens(two.context) + 5;
    const filled = fillBudget(chunks, ranking, budget);
    expect(countTokens(filled.context)).toBeLessThanOrEqual(budget);
    expect(filled.items.map((i) => [i.id, i.partial])).toEqual([
      ['a', false],
      ['c', false],
      ['b', true],
    ]);
    expect(filled.items[2]!.text.length).toBeLessThan(chunks[1]!.text.length);
  });
});
