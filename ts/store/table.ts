/**
 * The shape of a parquet table in TypeScript: one typed buffer per column, never one
 * object per row. Field names match the native addon (bindings/src/store.rs), so a table
 * crosses the boundary without being rebuilt.
 *
 * | kind         | Arrow type on disk             | values                                  |
 * |--------------|--------------------------------|-----------------------------------------|
 * | `utf8`       | Utf8                           | `strings: (string \| null)[]`           |
 * | `int64`      | Int64                          | `float64: Float64Array` (safe integers) |
 * | `float64`    | Float64                        | `float64: Float64Array`                 |
 * | `int32`      | Int32                          | `int32: Int32Array`                     |
 * | `boolean`    | Boolean                        | `uint8: Uint8Array` (0 / 1)             |
 * | `utf8_list`  | List<Utf8>                     | `strings` (flattened) + `offsets`       |
 * | `int64_list` | List<Int64>                    | `float64` (flattened) + `offsets`       |
 * | `embedding`  | FixedSizeList<Float32, dim>    | `float32` (rows × dim) + `dim`          |
 *
 * `offsets` (Int32Array, rows + 1 entries): row i is elements `offsets[i]..offsets[i+1]`.
 * `validity` (Uint8Array, one byte per row, 0 = null) is absent when no row is null; for
 * an embedding, a null row is a vector not computed yet. Int64 travels as Float64Array
 * because every id and count of the index is far below 2^53; writes reject non-safe
 * integers and reads reject values JS cannot hold exactly, so nothing is rounded silently.
 */

export type ColumnKind =
  | 'utf8'
  | 'int64'
  | 'int32'
  | 'float64'
  | 'boolean'
  | 'utf8_list'
  | 'int64_list'
  | 'embedding';

export const COLUMN_KINDS: readonly ColumnKind[] = [
  'utf8',
  'int64',
  'int32',
  'float64',
  'boolean',
  'utf8_list',
  'int64_list',
  'embedding',
];

interface Nullable {
  /** One byte per row, 0 = null; absent when every row is present. */
  validity?: Uint8Array;
}

export interface Utf8Column {
  name: string;
  kind: 'utf8';
  strings: (string | null)[];
  /**
   * Only when read with `dictionary: true`: one key per row into `strings`, which then holds
   * each distinct value once (row i is `strings[keys[i]]`; key -1 is a null row).
   */
  keys?: Int32Array;
}
export interface Int64Column extends Nullable {
  name: string;
  kind: 'int64';
  float64: Float64Array;
}
export interface Float64Column extends Nullable {
  name: string;
  kind: 'float64';
  float64: Float64Array;
}
export interface Int32Column extends Nullable {
  name: string;
  kind: 'int32';
  int32: Int32Array;
}
export interface BooleanColumn extends Nullable {
  name: string;
  kind: 'boolean';
  uint8: Uint8Array;
}
export interface Utf8ListColumn extends Nullable {
  name: string;
  kind: 'utf8_list';
  strings: (string | null)[];
  offsets: Int32Array;
}
export interface Int64ListColumn extends Nullable {
  name: string;
  kind: 'int64_list';
  float64: Float64Array;
  offsets: Int32Array;
}
export interface EmbeddingColumn extends Nullable {
  name: string;
  kind: 'embedding';
  float32: Float32Array;
  dim: number;
}

/** A column as `readTable` returns it: narrowing on `kind` gives its buffers. */
export type Column =
  | Utf8Column
  | Int64Column
  | Float64Column
  | Int32Column
  | BooleanColumn
  | Utf8ListColumn
  | Int64ListColumn
  | EmbeddingColumn;

export type ColumnOfKind<K extends ColumnKind> = Extract<Column, { kind: K }>;

export interface Table {
  numRows: number;
  columns: Column[];
}

/**
 * What `writeTable` accepts: a `Column`, or any object with the same fields. The fields a
 * kind needs and all lengths are checked before anything is written.
 */
export interface ColumnLike {
  name: string;
  kind: ColumnKind;
  strings?: (string | null)[];
  float64?: Float64Array;
  int32?: Int32Array;
  uint8?: Uint8Array;
  float32?: Float32Array;
  dim?: number;
  offsets?: Int32Array;
  validity?: Uint8Array;
  /** A dictionary-encoded `utf8` column as read (see `Utf8Column.keys`); writes refuse it. */
  keys?: Int32Array;
}

export interface TableLike {
  numRows: number;
  columns: readonly ColumnLike[];
}

/** A column to read, optionally with the kind (and embedding dimension) it must have. */
export interface ColumnRequest {
  name: string;
  kind?: ColumnKind;
  dim?: number;
  /**
   * `utf8` only: return the column dictionary-encoded (`Utf8Column.keys`), so a column of
   * many repeated values (edge endpoints) costs one JS string per distinct value, not per row.
   */
  dictionary?: boolean;
}

/** Finds a column by name and kind; `undefined` if absent or of another kind. */
export function findColumn<K extends ColumnKind>(
  table: Table,
  name: string,
  kind: K,
): ColumnOfKind<K> | undefined {
  const c = table.columns.find((x) => x.name === name);
  return c && c.kind === kind ? (c as ColumnOfKind<K>) : undefined;
}
