/**
 * Column builders and readers for the index tables. A table crosses to the native parquet
 * store as one typed buffer per column (bindings/src/store.rs), never one object per row;
 * these helpers convert between row objects and that shape in one place.
 */
import { IndexFileError } from '../errors.js';
import type { ColumnKind, ColumnLike, ColumnRequest } from '../store/index.js';

/** A column in the native store's shape (ts/store `ColumnLike`); readers see the same fields. */
export type Column = ColumnLike;

export interface Table {
  numRows: number;
  columns: Column[];
}

export type { ColumnKind, ColumnRequest };

// ----------------------------------------------------------------------------- builders

export function utf8Column(name: string, values: readonly string[]): Column {
  return { name, kind: 'utf8', strings: values as string[] };
}

export function int64Column(name: string, values: readonly number[]): Column {
  return { name, kind: 'int64', float64: Float64Array.from(values) };
}

export function int32Column(name: string, values: readonly number[]): Column {
  return { name, kind: 'int32', int32: Int32Array.from(values) };
}

export function booleanColumn(name: string, values: readonly boolean[]): Column {
  return { name, kind: 'boolean', uint8: Uint8Array.from(values, (v) => (v ? 1 : 0)) };
}

function listOffsets(lists: readonly (readonly unknown[])[]): Int32Array {
  const offsets = new Int32Array(lists.length + 1);
  let total = 0;
  lists.forEach((l, i) => {
    total += l.length;
    offsets[i + 1] = total;
  });
  return offsets;
}

export function utf8ListColumn(name: string, lists: readonly (readonly string[])[]): Column {
  return { name, kind: 'utf8_list', strings: lists.flat(), offsets: listOffsets(lists) };
}

export function int64ListColumn(name: string, lists: readonly (readonly number[])[]): Column {
  return { name, kind: 'int64_list', float64: Float64Array.from(lists.flat()), offsets: listOffsets(lists) };
}

/** `FixedSizeList<Float32, dim>`; a null row is a vector not computed yet. */
export function embeddingColumn(
  name: string,
  vectors: readonly (Float32Array | null)[],
  dim: number,
): Column {
  const values = new Float32Array(vectors.length * dim);
  let validity: Uint8Array | undefined;
  vectors.forEach((v, i) => {
    if (v === null) {
      validity ??= new Uint8Array(vectors.length).fill(1);
      validity[i] = 0;
      return;
    }
    if (v.length !== dim) {
      throw new IndexFileError(
        'index_damaged',
        `${name}: row ${i} has a vector of length ${v.length}, expected config.dim = ${dim}`,
      );
    }
    values.set(v, i * dim);
  });
  const column: Column = { name, kind: 'embedding', float32: values, dim };
  if (validity) column.validity = validity;
  return column;
}

// ----------------------------------------------------------------------------- readers

/** Reads columns of one table file by name, naming the file in every error. */
export class TableReader {
  readonly #byName = new Map<string, Column>();

  constructor(
    readonly label: string,
    readonly table: Table,
  ) {
    for (const c of table.columns) this.#byName.set(c.name, c);
  }

  get rows(): number {
    return this.table.numRows;
  }

  has(name: string): boolean {
    return this.#byName.has(name);
  }

  #column(name: string, kinds: readonly ColumnKind[]): Column {
    const c = this.#byName.get(name);
    if (!c) throw new IndexFileError('index_damaged', `${this.label}: column ${name} is missing`);
    if (!kinds.includes(c.kind)) {
      throw new IndexFileError(
        'index_damaged',
        `${this.label}: column ${name} is ${c.kind}, expected ${kinds.join(' or ')}`,
      );
    }
    return c;
  }

  #fail(name: string, row: number, what: string): never {
    throw new IndexFileError('index_damaged', `${this.label}: column ${name}, row ${row}: ${what}`);
  }

  /** Non-null strings (a null is a damaged file). */
  utf8(name: string): string[] {
    const c = this.#column(name, ['utf8']);
    if (c.keys !== undefined) {
      const { keys, values } = this.utf8Dictionary(name);
      return Array.from(keys, (k) => values[k]!);
    }
    const values = c.strings ?? [];
    return values.map((v, i) => (v === null ? this.#fail(name, i, 'unexpected null') : v));
  }

  /**
   * Non-null strings as distinct values and one key per row (`values[keys[i]]` is row i).
   * Columns read with `dictionary: true` arrive this way; others are encoded here.
   */
  utf8Dictionary(name: string): { keys: Int32Array; values: string[] } {
    const c = this.#column(name, ['utf8']);
    const strings = c.strings ?? [];
    if (c.keys === undefined) {
      const row = strings.indexOf(null);
      if (row >= 0) this.#fail(name, row, 'unexpected null');
      return { keys: Int32Array.from(strings.keys()), values: strings as string[] };
    }
    const row = c.keys.indexOf(-1);
    if (row >= 0) this.#fail(name, row, 'unexpected null');
    return { keys: c.keys, values: strings as string[] };
  }

  int(name: string): number[] {
    const c = this.#column(name, ['int64', 'int32']);
    const values = c.kind === 'int32' ? c.int32 : c.float64;
    if (!values) return [];
    if (c.validity?.includes(0)) this.#fail(name, c.validity.indexOf(0), 'unexpected null');
    return Array.from(values);
  }

  boolean(name: string): boolean[] {
    const c = this.#column(name, ['boolean']);
    return Array.from(c.uint8 ?? [], (v) => v !== 0);
  }

  utf8List(name: string): string[][] {
    const c = this.#column(name, ['utf8_list']);
    const values = c.strings ?? [];
    const offsets = c.offsets ?? new Int32Array(this.rows + 1);
    const out: string[][] = [];
    for (let i = 0; i < this.rows; i++) {
      const list = values.slice(offsets[i]!, offsets[i + 1]!);
      out.push(list.map((v) => (v === null ? this.#fail(name, i, 'null list element') : v)));
    }
    return out;
  }

  int64List(name: string): number[][] {
    const c = this.#column(name, ['int64_list']);
    const values = c.float64 ?? new Float64Array(0);
    const offsets = c.offsets ?? new Int32Array(this.rows + 1);
    const out: number[][] = [];
    for (let i = 0; i < this.rows; i++) out.push(Array.from(values.subarray(offsets[i]!, offsets[i + 1]!)));
    return out;
  }

  /**
   * One vector per row, null when not computed: views into the column's one buffer, not
   * copies (consecutive rows are adjacent, so a run of rows can be passed on as one block;
   * see ts/indexing/stages/hnsw.ts). Rows never write into their vector.
   */
  embedding(name: string): (Float32Array | null)[] {
    const c = this.#column(name, ['embedding']);
    const dim = c.dim ?? 0;
    const values = c.float32 ?? new Float32Array(0);
    const out: (Float32Array | null)[] = [];
    for (let i = 0; i < this.rows; i++) {
      out.push(c.validity && c.validity[i] === 0 ? null : values.subarray(i * dim, (i + 1) * dim));
    }
    return out;
  }
}
