/**
 * Reading and writing parquet tables through the native store (crates/noderag_store):
 * ZSTD, `ARROW:schema` kept, embeddings as FixedSizeList<Float32, dim>, atomic replace.
 * Whole-table reads and writes run off the main thread (napi AsyncTask).
 */
import { InvalidArgumentError } from '../errors.js';
import { callNativeAsync, NATIVE_CODES, native } from '../native.js';
import type { Column, ColumnKind, ColumnLike, ColumnRequest, Table, TableLike } from './table.js';

/** Which typed-array field each kind needs (besides `offsets`/`dim`). */
const VALUE_FIELD: Record<ColumnKind, { field: keyof ColumnLike; ctor: string }> = {
  utf8: { field: 'strings', ctor: 'Array' },
  int64: { field: 'float64', ctor: 'Float64Array' },
  float64: { field: 'float64', ctor: 'Float64Array' },
  int32: { field: 'int32', ctor: 'Int32Array' },
  boolean: { field: 'uint8', ctor: 'Uint8Array' },
  utf8_list: { field: 'strings', ctor: 'Array' },
  int64_list: { field: 'float64', ctor: 'Float64Array' },
  embedding: { field: 'float32', ctor: 'Float32Array' },
};

const TYPED = {
  Array: (v: unknown) => Array.isArray(v),
  Float64Array: (v: unknown) => v instanceof Float64Array,
  Int32Array: (v: unknown) => v instanceof Int32Array,
  Uint8Array: (v: unknown) => v instanceof Uint8Array,
  Float32Array: (v: unknown) => v instanceof Float32Array,
} as const;

function invalid(path: string, message: string): InvalidArgumentError {
  return new InvalidArgumentError(NATIVE_CODES.INVALID_ARGUMENT, `invalid table for ${path}: ${message}`);
}

/**
 * Checks the container types, which napi would otherwise reject with an uncoded message.
 * Lengths, offsets and names are checked natively (same error class and code).
 */
function checkShapes(path: string, table: TableLike): void {
  if (!Number.isSafeInteger(table.numRows) || table.numRows < 0) {
    throw invalid(path, `numRows must be a non-negative integer, got ${table.numRows}`);
  }
  for (const c of table.columns) {
    const spec = VALUE_FIELD[c.kind];
    if (!spec) throw invalid(path, `column \`${c.name}\`: unknown kind \`${String(c.kind)}\``);
    const is = TYPED[spec.ctor as keyof typeof TYPED];
    if (!is(c[spec.field])) {
      throw invalid(path, `column \`${c.name}\` (${c.kind}) needs \`${spec.field}\` as ${spec.ctor}`);
    }
    const needsOffsets = c.kind === 'utf8_list' || c.kind === 'int64_list';
    if (needsOffsets && !(c.offsets instanceof Int32Array)) {
      throw invalid(path, `column \`${c.name}\` (${c.kind}) needs \`offsets\` as Int32Array`);
    }
    if (c.kind === 'embedding' && !(Number.isInteger(c.dim) && (c.dim ?? 0) > 0)) {
      throw invalid(path, `column \`${c.name}\` (embedding) needs a positive integer \`dim\``);
    }
    if (c.keys !== undefined) {
      throw invalid(path, `column \`${c.name}\` is dictionary-encoded (\`keys\`); write its plain values`);
    }
    if (c.validity !== undefined && !(c.validity instanceof Uint8Array)) {
      throw invalid(path, `column \`${c.name}\`: \`validity\` must be a Uint8Array`);
    }
  }
}

/**
 * Writes `table` to `path` atomically: a temp file in the same folder is written, fsynced
 * and renamed over `path`, so readers see the old file or the new one, never half of one.
 * Do not modify the table's typed arrays until the promise settles (they are read without
 * a copy on a worker thread).
 *
 * @throws InvalidArgumentError (`NATIVE_INVALID_ARGUMENT`) for an inconsistent table; nothing is written.
 * @throws IndexFileError (`NATIVE_IO`) when the file cannot be written (e.g. missing folder).
 */
export async function writeTable(path: string, table: TableLike): Promise<void> {
  checkShapes(path, table);
  await callNativeAsync(() =>
    native.writeParquetTable(path, { numRows: table.numRows, columns: table.columns as ColumnLike[] }),
  );
}

