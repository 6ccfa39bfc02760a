/**
 * Contract of the parquet store through the addon: every column kind round-trips, files
 * open in DuckDB and (when NODERAG_TEST_PYTHON points at a Python with pyarrow + pandas,
 * as .ci/run arranges) in pandas, foreign files (DuckDB/pandas defaults: snappy,
 * list<double> vectors) read back, and failures are the documented error classes.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IndexFileError, InvalidArgumentError } from '../../ts/errors.js';
import {
  type Column,
  type ColumnLike,
  readTable,
  type Table,
  validateParquetFooter,
  writeTable,
} from '../../ts/store/index.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'noderag-store-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** One column of every kind, 4 rows, a null in each; values under nulls are 0 (as read back). */
function everyKind(): Table {
  return {
    numRows: 4,
    columns: [
      { name: 's', kind: 'utf8', strings: ['a', null, '', '日本語 ✓ "q"'] },
      {
        name: 'i64',
        kind: 'int64',
        float64: new Float64Array([1, 0, -3, MAX_SAFE]),
        validity: new Uint8Array([1, 0, 1, 1]),
      },
      {
        name: 'i32',
        kind: 'int32',
        int32: new Int32Array([7, -(2 ** 31), 0, 9]),
        validity: new Uint8Array([1, 1, 0, 1]),
      },
      {
        name: 'f64',
        kind: 'float64',
        float64: new Float64Array([0.5, -1e300, 0, 3.25]),
        validity: new Uint8Array([1, 1, 0, 1]),
      },
      {
        name: 'b',
        kind: 'boolean',
        uint8: new Uint8Array([1, 0, 0, 1]),
        validity: new Uint8Array([1, 1, 0, 1]),
      },
      {
        name: 'ls',
        kind: 'utf8_list',
        strings: ['x', 'y', 'p', ''],
        offsets: new Int32Array([0, 2, 2, 2, 4]),
        validity: new Uint8Array([1, 0, 1, 1]),
      },
      {
        name: 'li',
        kind: 'int64_list',
        float64: new Float64Array([10, 20, 30, -40]),
        offsets: new Int32Array([0, 1, 1, 4, 4]),
        validity: new Uint8Array([1, 1, 1, 0]),
      },
      {
        name: 'embedding',
        kind: 'embedding',
        dim: 3,
        float32: new Float32Array([1, 2, 3, 0, 0, 0, -1.5, 0.25, 1e-7, 4, 5, 6]),
        validity: new Uint8Array([1, 0, 1, 1]),
      },
    ],
  };
}

type Cell = string | number | boolean | null | (string | number | null)[];

/** Cell `r` of column `c` as a plain value (null for a null cell). */
function cellOf(c: Column, r: number): Cell {
  if (c.kind !== 'utf8' && c.validity && c.validity[r] === 0) return null;
  switch (c.kind) {
    case 'utf8':
      return c.strings[r] ?? null;
    case 'int64':
    case 'float64':
      return c.float64[r]!;
    case 'int32':
      return c.int32[r]!;
    case 'boolean':
      return c.uint8[r] !== 0;
    case 'utf8_list':
      return c.strings.slice(c.offsets[r], c.offsets[r + 1]);
    case 'int64_list':
      return Array.from(c.float64.subarray(c.offsets[r], c.offsets[r + 1]));
    default:
      return Array.from(c.float32.subarray(r * c.dim, (r + 1) * c.dim));
  }
}

/** Rows of a table as plain values, for comparing with other readers. */
function rowsOf(t: Table): Cell[][] {
  const rows: Cell[][] = [];
  for (let r = 0; r < t.numRows; r++) rows.push(t.columns.map((c) => cellOf(c, r)));
  return rows;
}

async function rejection(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('expected the promise to reject');
}

