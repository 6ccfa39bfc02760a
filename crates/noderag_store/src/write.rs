//! Table → parquet, following docs/method.md §5: ZSTD, `ARROW:schema` kept, `Utf8` strings,
//! `List<Utf8>`/`List<Int64>`, embeddings `FixedSizeList<Float32, dim>` with child `item`.

use std::sync::Arc;

use arrow_array::{
  ArrayRef, BooleanArray, FixedSizeListArray, Float32Array, Float64Array, Int32Array, Int64Array, ListArray,
  RecordBatch, StringArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use std::path::Path;

use crate::atomic::write_atomically;
use crate::error::{Result, StoreError};
use crate::table::{Column, ColumnData, Strings, Table};

/// zstd level 3 (zstd's own default) for every column except embeddings: text, ids and
/// lists compress well and level 3 is the usual speed/size balance.
pub const ZSTD_LEVEL: i32 = 3;

/// Embedding components: BYTE_STREAM_SPLIT encoding, then zstd level 1. Model floats are
/// close to noise; splitting them into byte streams puts the exponent bytes together,
/// which zstd can squeeze. Measured on 100k × 1536 synthetic vectors (release build,
/// `cargo run --release -p noderag_store --example throughput -- 100000 1536 --codecs`):
/// plain + zstd 3: 91 % of raw size, write 2.97 s / read 2.16 s CPU; plain + zstd 1: 91 %,
/// 2.48 s / 2.18 s; split + zstd 1: 84 %, 2.77 s / 1.51 s. DuckDB and pyarrow read it.
pub const ZSTD_LEVEL_EMBEDDINGS: i32 = 1;

/// Target size of one Arrow batch handed to the writer (and decoded by the reader). Below
/// glibc's 32 MiB mmap ceiling, so batch buffers are reused instead of page-faulted in
/// afresh each time (measured: −20 % write CPU vs 50 MB batches).
pub(crate) const BATCH_BYTES: usize = 16 << 20;

/// Rows per batch for rows of about `row_bytes` bytes: between 64 and 8,192.
pub(crate) fn rows_per_batch(row_bytes: usize) -> usize {
  (BATCH_BYTES / row_bytes.max(1)).clamp(64, 8192)
}

/// Rough bytes per row of `table` in memory, to size batches.
fn row_bytes(table: &Table<'_>) -> usize {
  let rows = table.num_rows.max(1);
  table
    .columns
    .iter()
    .map(|c| match &c.data {
      ColumnData::Utf8(s) => 4 + s.bytes.len() / rows,
      ColumnData::Int64 { .. } | ColumnData::Float64 { .. } => 8,
      ColumnData::Int32 { .. } => 4,
      ColumnData::Boolean { .. } => 1,
      ColumnData::Utf8List { values, .. } => 4 + (values.bytes.len() + 4 * values.len()) / rows,
      ColumnData::Int64List { values, .. } => 4 + 8 * values.len() / rows,
      ColumnData::Embedding { dim, .. } => 4 * dim,
    })
    .sum()
}

/// Row groups are closed at about 128 MiB (the size DuckDB, Spark and pyarrow favour),
/// or at parquet-rs' default of 1 Mi rows, whichever comes first.
const ROW_GROUP_BYTES: usize = 128 << 20;

/// Dictionary page limit of the columns a writer names in [`WriteOptions::whole_dictionary`]:
/// past parquet-rs' default of 1 MiB a column falls back to plain values for the rest of its
/// row group, which is right for ids that are all distinct (a dictionary as large as the
/// column only costs hashing) but not for a column of a few distinct ids repeated many times.
const WHOLE_DICTIONARY_BYTES: usize = 64 << 20;

/// How a table is written beyond the defaults.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions<'o> {
  /// Columns whose values repeat many times: dictionary-encoded however many distinct values
  /// they hold (up to 64 MiB of them per row group). hnsw_graph.parquet's source and target
  /// columns on the 10 MB corpus of `bench scale` (112k distinct ids, 2.1M rows): 69 MB
  /// written in 1.55 s became 15 MB in 0.95 s.
  pub whole_dictionary: &'o [&'o str],
}

/// Writes `table` to `path` atomically (see [`crate::atomic`]). The table is validated
/// first: an inconsistent table is an `InvalidTable` error and no file is touched.
pub fn write_table(path: &Path, table: &Table<'_>) -> Result<()> {
  write_table_with(path, table, &WriteOptions::default())
}

