import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  parseDocumentHashes,
  parseIndices,
  readDocumentHashes,
  readIndices,
  serializeDocumentHashes,
  serializeIndices,
  withCycleDocuments,
} from '../../ts/indexing/info-files.js';
import { emptyCounters } from '../../ts/model/types.js';

const H = (c: string) => c.repeat(64);

describe('indices.json', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'noderag-info-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('is all zeros before the first commit and round-trips in §2.2 order', async () => {
    expect(await readIndices(root)).toEqual(emptyCounters());
    const counters = {
      ...emptyCounters(),
      document_index: 3,
      text_unit_index: 10,
      high_level_element_index: 2,
    };
    const text = serializeIndices(counters);
    expect(text).toBe(
      '{\n  "document_index": 3,\n  "text_unit_index": 10,\n  "semantic_unit_index": 0,\n  "entity_index": 0,\n' +
        '  "relation_index": 0,\n  "attribute_index": 0,\n  "community_summary_index": 0,\n  "high_level_element_index": 2\n}\n',
    );
    await mkdir(join(root, 'info'));
    await writeFile(join(root, 'info', 'indices.json'), text);
    expect(await readIndices(root)).toEqual(counters);
  });

  it('refuses a missing or negative counter, naming it', () => {
    const { entity_index: _, ...partial } = { ...emptyCounters(), relation_index: -1 };
    expect(() => parseIndices(JSON.stringify(partial))).toThrow(
      'info/indices.json is invalid: entity_index: expected an integer ≥ 0, got nothing; relation_index: expected an integer ≥ 0, got -1',
    );
  });
});

describe('document_hash.json', () => {
  it('sorts keys in code-point order with indent 2, integer-like keys included', () => {
    const text = serializeDocumentHashes({
      'b.txt': H('b'),
      '😀.md': H('c'),
      '\uFFFD.md': H('d'),
      '10': H('e'),
      'a/z.txt': H('a'),
    });
    expect(text).toBe(
      `{\n  "10": "${H('e')}",\n  "a/z.txt": "${H('a')}",\n  "b.txt": "${H('b')}",\n  "\uFFFD.md": "${H('d')}",\n  "😀.md": "${H('c')}"\n}\n`,
    );
    expect(serializeDocumentHashes({})).toBe('{}\n');
    expect(parseDocumentHashes(text)).toEqual({
      'b.txt': H('b'),
      '😀.md': H('c'),
      '\uFFFD.md': H('d'),
      '10': H('e'),
      'a/z.txt': H('a'),
    });
  });

  it('keeps paths like __proto__ as plain keys', () => {
    const parsed = parseDocumentHashes(`{"__proto__": "${H('a')}", "constructor": "${H('b')}"}`);
    expect(Object.keys(parsed)).toEqual(['__proto__', 'constructor']);
    expect(serializeDocumentHashes(parsed)).toContain('"__proto__"');
  });

  it('rejects values that are not SHA-256 hex', () => {
    expect(() => parseDocumentHashes('{"a.txt": "ABC"}')).toThrow(
      'info/document_hash.json is invalid: "a.txt": expected a lowercase SHA-256 hex string, got "ABC"',
    );
    expect(() => parseDocumentHashes('[]')).toThrow(/must hold a JSON object/);
  });

  it('is empty before the first commit', async () => {
    const root = await mkdtemp(join(tmpdir(), 'noderag-info-'));
    try {
      expect(Object.keys(await readDocumentHashes(root))).toEqual([]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('withCycleDocuments adds new paths and moves renamed ones', () => {
    const before = { 'old.txt': H('a'), 'kept.txt': H('b') };
    const after = withCycleDocuments(
      before,
      [{ path: 'copy.txt', hash: H('b') }],
      [{ path: 'new/place.txt', from: 'old.txt' }],
    );
    expect(after).toEqual({ 'kept.txt': H('b'), 'copy.txt': H('b'), 'new/place.txt': H('a') });
    expect(before).toEqual({ 'old.txt': H('a'), 'kept.txt': H('b') });
    expect(() => withCycleDocuments(before, [], [{ path: 'x', from: 'missing' }])).toThrow(
      /missing is not in the indexed map/,
    );
  });
});
