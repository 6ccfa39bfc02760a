//! noderag_hnsw: the vector index of noderag (docs/method.md §3.9, §5 `HNSW.bin`).
//!
//! - [`HnswIndex`]: built and persisted with the `hnsw_rs` crate (single-threaded insertion
//!   in label order, so the same inputs build the same graph); searched on a flat view of
//!   that graph (`view.rs`); saved to one validated, checksummed file (`container.rs`).
//! - [`exact_search`]: brute force over one flat slice, the recall oracle and the answer
//!   for small indexes.
//!
//! Pure Rust; knows nothing of JS.

mod container;
mod distance;
mod error;
mod exact;
mod index;
mod quantized;
#[cfg(feature = "testing")]
pub mod testing;
mod topk;
mod view;

pub use container::{read_file_header, FileHeader, FORMAT_VERSION, LIBRARY, LIBRARY_VERSION, MAGIC};
pub use distance::{dot, l2_squared, normalize, Space};
pub use error::{ErrorKind, HnswError, Result};
pub use exact::exact_search;
pub use index::{HnswIndex, IndexParams, EXACT_SEARCH_BELOW, LEVEL_SEED};
pub use topk::SearchResult;