describe('parquet store: round trips', () => {
  it('round-trips every column kind with nulls', async () => {
    const path = join(dir, 'every.parquet');
    const t = everyKind();
    await writeTable(path, t);
    const back = await readTable(path);
    expect(back).toEqual(t);
    // Typed arrays come back as the same typed-array classes.
    const emb = back.columns.find((c) => c.name === 'embedding');
    expect(emb?.kind === 'embedding' && emb.float32).toBeInstanceOf(Float32Array);
  });

  it('round-trips columns without nulls (no validity) and an empty table', async () => {
    const full: Table = {
      numRows: 2,
      columns: [
        { name: 'id', kind: 'int64', float64: new Float64Array([-MAX_SAFE, 42]) },
        { name: 'e', kind: 'embedding', dim: 2, float32: new Float32Array([0.1, 0.2, 0.3, 0.4]) },
        { name: 'tags', kind: 'utf8_list', strings: ['a', 'b', 'c'], offsets: new Int32Array([0, 1, 3]) },
      ],
    };
    await writeTable(join(dir, 'full.parquet'), full);
    expect(await readTable(join(dir, 'full.parquet'))).toEqual(full);

    const empty: Table = {
      numRows: 0,
      columns: [
        { name: 's', kind: 'utf8', strings: [] },
        { name: 'l', kind: 'int64_list', float64: new Float64Array(0), offsets: new Int32Array([0]) },
        { name: 'e', kind: 'embedding', dim: 1536, float32: new Float32Array(0) },
      ],
    };
    await writeTable(join(dir, 'empty.parquet'), empty);
    expect(await readTable(join(dir, 'empty.parquet'))).toEqual(empty);
    expect((await validateParquetFooter(join(dir, 'empty.parquet'))).numRows).toBe(0);
  });

  it('projects columns in the requested order and checks kinds and dimensions', async () => {
    const path = join(dir, 'proj.parquet');
    await writeTable(path, everyKind());
    const t = await readTable(path, { columns: [{ name: 'embedding', kind: 'embedding', dim: 3 }, 's'] });
    expect(t.numRows).toBe(4);
    expect(t.columns.map((c) => c.name)).toEqual(['embedding', 's']);
    expect(t.columns[1]).toEqual(everyKind().columns[0]);
  });

  it('reads a utf8 column dictionary-encoded: distinct values once, one key per row', async () => {
    const path = join(dir, 'dict.parquet');
    const ids = ['b', 'a', 'b', null, '日本', 'a', 'b'];
    await writeTable(path, {
      numRows: ids.length,
      columns: [
        { name: 'id', kind: 'utf8', strings: ids },
        { name: 'n', kind: 'int32', int32: Int32Array.from(ids.keys()) },
      ],
    });
    const t = await readTable(path, { columns: [{ name: 'id', kind: 'utf8', dictionary: true }, 'n'] });
    const id = t.columns[0];
    expect(id).toEqual({
      name: 'id',
      kind: 'utf8',
      strings: ['b', 'a', '日本'],
      keys: new Int32Array([0, 1, 0, -1, 2, 1, 0]),
    });
    // The other columns are untouched, and the plain read still gives one string per row.
    expect(t.columns[1]).toEqual({ name: 'n', kind: 'int32', int32: Int32Array.from(ids.keys()) });
    expect((await readTable(path, { columns: ['id'] })).columns[0]).toEqual({
      name: 'id',
      kind: 'utf8',
      strings: ids,
    });
  });

  it('reports the footer: rows, row groups, columns, size', async () => {
    const path = join(dir, 'footer.parquet');
    await writeTable(path, everyKind());
    const info = await validateParquetFooter(path);
    expect(info).toEqual({ numRows: 4, numRowGroups: 1, numColumns: 8, fileSize: readFileSync(path).length });
  });

  it('runs a large write and read off the main thread', async () => {
    const rows = 20_000;
    const dim = 384;
    const float32 = new Float32Array(rows * dim);
    let x = 12345;
    for (let i = 0; i < float32.length; i++) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0; // fixed-seed LCG: incompressible floats
      float32[i] = x / 2 ** 32 - 0.5;
    }
    const path = join(dir, 'big.parquet');
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    await writeTable(path, { numRows: rows, columns: [{ name: 'e', kind: 'embedding', dim, float32 }] });
    const afterWrite = ticks;
    const back = await readTable(path);
    clearInterval(timer);
    // A synchronous native call would block the loop: no timer could fire while awaiting.
    expect(afterWrite).toBeGreaterThan(0);
    expect(ticks).toBeGreaterThan(afterWrite);
    const col = back.columns[0]!;
    if (col.kind !== 'embedding') throw new Error(`read back as ${col.kind}`);
    // Byte comparison: a deep toEqual over 7.7M elements takes minutes.
    const bytes = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    expect(bytes(col.float32).equals(bytes(float32))).toBe(true);
  });
});