/// [`write_table`] with `options`.
pub fn write_table_with(path: &Path, table: &Table<'_>, options: &WriteOptions<'_>) -> Result<()> {
  table
    .validate()
    .map_err(|reason| StoreError::invalid(path, reason))?;
  let schema = arrow_schema_of(table);
  let props = writer_properties(table, options);
  write_atomically(path, |out| {
    let mut writer = ArrowWriter::try_new(out, schema.clone(), Some(props))
      .map_err(|e| StoreError::invalid(path, e.to_string()))?;
    let batch_rows = rows_per_batch(row_bytes(table));
    let mut start = 0;
    // An empty table still gets one (empty) batch so the schema is written.
    loop {
      let end = (start + batch_rows).min(table.num_rows);
      let batch = batch_of(table, &schema, start, end).map_err(|reason| StoreError::invalid(path, reason))?;
      writer.write(&batch).map_err(|e| write_error(path, e))?;
      start = end;
      if start >= table.num_rows {
        break;
      }
    }
    writer.close().map_err(|e| write_error(path, e))?;
    Ok(())
  })
}

fn write_error(path: &Path, e: parquet::errors::ParquetError) -> StoreError {
  match e {
    parquet::errors::ParquetError::External(inner) => match inner.downcast::<std::io::Error>() {
      Ok(io) => StoreError::io(path, *io),
      Err(other) => StoreError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(other),
      },
    },
    other => StoreError::Io {
      path: path.to_path_buf(),
      source: std::io::Error::other(other),
    },
  }
}

fn writer_properties(table: &Table<'_>, options: &WriteOptions<'_>) -> WriterProperties {
  let mut b = WriterProperties::builder()
    .set_compression(Compression::ZSTD(
      ZstdLevel::try_new(ZSTD_LEVEL).expect("valid zstd level"),
    ))
    .set_max_row_group_bytes(Some(ROW_GROUP_BYTES));
  for name in options.whole_dictionary {
    b = b.set_column_dictionary_page_size_limit(ColumnPath::from(*name), WHOLE_DICTIONARY_BYTES);
  }
  for c in &table.columns {
    if let ColumnData::Embedding { .. } = c.data {
      // Floats from a model are nearly all distinct: a dictionary only costs time, and
      // min/max statistics over vector components help no query.
      let leaf = ColumnPath::new(vec![c.name.clone(), "list".into(), "item".into()]);
      let level = ZstdLevel::try_new(ZSTD_LEVEL_EMBEDDINGS).expect("valid zstd level");
      b = b
        .set_column_encoding(leaf.clone(), Encoding::BYTE_STREAM_SPLIT)
        .set_column_compression(leaf.clone(), Compression::ZSTD(level))
        .set_column_dictionary_enabled(leaf.clone(), false)
        .set_column_statistics_enabled(leaf, EnabledStatistics::None);
    }
  }
  b.build()
}

fn list_item(dt: DataType) -> FieldRef {
  Arc::new(Field::new("item", dt, true))
}

/// Arrow type written for each kind. Every field is nullable: nullability then never
/// depends on the data, so the same table description always gives the same schema.
pub(crate) fn arrow_type(data: &ColumnData<'_>) -> DataType {
  match data {
    ColumnData::Utf8(_) => DataType::Utf8,
    ColumnData::Int64 { .. } => DataType::Int64,
    ColumnData::Int32 { .. } => DataType::Int32,
    ColumnData::Float64 { .. } => DataType::Float64,
    ColumnData::Boolean { .. } => DataType::Boolean,
    ColumnData::Utf8List { .. } => DataType::List(list_item(DataType::Utf8)),
    ColumnData::Int64List { .. } => DataType::List(list_item(DataType::Int64)),
    ColumnData::Embedding { dim, .. } => DataType::FixedSizeList(list_item(DataType::Float32), *dim as i32),
  }
}

fn arrow_schema_of(table: &Table<'_>) -> SchemaRef {
  Arc::new(Schema::new(
    table
      .columns
      .iter()
      .map(|c| Field::new(&c.name, arrow_type(&c.data), true))
      .collect::<Vec<_>>(),
  ))
}

