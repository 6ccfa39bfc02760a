//! Bindings for crates/noderag_hnsw.