export interface ReadTableOptions {
  /**
   * Columns to read, in the order wanted; a name, or a request that also checks the kind
   * (and embedding `dim`). Default: every column, in file order.
   */
  columns?: readonly (string | ColumnRequest)[];
}

/**
 * Reads a parquet table. Besides our own files it accepts what pandas/pyarrow/DuckDB write:
 * LargeUtf8/Utf8View strings, LargeList lists, and embeddings stored as List/LargeList/
 * FixedSizeList of Float32 or Float64 (returned as Float32Array + dim + validity).
 * A `utf8` request with `dictionary: true` returns distinct values plus `keys`.
 *
 * @throws IndexFileError: `NATIVE_IO` (missing/unreadable), `NATIVE_CORRUPT_FILE` (not
 *   parquet, truncated, damaged, missing column, wrong column type — the message says
 *   expected vs got), `NATIVE_DIMENSION_MISMATCH` (embedding dim differs from the request).
 */
export async function readTable(path: string, options: ReadTableOptions = {}): Promise<Table> {
  const requests = options.columns?.map((c) => (typeof c === 'string' ? { name: c } : { ...c }));
  const t = await callNativeAsync(() => native.readParquetTable(path, requests));
  return { numRows: t.numRows, columns: t.columns.map(fromNative) };
}

/**
 * The native reader fills exactly the fields of each column's kind (bindings/src/store.rs);
 * a dictionary-encoded utf8 column carries its keys in `int32`.
 */
function fromNative(c: ColumnLike): Column {
  if (c.kind === 'utf8' && c.int32)
    return { name: c.name, kind: 'utf8', strings: c.strings ?? [], keys: c.int32 };
  return c as Column;
}

export interface FooterInfo {
  numRows: number;
  numRowGroups: number;
  numColumns: number;
  fileSize: number;
}

/**
 * Cheap integrity check (reads the footer only): PAR1 magic, parseable footer, row counts
 * that add up, column chunks inside the file. Damage inside data pages needs a full read.
 *
 * @throws IndexFileError (`NATIVE_IO` missing file, `NATIVE_CORRUPT_FILE`).
 */
export async function validateParquetFooter(path: string): Promise<FooterInfo> {
  return callNativeAsync(() => native.validateParquetFooter(path));
}

/** The payload of cache/search_graph.bin and its header's counts (ts/index-io/graph-snapshot.ts). */
export interface SnapshotPayload {
  payload: Uint8Array;
  /** Nodes, base edges, similarity pairs, documents, HNSW labels, id-table slots. */
  n: number;
  m: number;
  s: number;
  d: number;
  l: number;
  h: number;
  idBytes: number;
  textBytes: number;
  docBytes: number;
}

/**
 * Derives the search snapshot's payload natively from the twelve search tables at `paths`
 * (documents, text, units, entities, relationships, attributes, elements, titles, graph
 * nodes, graph edges, HNSW graph, id map); `typeNames`: the node types in code order.
 *
 * @throws IndexFileError (`NATIVE_CORRUPT_FILE`) when a table is missing, unreadable or
 *   inconsistent: the snapshot cannot represent it; InternalError for a fault of the native
 *   code (`NATIVE_PANIC`).
 */
export async function deriveSnapshotPayload(
  paths: readonly string[],
  typeNames: readonly string[],
): Promise<SnapshotPayload> {
  return callNativeAsync(() => native.deriveSearchSnapshot([...paths], [...typeNames]));
}

/**
 * Writes hnsw_graph.parquet at `path` (atomically): the layer-0 links `src[i]`–`dst[i]` of the
 * vector index between active labels of two different nodes, as node pairs, once, sorted
 * (crates/noderag_store/src/similarity.rs). `labelNodes[l]` is label l's node, `retired[l]`
 * 1 when it is retired. Resolves with the number of pairs written.
 *
 * @throws IndexFileError (`NATIVE_IO`) when the file cannot be written; InvalidArgumentError
 *   when `src` and `dst`, or `labelNodes` and `retired`, differ in length.
 */
export async function writeSimilarityTable(
  path: string,
  labelNodes: readonly string[],
  retired: Uint8Array,
  src: Uint32Array,
  dst: Uint32Array,
): Promise<number> {
  return callNativeAsync(() => native.writeSimilarityTable(path, [...labelNodes], retired, src, dst));
}
