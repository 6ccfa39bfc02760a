import { describe, expect, it } from 'vitest';
import { type ContextItem, contextTokens, formatContext } from '../../ts/search/context.js';
import { countTokens } from '../../ts/text/tokens.js';

describe('contextTokens: the token count of the context from per-item counts', () => {
  // Texts that end and begin in every way a line can: punctuation, spaces (trimmed), line
  // breaks inside, a `/` or a space after an inner break, digits, quotes, non-ASCII, nothing.
  const texts = [
    'Nick Hexum (born April 12, 1970) is an American singer.',
    '  padded text with spaces  ',
    'Title\n\nBody after a blank line.',
    'inner break\n/slash line\n indented line',
    '"Freak Out" was co-written.',
    '1999',
    "it's 3.5 km/h…",
    '東京 — naïve café',
    '',
    'ends with a break\n',
    'A, HAS, B',
  ];
  const types = ['high_level_element', 'attribute', 'semantic_unit', 'text', 'relationship'] as const;
  const countOf = (items: ContextItem[]) =>
    contextTokens(items, (i, last) => countTokens(` ${items[i]!.text.trim()}${last ? '\n\n' : '\n'}`));

  it('equals counting formatContext, for sections of one and of many items', () => {
    for (let start = 0; start < texts.length; start++) {
      const items: ContextItem[] = [];
      // Sections of 1, 2, 3… items, in the fixed order; up to 12 items in one for two-digit numbers.
      types.forEach((type, t) => {
        for (let k = 0; k <= t * 3; k++) {
          items.push({ id: `${type}-${k}`, type, text: texts[(start + k + t) % texts.length]! });
        }
      });
      expect(countOf(items)).toBe(countTokens(formatContext(items)));
    }
    expect(countOf([])).toBe(0);
    const one: ContextItem[] = [{ id: 'x', type: 'text', text: 'only' }];
    expect(countOf(one)).toBe(countTokens(formatContext(one)));
  });

  it('asks each item for the line it ends: the last of its section ends with the blank line', () => {
    const items: ContextItem[] = [
      { id: 'a', type: 'attribute', text: 'a' },
      { id: 'b', type: 'attribute', text: 'b' },
      { id: 'c', type: 'text', text: 'c' },
    ];
    const asked: [number, boolean][] = [];
    contextTokens(items, (i, last) => {
      asked.push([i, last]);
      return 0;
    });
    expect(asked).toEqual([
      [0, false],
      [1, true],
      [2, true],
    ]);
  });
});
