//! noderag_text: the text core of noderag (docs/method.md §0, §2.1, §3.2, §3.3). Pure Rust; knows
//! nothing of JS. Everything here is a deterministic function of its inputs, so the same corpus
//! gives the same chunks, ids and token counts on every platform.
//!
//! - [`normalize`]: `norm_text`, `norm_entity`, `fold`, document clean-up.
//! - [`ids`]: `H(tag, s)` and one helper per node kind.
//! - [`tokens`]: `o200k_base` token counts, encoding, truncation to a token budget.
//! - [`tokens_memo`]: the same counts for texts that repeat line by line (retrieval contexts).
//! - [`chunk`]: the boundary-aware chunker (cut points in [`cuts`]).
//! - [`relationship`]: parsing of `SOURCE, RELATION, TARGET` strings and per-unit entity rules.

pub mod chunk;
pub mod cuts;
pub mod error;
pub mod ids;
pub mod normalize;
mod prefix;
pub mod relationship;
pub mod tokens;
pub mod tokens_memo;
pub mod utf16;

#[cfg(test)]
mod test_rng;

pub use chunk::{chunk_text, Chunk};
pub use error::TextError;
pub use normalize::{clean_document_text, fold, norm_entity, norm_text, Language};
