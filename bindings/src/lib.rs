//! The napi-rs addon: converts types and owns handles. No algorithms live here;
//! they are in `crates/`. One module per exposed area.
#![deny(clippy::all)]

mod convert;
mod error;
mod graph;
mod hnsw;
mod store;
mod task;
mod text;

/// Version of the native core, for diagnostics (`noderag --version`).
#[napi_derive::napi]
pub fn native_version() -> String {
  env!("CARGO_PKG_VERSION").to_string()
}
