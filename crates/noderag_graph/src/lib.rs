//! noderag_graph: the graph algorithms of the NodeRAG pipeline and search, in pure Rust
//! (knows nothing of JS; the Node addon wraps it in `bindings/src/graph.rs`).
//!
//! - [`csr::Graph`]: compact undirected weighted graph (CSR), built from edge arrays.
//! - [`search::SearchGraph`]: the search graph of docs/method.md §6.1 (similarity edges,
//!   `unbalance_adjust`, transition matrix) and the propagation + typed top-k of §6.4.
//! - [`pagerank`], [`paths`] (bidirectional Dijkstra, set connection of §7.5),
//!   [`kcore`], [`betweenness`], [`leiden`], [`kmeans`] (§3.5, §3.7),
//!   [`phrase::PhraseMatcher`] (exact matching of §6.3).
//!
//! Every randomised algorithm takes its seed explicitly and uses [`rng::SplitMix64`], so
//! results are identical on every platform and run.

// Numeric kernels read best with index loops over parallel arrays.
#![allow(clippy::needless_range_loop)]

pub mod betweenness;
pub mod csr;
mod error;
pub mod kcore;
pub mod kmeans;
pub mod leiden;
pub mod pagerank;
pub mod paths;
pub mod phrase;
pub mod rng;
pub mod search;
mod select;

pub use select::top_n;

pub use error::{GraphError, Result};

/// The seed of every randomised step (docs/method.md §0).
pub const SEED: u64 = 42;
