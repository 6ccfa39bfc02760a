//! Typed errors. Every file error names the file; the bindings map each variant to a
//! stable code (see `HnswError::kind`).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum HnswError {
  /// A caller passed something unusable (wrong length, zero dimension, m out of range …).
  #[error("{0}")]
  InvalidArgument(String),

  /// The index file does not exist.
  #[error("vector index file {path} does not exist")]
  Missing { path: PathBuf },

  /// Reading or writing failed at the OS level.
  #[error("I/O error on vector index file {path}: {source}")]
  Io {
    path: PathBuf,
    #[source]
    source: std::io::Error,
  },

  /// The file exists but is not a valid, intact index file (magic, header, sizes,
  /// checksums, or the vector count the caller expects).
  #[error("vector index file {path} is corrupt: {reason}")]
  Corrupt { path: PathBuf, reason: String },

  /// The file is intact but holds vectors of another dimension than the caller expects.
  #[error("vector index file {path} holds vectors of dimension {found}, expected {expected}")]
  DimensionMismatch {
    path: PathBuf,
    expected: usize,
    found: usize,
  },

  /// A failure of the index's own invariants we did not foresee (should not happen).
  #[error("vector index library error: {0}")]
  Library(String),
}

/// Coarse category of an error, for mapping to stable error codes at the boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
  InvalidArgument,
  Io,
  Corrupt,
  DimensionMismatch,
  Internal,
}

impl HnswError {
  pub fn kind(&self) -> ErrorKind {
    match self {
      HnswError::InvalidArgument(_) => ErrorKind::InvalidArgument,
      HnswError::Missing { .. } | HnswError::Io { .. } => ErrorKind::Io,
      HnswError::Corrupt { .. } => ErrorKind::Corrupt,
      HnswError::DimensionMismatch { .. } => ErrorKind::DimensionMismatch,
      HnswError::Library(_) => ErrorKind::Internal,
    }
  }

  pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> HnswError {
    let path = path.into();
    if source.kind() == std::io::ErrorKind::NotFound {
      HnswError::Missing { path }
    } else {
      HnswError::Io { path, source }
    }
  }

  pub(crate) fn corrupt(path: impl Into<PathBuf>, reason: impl Into<String>) -> HnswError {
    HnswError::Corrupt {
      path: path.into(),
      reason: reason.into(),
    }
  }
}

pub type Result<T> = std::result::Result<T, HnswError>;