fn batch_of(table: &Table<'_>, schema: &SchemaRef, start: usize, end: usize) -> Result<RecordBatch, String> {
  let arrays = table
    .columns
    .iter()
    .map(|c| array_of(c, start, end).map_err(|e| format!("column `{}`: {e}", c.name)))
    .collect::<Result<Vec<ArrayRef>, String>>()?;
  let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(end - start));
  RecordBatch::try_new_with_options(schema.clone(), arrays, &opts).map_err(|e| e.to_string())
}

fn nulls(validity: Option<&[u8]>, start: usize, end: usize) -> Option<NullBuffer> {
  let v = &validity?[start..end];
  if v.iter().all(|&b| b != 0) {
    return None;
  }
  Some(NullBuffer::new(BooleanBuffer::collect_bool(v.len(), |i| {
    v[i] != 0
  })))
}

/// Offsets of rows `start..end` rebased to 0, plus the element range they cover.
fn rebase(offsets: &[i32], start: usize, end: usize) -> (OffsetBuffer<i32>, usize, usize) {
  let base = offsets[start];
  let rebased: Vec<i32> = offsets[start..=end].iter().map(|o| o - base).collect();
  (
    OffsetBuffer::new(ScalarBuffer::from(rebased)),
    base as usize,
    offsets[end] as usize,
  )
}

fn string_array(s: &Strings, start: usize, end: usize) -> Result<StringArray, String> {
  let (lo, hi) = (s.offsets[start], s.offsets[end]);
  if hi - lo > i32::MAX as usize {
    return Err("more than 2 GiB of string data in one batch".into());
  }
  let offsets: Vec<i32> = s.offsets[start..=end].iter().map(|o| (o - lo) as i32).collect();
  StringArray::try_new(
    OffsetBuffer::new(ScalarBuffer::from(offsets)),
    Buffer::from(&s.bytes[lo..hi]),
    nulls(s.validity.as_deref(), start, end),
  )
  .map_err(|e| e.to_string())
}

fn array_of(c: &Column<'_>, start: usize, end: usize) -> Result<ArrayRef, String> {
  Ok(match &c.data {
    ColumnData::Utf8(s) => Arc::new(string_array(s, start, end)?),
    ColumnData::Int64 { values, validity } => Arc::new(Int64Array::new(
      values[start..end].to_vec().into(),
      nulls(validity.as_deref(), start, end),
    )),
    ColumnData::Int32 { values, validity } => Arc::new(Int32Array::new(
      values[start..end].to_vec().into(),
      nulls(validity.as_deref(), start, end),
    )),
    ColumnData::Float64 { values, validity } => Arc::new(Float64Array::new(
      values[start..end].to_vec().into(),
      nulls(validity.as_deref(), start, end),
    )),
    ColumnData::Boolean { values, validity } => {
      let v = &values[start..end];
      Arc::new(BooleanArray::new(
        BooleanBuffer::collect_bool(v.len(), |i| v[i] != 0),
        nulls(validity.as_deref(), start, end),
      ))
    }
    ColumnData::Utf8List {
      offsets,
      values,
      validity,
    } => {
      let (offs, lo, hi) = rebase(offsets, start, end);
      let child = string_array(values, lo, hi)?;
      Arc::new(
        ListArray::try_new(
          list_item(DataType::Utf8),
          offs,
          Arc::new(child),
          nulls(validity.as_deref(), start, end),
        )
        .map_err(|e| e.to_string())?,
      )
    }
    ColumnData::Int64List {
      offsets,
      values,
      validity,
    } => {
      let (offs, lo, hi) = rebase(offsets, start, end);
      let child = Int64Array::new(values[lo..hi].to_vec().into(), None);
      Arc::new(
        ListArray::try_new(
          list_item(DataType::Int64),
          offs,
          Arc::new(child),
          nulls(validity.as_deref(), start, end),
        )
        .map_err(|e| e.to_string())?,
      )
    }
    ColumnData::Embedding {
      dim,
      values,
      validity,
    } => {
      let child = Float32Array::new(values[start * dim..end * dim].to_vec().into(), None);
      Arc::new(
        FixedSizeListArray::try_new(
          list_item(DataType::Float32),
          *dim as i32,
          Arc::new(child),
          nulls(validity.as_deref(), start, end),
        )
        .map_err(|e| e.to_string())?,
      )
    }
  })
}
