/** Parquet tables of an index: typed column buffers in, typed column buffers out. */
export {
  deriveSnapshotPayload,
  type FooterInfo,
  type ReadTableOptions,
  readTable,
  type SnapshotPayload,
  validateParquetFooter,
  writeSimilarityTable,
  writeTable,
} from './parquet.js';
export * from './table.js';
