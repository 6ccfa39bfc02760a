//! Cheap integrity check of a parquet file: magic bytes, a parseable footer, row-group
//! row counts that add up, and column chunks that lie inside the file. It reads only the
//! footer (a few KiB), not the data pages, so it can vet every table of an index quickly;
//! a damaged data page is still only caught by a full read.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use parquet::file::metadata::ParquetMetaDataReader;

use crate::error::{Result, StoreError};

const MAGIC: &[u8; 4] = b"PAR1";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FooterInfo {
  pub num_rows: u64,
  pub num_row_groups: usize,
  /// Top-level (Arrow) columns.
  pub num_columns: usize,
  pub file_size: u64,
}

pub fn validate_footer(path: &Path) -> Result<FooterInfo> {
  let mut file = File::open(path).map_err(|e| StoreError::io(path, e))?;
  let size = file.metadata().map_err(|e| StoreError::io(path, e))?.len();
  // Smallest possible file: "PAR1" + footer length (4) + "PAR1".
  if size < 12 {
    return Err(StoreError::corrupt(path, format!("only {size} bytes long")));
  }
  let mut head = [0u8; 4];
  let mut tail = [0u8; 8];
  file.read_exact(&mut head).map_err(|e| StoreError::io(path, e))?;
  file
    .seek(SeekFrom::End(-8))
    .and_then(|_| file.read_exact(&mut tail))
    .map_err(|e| StoreError::io(path, e))?;
  if &head != MAGIC || &tail[4..] != MAGIC {
    return Err(StoreError::corrupt(
      path,
      "missing the PAR1 magic bytes (not parquet, or truncated)",
    ));
  }
  let footer_len = u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")) as u64;
  if footer_len + 12 > size {
    return Err(StoreError::corrupt(
      path,
      format!("footer length {footer_len} exceeds the file size {size}"),
    ));
  }
  let data_end = size - 8 - footer_len;

  let meta = ParquetMetaDataReader::new()
    .parse_and_finish(&file)
    .map_err(|e| StoreError::corrupt(path, e))?;
  let declared = meta.file_metadata().num_rows();
  let mut summed: i64 = 0;
  for (g, rg) in meta.row_groups().iter().enumerate() {
    summed += rg.num_rows();
    for cc in rg.columns() {
      let (start, len) = cc.byte_range();
      if start < 4 || start.checked_add(len).is_none_or(|end| end > data_end) {
        return Err(StoreError::corrupt(
          path,
          format!(
            "row group {g}, column {}: bytes {start}..{} lie outside the data area",
            cc.column_path(),
            start + len
          ),
        ));
      }
    }
  }
  if summed != declared || declared < 0 {
    return Err(StoreError::corrupt(
      path,
      format!("footer says {declared} rows but its row groups hold {summed}"),
    ));
  }
  let num_columns = meta
    .file_metadata()
    .schema_descr()
    .root_schema()
    .get_fields()
    .len();
  Ok(FooterInfo {
    num_rows: declared as u64,
    num_row_groups: meta.num_row_groups(),
    num_columns,
    file_size: size,
  })
}
