//! noderag_hnsw: see ARCHITECTURE.md. Pure Rust; knows nothing of JS.
