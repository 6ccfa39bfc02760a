/**
 * A table file declared once, as a list of columns: the writer (rows → column buffers), the
 * column requests of the reader and the reader (column buffers → rows) all follow from it.
 * ts/index-io/tables.ts declares the tables of docs/method.md §5 with it.
 */
import { IndexFileError } from '../errors.js';
import {
  booleanColumn,
  type Column,
  type ColumnRequest,
  embeddingColumn,
  int32Column,
  int64Column,
  int64ListColumn,
  type Table,
  type TableReader,
  utf8Column,
  utf8ListColumn,
} from './columns.js';

/** The value a row holds for each column kind. */
interface KindValue {
  utf8: string;
  int64: number;
  int32: number;
  boolean: boolean;
  utf8_list: string[];
  int64_list: number[];
  embedding: Float32Array | null;
}
type SpecKind = keyof KindValue;

/** One column of a table file. */
export interface ColumnSpec<R> {
  name: string;
  kind: SpecKind;
  /** The value written for a row. */
  get: (row: R) => unknown;
  /** The row field the column is read back into; absent for a column that is only written. */
  field?: keyof R & string;
  /** Whether the reader asks for the column (a derived column is written for other readers only). */
  requested: boolean;
  /** For the constant `type` column: the value every row must have. */
  constant?: string;
}

export interface TableSpec<R> {
  columns: readonly ColumnSpec<R>[];
  /** Row order on disk (part of the format: the same rows always give the same bytes). */
  order: (a: R, b: R) => number;
}

/** Keys of `R` whose values are `V`. */
type FieldOf<R, V> = { [K in keyof R]-?: R[K] extends V ? K : never }[keyof R] & string;

function stored<R, K extends SpecKind>(kind: K) {
  return (name: string, field: FieldOf<R, KindValue[K]>): ColumnSpec<R> => ({
    name,
    kind,
    get: (row) => row[field],
    field,
    requested: true,
  });
}

/**
 * Column constructors for rows of type `R`; a field must hold the kind's value type, so a
 * declaration that would write a string into an int column does not compile.
 */
export function columnsOf<R>() {
  return {
    utf8: stored<R, 'utf8'>('utf8'),
    int64: stored<R, 'int64'>('int64'),
    int32: stored<R, 'int32'>('int32'),
    boolean: stored<R, 'boolean'>('boolean'),
    utf8List: stored<R, 'utf8_list'>('utf8_list'),
    int64List: stored<R, 'int64_list'>('int64_list'),
    embedding: stored<R, 'embedding'>('embedding'),
    /** The `type` column: `value` in every row, written and checked on read. */
    type: (value: string): ColumnSpec<R> => ({
      name: 'type',
      kind: 'utf8',
      get: () => value,
      requested: true,
      constant: value,
    }),
    /** A utf8 column computed from the row, written but not read back. */
    derivedUtf8: (name: string, get: (row: R) => string): ColumnSpec<R> => ({
      name,
      kind: 'utf8',
      get,
      requested: false,
    }),
  };
}

function writeColumn<R>(c: ColumnSpec<R>, rows: readonly R[], dim: number): Column {
  const values = rows.map(c.get);
  switch (c.kind) {
    case 'utf8':
      return utf8Column(c.name, values as string[]);
    case 'int64':
      return int64Column(c.name, values as number[]);
    case 'int32':
      return int32Column(c.name, values as number[]);
    case 'boolean':
      return booleanColumn(c.name, values as boolean[]);
    case 'utf8_list':
      return utf8ListColumn(c.name, values as string[][]);
    case 'int64_list':
      return int64ListColumn(c.name, values as number[][]);
    case 'embedding':
      return embeddingColumn(c.name, values as (Float32Array | null)[], dim);
  }
}

/** The rows, sorted into file order, as column buffers. `dim` is config.dim for embedding columns. */
export function writeRows<R>(spec: TableSpec<R>, rows: Iterable<R>, dim = 0): Table {
  const sorted = [...rows].sort(spec.order);
  return { numRows: sorted.length, columns: spec.columns.map((c) => writeColumn(c, sorted, dim)) };
}

/** What the reader asks for: each requested column with its kind (and `dim` for embeddings). */
export function columnRequests<R>(spec: TableSpec<R>, dim?: number): ColumnRequest[] {
  return spec.columns
    .filter((c) => c.requested)
    .map((c) =>
      c.kind === 'embedding' ? { name: c.name, kind: c.kind, dim } : { name: c.name, kind: c.kind },
    );
}

function readColumn(t: TableReader, kind: SpecKind, name: string): readonly unknown[] {
  switch (kind) {
    case 'utf8':
      return t.utf8(name);
    case 'int64':
    case 'int32':
      return t.int(name);
    case 'boolean':
      return t.boolean(name);
    case 'utf8_list':
      return t.utf8List(name);
    case 'int64_list':
      return t.int64List(name);
    case 'embedding':
      return t.embedding(name);
  }
}

function checkConstant(reader: TableReader, name: string, expected: string): void {
  if (!reader.has(name)) return;
  const values = reader.utf8(name);
  const bad = values.findIndex((t) => t !== expected);
  if (bad >= 0) {
    throw new IndexFileError(
      'index_damaged',
      `${reader.label}: row ${bad} has ${name} ${JSON.stringify(values[bad])}, expected ${expected}`,
    );
  }
}

/** The rows of a table read with `columnRequests(spec)`; a damaged column is an IndexFileError. */
export function readRows<R>(spec: TableSpec<R>, t: TableReader): R[] {
  for (const c of spec.columns) if (c.constant !== undefined) checkConstant(t, c.name, c.constant);
  const fields = spec.columns.flatMap((c) =>
    c.field === undefined ? [] : [{ field: c.field, values: readColumn(t, c.kind, c.name) }],
  );
  const rows = fields[0]?.values.length ?? 0;
  return Array.from({ length: rows }, (_, i) => {
    const row: Record<string, unknown> = {};
    for (const f of fields) row[f.field] = f.values[i];
    return row as R;
  });
}
