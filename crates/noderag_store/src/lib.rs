//! noderag_store: the parquet tables of an index (docs/method.md §5), read and written with
//! arrow-rs. Pure Rust; knows nothing of JS.
//!
//! - [`Table`]: ordered, typed columns held as flat buffers (see [`ColumnData`]).
//! - [`write_table`]: ZSTD (level [`ZSTD_LEVEL`]; [`ZSTD_LEVEL_EMBEDDINGS`] for vectors),
//!   `ARROW:schema` kept, `Utf8` strings,
//!   embeddings `FixedSizeList<Float32, dim>`; atomic replace ([`write_atomically`]).
//! - [`read_table`]: optional projection and type expectations ([`ColumnRequest`]);
//!   accepts `List<Float32|Float64>` embeddings and large/view string types.
//! - [`dictionary_encode`]: a string column as distinct values plus one key per row.
//! - [`validate_footer`]: cheap integrity check for the build.
//! - [`similarity_table`], [`write_similarity_table`]: hnsw_graph.parquet from the id map and
//!   the layer-0 links.
//! - [`derive_snapshot_payload`]: the payload of `cache/search_graph.bin` from the search tables.
//!
//! Every error is a [`StoreError`] naming the file.

mod atomic;
mod dictionary;
mod error;
mod footer;
mod read;
mod similarity;
mod snapshot;
mod table;
mod write;

pub use atomic::write_atomically;
pub use dictionary::{dictionary_encode, DictionaryStrings, NULL_KEY};
pub use error::{Result, StoreError};
pub use footer::{validate_footer, FooterInfo};
pub use read::{kind_of, read_table, ColumnRequest, ReadOptions};
pub use similarity::{similarity_table, write_similarity_table};
pub use snapshot::{derive_snapshot_payload, SnapshotCounts, SnapshotPayload, SnapshotSources};
pub use table::{Column, ColumnData, ColumnKind, Strings, Table, Validity};
pub use write::{write_table, write_table_with, WriteOptions, ZSTD_LEVEL, ZSTD_LEVEL_EMBEDDINGS};

#[cfg(test)]
mod tests;
