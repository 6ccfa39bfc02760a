//! Bindings for crates/noderag_text.
