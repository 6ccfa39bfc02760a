/** Parquet tables of an index: typed column buffers in, typed column buffers out. */
export {
  type FooterInfo,
  type ReadTableOptions,
  readTable,
  validateParquetFooter,
  writeTable,
} from './parquet.js';
export * from './table.js';
