//! noderag_store: see ARCHITECTURE.md. Pure Rust; knows nothing of JS.
