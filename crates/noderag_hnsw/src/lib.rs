//! noderag_hnsw: the vector index of noderag (docs/method.md §3.9, §5 `HNSW.bin`).
//!
//! - [`HnswIndex`]: built by our own construction (`build.rs`: batch-synchronous, parallel,
//!   the same graph on any thread count); searched on a flat view of that graph
//!   (`view.rs`); saved to one validated, checksummed file (`container.rs`).
//! - [`exact_search`]: brute force over one flat slice, the recall oracle and the answer
//!   for small indexes.
//!
//! Pure Rust; knows nothing of JS.

mod build;
mod code_dot;
mod container;
mod container_v1;
mod distance;
mod error;
mod exact;
mod graph;
mod index;
mod prefetch;
mod quantized;
#[cfg(feature = "testing")]
pub mod testing;
mod topk;
mod view;
mod walk_code;

pub use build::{default_threads, BATCH};
pub use code_dot::{has_avx_vnni, set_code_vnni};
pub use container::{read_file_header, FileHeader, FORMAT_VERSION, LIBRARY, LIBRARY_VERSION, MAGIC};
pub use distance::{dot, l2_squared, normalize, Space};
pub use error::{ErrorKind, HnswError, Result};
pub use exact::exact_search;
pub use graph::LEVEL_SEED;
pub use index::{HnswIndex, IndexParams, EXACT_SEARCH_BELOW};
pub use topk::SearchResult;
