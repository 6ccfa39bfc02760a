/// Errors of the graph core. Every one is a caller mistake (bad ids, lengths or
/// parameters); the message names the offending argument.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum GraphError {
  #[error("{0}")]
  InvalidArgument(String),
}

pub type Result<T> = std::result::Result<T, GraphError>;

pub(crate) fn invalid(msg: impl Into<String>) -> GraphError {
  GraphError::InvalidArgument(msg.into())
}
