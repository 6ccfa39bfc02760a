//! noderag_text: see ARCHITECTURE.md. Pure Rust; knows nothing of JS.
