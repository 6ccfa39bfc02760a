//! Bindings for crates/noderag_store.
