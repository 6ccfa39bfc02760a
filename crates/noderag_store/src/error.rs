//! Typed errors. Every variant names the file it concerns, so a message read in a log
//! ("… /idx/cache/text.parquet …") says where to look without a backtrace.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
  /// The file (or the folder it should be written into) does not exist.
  #[error("parquet file not found: {}", path.display())]
  NotFound { path: PathBuf },

  /// Any other I/O failure (permissions, disk full, …).
  #[error("I/O error on {}: {source}", path.display())]
  Io {
    path: PathBuf,
    #[source]
    source: std::io::Error,
  },

  /// Not a parquet file, truncated, or damaged (bad footer, bad page, bad compression).
  #[error("{} is not a readable parquet file (corrupt or truncated): {reason}", path.display())]
  Corrupt { path: PathBuf, reason: String },

  /// A requested column is absent from the file.
  #[error("{}: missing column `{column}` (the file has: {available})", path.display())]
  MissingColumn {
    path: PathBuf,
    column: String,
    available: String,
  },

  /// A column exists but its type is not the one the caller asked for.
  #[error("{}: column `{column}` has type {got}, expected {expected}", path.display())]
  WrongColumnType {
    path: PathBuf,
    column: String,
    expected: String,
    got: String,
  },

  /// An embedding column whose vector length differs from the expected dimension.
  #[error("{}: column `{column}` holds vectors of dimension {got}, expected {expected}", path.display())]
  DimensionMismatch {
    path: PathBuf,
    column: String,
    expected: usize,
    got: usize,
  },

  /// The file's column type (or its content, e.g. ragged vectors) is outside what we read.
  #[error("{}: column `{column}`: {reason}", path.display())]
  Unsupported {
    path: PathBuf,
    column: String,
    reason: String,
  },

  /// The table handed to a write is inconsistent (lengths, offsets, names). Nothing was written.
  #[error("invalid table for {}: {reason}", path.display())]
  InvalidTable { path: PathBuf, reason: String },
}

impl StoreError {
  pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
    if source.kind() == std::io::ErrorKind::NotFound {
      StoreError::NotFound {
        path: path.to_path_buf(),
      }
    } else {
      StoreError::Io {
        path: path.to_path_buf(),
        source,
      }
    }
  }

  pub(crate) fn corrupt(path: &std::path::Path, reason: impl std::fmt::Display) -> Self {
    StoreError::Corrupt {
      path: path.to_path_buf(),
      reason: reason.to_string(),
    }
  }

  pub(crate) fn invalid(path: &std::path::Path, reason: impl Into<String>) -> Self {
    StoreError::InvalidTable {
      path: path.to_path_buf(),
      reason: reason.into(),
    }
  }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
