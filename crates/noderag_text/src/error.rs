//! Errors of the text core. All are caller mistakes (bad arguments); nothing here does I/O.

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TextError {
  #[error("chunk_size must be at least 1 token, got {0}")]
  ChunkSize(usize),
  #[error("unknown language {0:?}: expected \"English\" or \"Chinese\"")]
  Language(String),
  #[error("invalid id tag {0:?}: a tag is a non-empty node type name without ':'")]
  Tag(String),
}