describe('parquet store: other readers', () => {
  it('DuckDB reads the same rows and types (FixedSizeList arrives as FLOAT[])', async () => {
    const path = join(dir, 'duck.parquet');
    const t = everyKind();
    await writeTable(path, t);
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      const src = `read_parquet('${path.replaceAll("'", "''")}')`;
      const described = await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${src}`);
      expect(described.getRowsJS().map((r) => [r[0], r[1]])).toEqual([
        ['s', 'VARCHAR'],
        ['i64', 'BIGINT'],
        ['i32', 'INTEGER'],
        ['f64', 'DOUBLE'],
        ['b', 'BOOLEAN'],
        ['ls', 'VARCHAR[]'],
        ['li', 'BIGINT[]'],
        // Parquet has no fixed-size list: DuckDB reads the LIST as FLOAT[] (it ignores the
        // ARROW:schema hint that pyarrow honours); the element type float32 is kept.
        ['embedding', 'FLOAT[]'],
      ]);
      const got = (await conn.runAndReadAll(`SELECT * FROM ${src}`)).getRowsJS();
      // BIGINT arrives as bigint in @duckdb/node-api.
      const norm = got.map((row) =>
        row.map((v) =>
          typeof v === 'bigint'
            ? Number(v)
            : Array.isArray(v)
              ? v.map((e) => (typeof e === 'bigint' ? Number(e) : e))
              : v,
        ),
      );
      const want = rowsOf(t).map((row) =>
        row.map((v, j) =>
          t.columns[j]!.kind === 'embedding' && Array.isArray(v) ? v.map((e) => Math.fround(e as number)) : v,
        ),
      );
      expect(norm).toEqual(want);
      // Casting to the fixed-size ARRAY type works, so vectors are usable as FLOAT[3] in SQL.
      const cast = await conn.runAndReadAll(
        `SELECT typeof(embedding::FLOAT[3]), array_length(embedding) FROM ${src} WHERE embedding IS NOT NULL`,
      );
      expect(cast.getRowsJS()).toEqual([
        ['FLOAT[3]', 3n],
        ['FLOAT[3]', 3n],
        ['FLOAT[3]', 3n],
      ]);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });

  it('reads a file written by DuckDB (snappy, DOUBLE[] vectors) as an embedding column', async () => {
    const path = join(dir, 'from-duck.parquet');
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      await conn.run(
        `COPY (SELECT * FROM (VALUES (1::BIGINT, 'a', [0.5, 1.5]::DOUBLE[]), (2, NULL, NULL), (3, 'c', [-2.0, 0.001]))
           AS t(id, name, vec)) TO '${path}' (FORMAT parquet)`,
      );
    } finally {
      conn.closeSync();
      db.closeSync();
    }
    const t = await readTable(path, { columns: [{ name: 'vec', kind: 'embedding', dim: 2 }, 'name', 'id'] });
    expect(t).toEqual({
      numRows: 3,
      columns: [
        {
          name: 'vec',
          kind: 'embedding',
          dim: 2,
          float32: new Float32Array([0.5, 1.5, 0, 0, -2, 0.001]),
          validity: new Uint8Array([1, 0, 1]),
        },
        { name: 'name', kind: 'utf8', strings: ['a', null, 'c'] },
        { name: 'id', kind: 'int64', float64: new Float64Array([1, 2, 3]) },
      ],
    });
  });

  const python = process.env.NODERAG_TEST_PYTHON;
  const noPython = 'NODERAG_TEST_PYTHON is not set (.ci/run sets it to a venv with pyarrow + pandas)';

  it('pandas (pyarrow engine) reads the same rows; pyarrow sees fixed_size_list<float>[3]', async (ctx) => {
    if (!python) ctx.skip(noPython);
    const path = join(dir, 'pandas.parquet');
    const t = everyKind();
    await writeTable(path, t);
    const script = `
import json, math, sys
import pandas as pd
import pyarrow.parquet as pq
path = sys.argv[1]
df = pd.read_parquet(path, engine='pyarrow')
def cell(v):
    if v is None: return None
    if hasattr(v, 'tolist'): v = v.tolist()
    if isinstance(v, list): return [cell(x) for x in v]
    if isinstance(v, float) and math.isnan(v): return None
    return v
rows = [[cell(v) for v in row] for row in df.itertuples(index=False, name=None)]
schema = {f.name: str(f.type) for f in pq.read_schema(path)}
print(json.dumps({'columns': list(df.columns), 'rows': rows, 'schema': schema}))
`;
    const r = spawnSync(python!, ['-c', script, path], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { columns: string[]; rows: Cell[][]; schema: Record<string, string> };
    expect(out.columns).toEqual(t.columns.map((c) => c.name));
    expect(out.schema).toMatchObject({
      s: 'string',
      i64: 'int64',
      i32: 'int32',
      f64: 'double',
      b: 'bool',
      ls: 'list<item: string>',
      li: 'list<item: int64>',
      embedding: 'fixed_size_list<item: float>[3]',
    });
    const want = rowsOf(t).map((row) =>
      row.map((v, j) =>
        t.columns[j]!.kind === 'embedding' && Array.isArray(v) ? v.map((e) => Math.fround(e as number)) : v,
      ),
    );
    expect(out.rows).toEqual(want);
  });

  it('reads a file written by pandas (snappy, list<double> vectors, object strings)', async (ctx) => {
    if (!python) ctx.skip(noPython);
    const path = join(dir, 'from-pandas.parquet');
    const script = `
import sys
import pandas as pd
pd.DataFrame({
    'hash_id': ['h1', 'h2', None],
    'weight': [3, 1, 2],
    'embedding': [[0.25, -1.0, 2.0], None, [1e-3, 0.0, 7.5]],
    'related': [['a', 'b'], [], ['c']],
}).to_parquet(sys.argv[1], engine='pyarrow')
`;
    const r = spawnSync(python!, ['-c', script, path], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const t = await readTable(path, {
      columns: [
        { name: 'hash_id', kind: 'utf8' },
        { name: 'weight', kind: 'int64' },
        { name: 'embedding', kind: 'embedding', dim: 3 },
        { name: 'related', kind: 'utf8_list' },
      ],
    });
    expect(t.columns).toEqual([
      { name: 'hash_id', kind: 'utf8', strings: ['h1', 'h2', null] },
      { name: 'weight', kind: 'int64', float64: new Float64Array([3, 1, 2]) },
      {
        name: 'embedding',
        kind: 'embedding',
        dim: 3,
        float32: new Float32Array([0.25, -1, 2, 0, 0, 0, 1e-3, 0, 7.5]),
        validity: new Uint8Array([1, 0, 1]),
      },
      { name: 'related', kind: 'utf8_list', strings: ['a', 'b', 'c'], offsets: new Int32Array([0, 2, 2, 3]) },
    ] satisfies Column[]);
  });
});

describe('parquet store: errors', () => {
  it('a missing file is an IndexFileError naming the file', async () => {
    const path = join(dir, 'absent.parquet');
    for (const read of [() => readTable(path), () => validateParquetFooter(path)]) {
      const e = await rejection(read());
      expect(e).toBeInstanceOf(IndexFileError);
      expect(e.code).toBe('NATIVE_IO');
      expect(e.message).toContain(path);
    }
  });

  it('a corrupt or truncated file is an IndexFileError naming the file', async () => {
    const good = join(dir, 'good.parquet');
    await writeTable(good, everyKind());
    const bytes = readFileSync(good);
    const cases: [string, Uint8Array][] = [
      ['text.parquet', Buffer.from('definitely not a parquet file')],
      ['truncated.parquet', bytes.subarray(0, Math.floor(bytes.length / 2))],
      ['empty.bin.parquet', new Uint8Array(0)],
    ];
    for (const [name, content] of cases) {
      const path = join(dir, name);
      writeFileSync(path, content);
      for (const read of [() => readTable(path), () => validateParquetFooter(path)]) {
        const e = await rejection(read());
        expect(e).toBeInstanceOf(IndexFileError);
        expect(e.code).toBe('NATIVE_CORRUPT_FILE');
        expect(e.message).toContain(path);
      }
    }
  });

  it('a missing column, a wrong kind and a wrong dimension are IndexFileErrors saying what was expected', async () => {
    const path = join(dir, 'kinds.parquet');
    await writeTable(path, everyKind());
    let e = await rejection(readTable(path, { columns: ['nope'] }));
    expect(e).toBeInstanceOf(IndexFileError);
    expect(e.message).toMatch(/kinds\.parquet: missing column `nope` \(the file has: s, i64, /);

    e = await rejection(readTable(path, { columns: [{ name: 'ls', kind: 'int64_list' }] }));
    expect(e).toBeInstanceOf(IndexFileError);
    expect(e.code).toBe('NATIVE_CORRUPT_FILE');
    expect(e.message).toContain('column `ls` has type utf8_list (Arrow List(');
    expect(e.message).toContain('expected int64_list');

    e = await rejection(readTable(path, { columns: [{ name: 'embedding', kind: 'embedding', dim: 1536 }] }));
    expect(e).toBeInstanceOf(IndexFileError);
    expect(e.code).toBe('NATIVE_DIMENSION_MISMATCH');
    expect(e.message).toContain('dimension 3, expected 1536');

    e = await rejection(readTable(path, { columns: [{ name: 'i64', dictionary: true }] }));
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect(e.message).toContain(
      'kinds.parquet: column `i64` is int64; only utf8 columns can be read as a dictionary',
    );
  });

  it('inconsistent tables are InvalidArgumentErrors naming the column, and nothing is written', async () => {
    const path = join(dir, 'keep', 'table.parquet');
    mkdirSync(join(dir, 'keep'));
    await writeTable(path, everyKind());
    const before = readFileSync(path);

    const bad: [string, ColumnLike[], number, RegExp][] = [
      [
        'short int32',
        [{ name: 'n', kind: 'int32', int32: new Int32Array([1, 2]) }],
        3,
        /`n` \(int32\): 2 values, expected 3/,
      ],
      [
        'embedding length',
        [{ name: 'e', kind: 'embedding', dim: 4, float32: new Float32Array(7) }],
        2,
        /`e` \(embedding\): 7 floats, expected rows × dim = 2 × 4 = 8/,
      ],
      [
        'list offsets',
        [{ name: 'l', kind: 'utf8_list', strings: ['a'], offsets: new Int32Array([0, 2]) }],
        1,
        /`l` \(utf8_list\): last offset is 2 but there are 1 element values/,
      ],
      [
        'validity length',
        [{ name: 'v', kind: 'float64', float64: new Float64Array(2), validity: new Uint8Array(1) }],
        2,
        /`v` \(float64\): validity has 1 entries, expected 2/,
      ],
      [
        'unsafe int64',
        [{ name: 'big', kind: 'int64', float64: new Float64Array([1, 2 ** 53]) }],
        2,
        /`big` \(int64\): value 9007199254740992 at index 1 is not a safe integer/,
      ],
      [
        'fractional int64',
        [{ name: 'f', kind: 'int64', float64: new Float64Array([1.5]) }],
        1,
        /not a safe integer/,
      ],
      [
        'wrong array type',
        [{ name: 'w', kind: 'int64', float64: [1, 2] as unknown as Float64Array }],
        2,
        /`w` \(int64\) needs `float64` as Float64Array/,
      ],
      [
        'duplicate name',
        [
          { name: 'd', kind: 'utf8', strings: ['x'] },
          { name: 'd', kind: 'utf8', strings: ['y'] },
        ],
        1,
        /duplicate column name `d`/,
      ],
      ['no columns', [], 0, /at least one column/],
      [
        'dictionary-encoded',
        [{ name: 'k', kind: 'utf8', strings: ['x'], keys: new Int32Array([0, 0]) }],
        2,
        /`k` is dictionary-encoded \(`keys`\); write its plain values/,
      ],
    ];
    for (const [what, columns, numRows, message] of bad) {
      const e = await rejection(writeTable(path, { numRows, columns }));
      expect(e, what).toBeInstanceOf(InvalidArgumentError);
      expect(e.code, what).toBe('NATIVE_INVALID_ARGUMENT');
      expect(e.message, what).toMatch(message);
      expect(e.message, what).toContain(path);
    }
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(readdirSync(join(dir, 'keep'))).toEqual(['table.parquet']);
  });

  it('an int64 beyond ±(2^53 − 1) in a file is an IndexFileError, not a rounded number', async () => {
    const path = join(dir, 'huge-int.parquet');
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      await conn.run(
        `COPY (SELECT * FROM (VALUES (1::BIGINT), (9007199254740993)) AS t(id)) TO '${path}' (FORMAT parquet)`,
      );
    } finally {
      conn.closeSync();
      db.closeSync();
    }
    const e = await rejection(readTable(path));
    expect(e).toBeInstanceOf(IndexFileError);
    expect(e.code).toBe('NATIVE_CORRUPT_FILE');
    expect(e.message).toContain('column `id` holds 9007199254740993 at row 1');
    expect(e.message).toContain(path);
  });

  it('writing into a missing folder is an IndexFileError naming it', async () => {
    const e = await rejection(writeTable(join(dir, 'no-such-folder', 't.parquet'), everyKind()));
    expect(e).toBeInstanceOf(IndexFileError);
    expect(e.code).toBe('NATIVE_IO');
    expect(e.message).toContain('no-such-folder');
  });
});
