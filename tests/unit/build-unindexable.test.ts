import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LOADERS_VERSION, parseUnindexable, serializeUnindexable } from '../../ts/indexing/unindexable.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('info/unindexable.json', () => {
  it('round-trips, paths in code-point order', () => {
    const record = new Map([
      ['😀.md', { hash: sha('a'), reason: 'no text (empty document)' }],
      ['\uFFFD.md', { hash: sha('b'), reason: 'not valid UTF-8' }],
      ['a/b.txt', { hash: sha('c'), reason: 'binary file (contains NUL bytes), not text' }],
    ]);
    const text = serializeUnindexable(record);
    expect(Object.keys(JSON.parse(text).files)).toEqual(['a/b.txt', '\uFFFD.md', '😀.md']);
    expect(JSON.parse(text).loaders).toBe(LOADERS_VERSION);
    expect(parseUnindexable(text)).toEqual(record);
    expect(parseUnindexable(serializeUnindexable(new Map()))).toEqual(new Map());
  });

  it('reads a damaged, foreign or older record as empty, and drops malformed entries', () => {
    expect(parseUnindexable('{ not json')).toEqual(new Map());
    expect(parseUnindexable('[]')).toEqual(new Map());
    expect(parseUnindexable('null')).toEqual(new Map());
    const entry = { hash: sha('x'), reason: 'no text (empty document)' };
    // Loaders of another version may read what these could not: everything is tried again.
    expect(
      parseUnindexable(JSON.stringify({ loaders: LOADERS_VERSION + 1, files: { 'a.md': entry } })),
    ).toEqual(new Map());
    const mixed = {
      loaders: LOADERS_VERSION,
      files: {
        'ok.md': entry,
        'short-hash.md': { hash: 'abc', reason: 'x' },
        'no-reason.md': { hash: sha('y') },
        'null.md': null,
      },
    };
    expect([...parseUnindexable(JSON.stringify(mixed)).keys()]).toEqual(['ok.md']);
  });
});
