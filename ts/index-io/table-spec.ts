/**
 * A table file declared once: its name (its key in CACHE_FILES, so also its file), its columns
 * and its row order. `defineTable` turns the declaration into an `IndexTable`, whose writer
 * (rows → column buffers), reader (column buffers → rows) and column requests (the reader's
 * own, and `columns(...)` for a reader that wants only some, like search) all follow from it.
 * ts/index-io/tables.ts declares the tables of docs/method.md §5 with it.
 */
import { IndexFileError, InternalError } from '../errors.js';
import { CACHE_FILES, resolveInProject } from '../project/layout.js';
import {
  booleanColumn,
  type Column,
  type ColumnRequest,
  embeddingColumn,
  int32Column,
  int64Column,
  int64ListColumn,
  type Table,
  TableReader,
  utf8Column,
  utf8ListColumn,
} from './columns.js';
import { readTableFile, writeTableFile } from './parquet.js';

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

/** One column of a table file, named `N`. */
interface ColumnSpec<R, N extends string = string> {
  name: N;
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

/** Keys of `R` whose values are `V`. */
type FieldOf<R, V> = { [K in keyof R]-?: R[K] extends V ? K : never }[keyof R] & string;

function stored<R, K extends SpecKind>(kind: K) {
  return <N extends string>(name: N, field: FieldOf<R, KindValue[K]>): ColumnSpec<R, N> => ({
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
    type: (value: string): ColumnSpec<R, 'type'> => ({
      name: 'type',
      kind: 'utf8',
      get: () => value,
      requested: true,
      constant: value,
    }),
    /** A utf8 column computed from the row, written but not read back. */
    derivedUtf8: <N extends string>(name: N, get: (row: R) => string): ColumnSpec<R, N> => ({
      name,
      kind: 'utf8',
      get,
      requested: false,
    }),
  };
}

/** The parquet files of CACHE_FILES, by name. */
type TableFileName = {
  [K in keyof typeof CACHE_FILES]: (typeof CACHE_FILES)[K] extends `${string}.parquet` ? K : never;
}[keyof typeof CACHE_FILES];

interface TableDeclaration<R, N extends string> {
  /** Its key in CACHE_FILES; the file is `CACHE_FILES[name]`, the name in every error. */
  name: TableFileName;
  columns: readonly ColumnSpec<R, N>[];
  /** Row order on disk (part of the format: the same rows always give the same bytes). */
  order: (a: R, b: R) => number;
  /** Checks a row read back beyond its column kinds; throws IndexFileError naming `label`. */
  check?: (row: R, i: number, label: string) => void;
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

/** A table file of the index: one declaration, its writer, its reader and its column requests. */
export class IndexTable<R, N extends string = string> {
  readonly name: TableFileName;
  /** The project-relative path (CACHE_FILES[name]), the label of every error about it. */
  readonly file: string;
  readonly #columns: readonly ColumnSpec<R, N>[];
  readonly #byName: ReadonlyMap<string, ColumnSpec<R, N>>;
  readonly #order: (a: R, b: R) => number;
  readonly #check: ((row: R, i: number, label: string) => void) | undefined;

  constructor(declaration: TableDeclaration<R, N>) {
    this.name = declaration.name;
    this.file = CACHE_FILES[declaration.name];
    this.#columns = declaration.columns;
    this.#byName = new Map(declaration.columns.map((c) => [c.name, c]));
    this.#order = declaration.order;
    this.#check = declaration.check;
  }

  /** The rows, sorted into file order, as column buffers. `dim` (config.dim) is needed for embeddings. */
  write(rows: Iterable<R>, dim?: number): Table {
    if (dim === undefined && this.#columns.some((c) => c.kind === 'embedding')) {
      throw new InternalError('internal_error', `${this.file}: writing vectors needs config.dim`);
    }
    const sorted = [...rows].sort(this.#order);
    return { numRows: sorted.length, columns: this.#columns.map((c) => writeColumn(c, sorted, dim ?? 0)) };
  }

  /** Writes the rows to the table's file in the project at `root` (atomically). */
  async save(root: string, rows: Iterable<R>, dim?: number): Promise<void> {
    await writeTableFile(resolveInProject(root, this.file), this.write(rows, dim));
  }

  /** What `read` needs: each column it reads with its kind (and `dim`, when given, for embeddings). */
  requests(dim?: number): ColumnRequest[] {
    return this.#columns.filter((c) => c.requested).map((c) => this.#request(c, false, dim));
  }

  /**
   * A request for some of the columns, for a reader that takes them from the TableReader
   * itself (search). `repeated` are utf8 columns whose values repeat (edge endpoints, node
   * types, chunk references): read dictionary-encoded, so each distinct value becomes one JS
   * string (TableReader.utf8Dictionary).
   */
  columns(names: readonly N[], repeated: readonly N[] = []): ColumnRequest[] {
    return [
      ...names.map((name) => this.#request(this.#column(name), false)),
      ...repeated.map((name) => this.#request(this.#column(name), true)),
    ];
  }

  #column(name: N): ColumnSpec<R, N> {
    const c = this.#byName.get(name);
    if (!c) throw new InternalError('internal_error', `${this.file} has no column ${name}`);
    return c;
  }

  #request(c: ColumnSpec<R, N>, dictionary: boolean, dim?: number): ColumnRequest {
    if (dictionary && c.kind !== 'utf8') {
      throw new InternalError('internal_error', `${this.file}: column ${c.name} is ${c.kind}, not utf8`);
    }
    if (dictionary) return { name: c.name, kind: c.kind, dictionary };
    return c.kind === 'embedding' ? { name: c.name, kind: c.kind, dim } : { name: c.name, kind: c.kind };
  }

  /** The rows of a table read with `requests()`; a damaged column or row is an IndexFileError. */
  read(t: TableReader): R[] {
    for (const c of this.#columns) if (c.constant !== undefined) checkConstant(t, c.name, c.constant);
    const fields = this.#columns.flatMap((c) =>
      c.field === undefined ? [] : [{ field: c.field, values: readColumn(t, c.kind, c.name) }],
    );
    const count = fields[0]?.values.length ?? 0;
    const rows = Array.from({ length: count }, (_, i) => {
      const row: Record<string, unknown> = {};
      for (const f of fields) row[f.field] = f.values[i];
      return row as R;
    });
    const check = this.#check;
    if (check) {
      rows.forEach((row, i) => {
        check(row, i, t.label);
      });
    }
    return rows;
  }

  /** The rows of the table's file in the project at `root`; `dim` checks the stored vectors. */
  async load(root: string, dim?: number): Promise<R[]> {
    const table = await readTableFile(resolveInProject(root, this.file), this.requests(dim));
    return this.read(new TableReader(this.file, table));
  }
}
