//! noderag_graph: see ARCHITECTURE.md. Pure Rust; knows nothing of JS.
