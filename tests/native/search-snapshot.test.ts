/**
 * cache/search_graph.bin derived natively (crates/noderag_store/src/snapshot.rs) against the
 * TypeScript derivation from the tables (ts/index-io/search-arrays.ts, graph-snapshot.ts): the
 * same bytes for the same tables, and, for every inconsistency the TypeScript path reports as
 * damage, no snapshot (SnapshotUnavailable) from the native one either.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IndexFileError, InternalError } from '../../ts/errors.js';
import { deriveGraphSnapshot, SnapshotUnavailable } from '../../ts/index-io/graph-snapshot.js';
import { CACHE_FILES, resolveInProject } from '../../ts/project/layout.js';
import { readTable, type Table, writeTable } from '../../ts/store/index.js';
import { curieSpec, writeSearchProject } from '../helpers/search-index.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'noderag-search-snapshot-'));
  await writeSearchProject(root, curieSpec());
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const SOURCES = { 'cache/graph_nodes.parquet': 'a'.repeat(64) };
const pathOf = (relative: string) => resolveInProject(root, relative);

async function both(): Promise<{ native: Buffer | Error; tables: Buffer | Error }> {
  const derive = (via: 'native' | 'tables') =>
    deriveGraphSnapshot(pathOf, SOURCES, { via }).then(
      (b) => Buffer.from(b),
      (e: Error) => e,
    );
  return { native: await derive('native'), tables: await derive('tables') };
}

/** Rewrites one table: `edit` gets every column and returns the table to write. */
async function rewrite(file: string, edit: (t: Table) => Table): Promise<void> {
  const path = resolveInProject(root, file);
  await writeTable(path, edit(await readTable(path)));
}

const column = (t: Table, name: string) => t.columns.find((c) => c.name === name)!;

/** The rows of `t` in the order `order` gives (row indexes); columns the snapshot does not read are dropped. */
function reorder(t: Table, order: number[]): Table {
  const columns = t.columns.flatMap((c): Table['columns'] => {
    if (c.kind === 'utf8') return [{ ...c, strings: order.map((i) => c.strings[i]!) }];
    if (c.kind === 'int64') return [{ ...c, float64: Float64Array.from(order, (i) => c.float64[i]!) }];
    if (c.kind === 'int32') return [{ ...c, int32: Int32Array.from(order, (i) => c.int32[i]!) }];
    if (c.kind === 'boolean') return [{ ...c, uint8: Uint8Array.from(order, (i) => c.uint8[i]!) }];
    return [];
  });
  return { numRows: order.length, columns };
}

describe('native search snapshot', () => {
  it('is byte for byte the TypeScript derivation', async () => {
    const { native, tables } = await both();
    expect(native).toBeInstanceOf(Buffer);
    expect((native as Buffer).equals(tables as Buffer)).toBe(true);
  });

  it('falls back to the TypeScript path when the native code fails (a panic), not on damage', async () => {
    const { tables } = await both();
    const panics = async () => {
      throw new InternalError('NATIVE_PANIC', 'native code panicked: test');
    };
    const derived = await deriveGraphSnapshot(pathOf, SOURCES, { nativePayload: panics });
    expect(Buffer.from(derived).equals(tables as Buffer)).toBe(true);
    const damaged = async () => {
      throw new IndexFileError('NATIVE_CORRUPT_FILE', 'graph_edges.parquet: row 0 has weight 0');
    };
    await expect(deriveGraphSnapshot(pathOf, SOURCES, { nativePayload: damaged })).rejects.toBeInstanceOf(
      SnapshotUnavailable,
    );
  });

  it('sorts graph nodes stored out of order as the TypeScript path does', async () => {
    await rewrite(CACHE_FILES.graphNodes, (t) => reorder(t, [...Array(t.numRows).keys()].reverse()));
    const { native, tables } = await both();
    expect(native).toBeInstanceOf(Buffer);
    expect((native as Buffer).equals(tables as Buffer)).toBe(true);
  });

  const damage: [string, string, (t: Table) => Table][] = [
    [
      'a non-positive edge weight',
      CACHE_FILES.graphEdges,
      (t) => {
        const w = column(t, 'weight') as { float64: Float64Array };
        w.float64[0] = 0;
        return t;
      },
    ],
    ['a node listed twice', CACHE_FILES.graphNodes, (t) => reorder(t, [0, ...Array(t.numRows).keys()])],
    [
      'a node without its row',
      'cache/semantic_units.parquet',
      (t) => reorder(t, [...Array(t.numRows).keys()].slice(1)),
    ],
    [
      'an id that is not printable ASCII',
      CACHE_FILES.graphNodes,
      (t) => {
        const ids = column(t, 'id') as { strings: string[] };
        ids.strings[0] = `${ids.strings[0]} x`;
        return t;
      },
    ],
    [
      'a similarity edge to no node',
      'cache/hnsw_graph.parquet',
      (t) => {
        const ends = column(t, 'target') as { strings: string[] };
        ends.strings[0] = 'no-such-node';
        return t;
      },
    ],
    [
      'an attribute of no entity',
      'cache/attributes.parquet',
      (t) => {
        const node = column(t, 'node') as { strings: string[] };
        node.strings[0] = 't-a';
        return t;
      },
    ],
    ['labels out of order', CACHE_FILES.idMap, (t) => reorder(t, [...Array(t.numRows).keys()].reverse())],
    [
      'an int32 column where int64 is declared',
      'cache/documents.parquet',
      (t) => ({
        numRows: t.numRows,
        columns: t.columns.map((c) =>
          c.name === 'doc_id' && c.kind === 'int64'
            ? { name: 'doc_id', kind: 'int32' as const, int32: Int32Array.from(c.float64) }
            : c,
        ),
      }),
    ],
  ];
  for (const [what, file, edit] of damage) {
    it(`gives no snapshot for ${what}, like the TypeScript path`, async () => {
      await rewrite(file, edit);
      const { native, tables } = await both();
      expect(tables).toBeInstanceOf(SnapshotUnavailable);
      expect(native).toBeInstanceOf(SnapshotUnavailable);
    });
  }
});
