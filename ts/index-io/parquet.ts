/**
 * The one door between the index tables and the native parquet store (ts/store): write a
 * table, read a table with the column kinds it must have, check a footer.
 */
import { readTable, validateParquetFooter, writeTable } from '../store/index.js';
import type { ColumnRequest, Table } from './columns.js';

/** Writes `table` to `path` atomically (ZSTD, ARROW:schema kept). */
export async function writeTableFile(path: string, table: Table): Promise<void> {
  await writeTable(path, table);
}

/** Reads the requested columns of `path`; a wrong kind or dimension is an IndexFileError. */
export async function readTableFile(path: string, columns: ColumnRequest[]): Promise<Table> {
  return readTable(path, { columns });
}

/** True when the file has a readable parquet footer (cheap: no data pages are read). */
export async function parquetFooterOk(path: string): Promise<boolean> {
  try {
    await validateParquetFooter(path);
    return true;
  } catch {
    return false;
  }
}
