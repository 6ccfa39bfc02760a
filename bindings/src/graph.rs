//! Bindings for crates/noderag_graph.
