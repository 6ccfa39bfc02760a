/**
 * ts/index-io/string-columns.ts: the string column of search_graph.bin (offsets + UTF-8, rows
 * decoded on demand) and its id table (hash id → dense index without a Map).
 */
import { describe, expect, it } from 'vitest';
import {
  buildIdTable,
  encodeStrings,
  firstNonPrintable,
  idSlotCount,
  lookupId,
  StringColumn,
} from '../../ts/index-io/string-columns.js';

describe('string column', () => {
  it('gives back every string, multi-byte and empty ones included', () => {
    const strings = ['Marie Curie', '', 'Zoë in Łódź', '居里夫人', 'emoji 🧪 test', 'a\nb'];
    const encoded = encodeStrings(strings)!;
    expect(encoded.offsets[strings.length]).toBe(encoded.bytes.byteLength);
    const column = new StringColumn(encoded);
    expect(column.length).toBe(strings.length);
    expect(Array.from({ length: column.length }, (_, i) => column.at(i))).toEqual(strings);
    expect(column.at(-1)).toBeUndefined();
    expect(column.at(strings.length)).toBeUndefined();
  });

  it('compares an ASCII row in place', () => {
    const column = new StringColumn(encodeStrings(['abc', 'Ã©', 'é'])!);
    expect(column.asciiEquals(0, 'abc')).toBe(true);
    expect(column.asciiEquals(0, 'abd')).toBe(false);
    expect(column.asciiEquals(0, 'ab')).toBe(false);
    // UTF-8 of 'é' is C3 A9: neither its Latin-1 reading nor 'é' itself is an ASCII match.
    expect(column.asciiEquals(2, 'Ã©')).toBe(false);
    expect(column.asciiEquals(2, 'é')).toBe(false);
  });

  it('reads in place from a section of a larger buffer', () => {
    const encoded = encodeStrings(['x', 'yz'])!;
    const shared = new Uint8Array(new SharedArrayBuffer(64));
    shared.set(encoded.bytes, 40);
    const column = new StringColumn({ offsets: encoded.offsets, bytes: shared.subarray(40, 43) });
    expect([column.at(0), column.at(1)]).toEqual(['x', 'yz']);
  });
});

describe('id table', () => {
  const find = (table: Uint32Array, ids: readonly string[], id: string) =>
    lookupId(table, id, (node) => ids[node] === id);
  const hex = (i: number) => (i * 2654435761).toString(16).padStart(64, '0');

  it('finds every id at its index and no unknown id', () => {
    const ids = Array.from({ length: 5000 }, (_, i) => hex(i + 1)).sort();
    const table = buildIdTable(encodeStrings(ids)!);
    expect(table.length).toBe(idSlotCount(ids.length));
    expect(table.length).toBeGreaterThanOrEqual(2 * ids.length);
    ids.forEach((id, i) => {
      expect(find(table, ids, id)).toBe(i);
    });
    for (const unknown of ['', 'x', hex(0), `${ids[0]}0`]) expect(find(table, ids, unknown)).toBeUndefined();
  });

  it('handles an empty graph and never answers with another id when damaged', () => {
    expect(find(buildIdTable(encodeStrings([])!), [], 'a')).toBeUndefined();
    const ids = ['a', 'b', 'c'];
    // A full table pointing everywhere at 'a': 'b' is missed, not mistaken for 'a'.
    const damaged = new Uint32Array(idSlotCount(ids.length)).fill(1);
    expect(find(damaged, ids, 'b')).toBeUndefined();
    expect(find(damaged, ids, 'a')).toBe(0);
  });

  it('names the first id that is empty or not printable ASCII', () => {
    const at = (ids: string[]) => firstNonPrintable(encodeStrings(ids)!);
    expect(at(['a1', 'b~', '!z'])).toBe(-1);
    expect(at([])).toBe(-1);
    expect(at(['a', '', 'c'])).toBe(1);
    expect(at(['a', 'b', 'c d'])).toBe(2);
    expect(at(['a', 'é'])).toBe(1);
    expect(at(['\x7f'])).toBe(0);
  });
});
