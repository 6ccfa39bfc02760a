//! Bindings for crates/noderag_text: normal forms, hash ids, `o200k_base` token counts, the
//! chunker and the relationship-string parser (docs/method.md §0, §2.1, §3.2, §3.3).
//!
//! Sync or async by cost: everything is sync except `chunkTextAsync`. Normal forms, ids and
//! token counts of prompt-sized strings take microseconds (an entity id ≈ 1 µs per call).
//! `chunkText` costs about 0.1–0.2 ms per 1,000 characters (a 62,000-character document
//! ≈ 10 ms; the 568,000-character HotpotQA corpus 70–190 ms, depending on machine load), so
//! the build pipeline should use `chunkTextAsync` for documents and keep the event loop free.
//!
//! Offsets cross as UTF-16 code units (JS string indices), not bytes: `text.slice(starts[i],
//! ends[i]) === texts[i]` in JS. Strings from JS are converted to UTF-8 by napi; a lone
//! surrogate becomes U+FFFD.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use noderag_text::relationship::{self, DropReason, ParseMethod, RawTriple, RelationshipParse};
use noderag_text::{ids, tokens, tokens_memo, utf16::utf16_offsets, Language, TextError};

use crate::convert::NativeError;
use crate::error::guard;
use crate::task::Job;

fn language(s: &str) -> napi::Result<Language> {
  Language::parse(s).map_err(TextError::into_napi)
}

// ---------------------------------------------------------------------------------------
// Normal forms
// ---------------------------------------------------------------------------------------

/// `norm_text(s)`: NFKC, trim Unicode whitespace, collapse whitespace runs to one space.
#[napi]
pub fn norm_text(s: String) -> napi::Result<String> {
  guard(|| Ok(noderag_text::norm_text(&s)))
}

/// `norm_entity(s)`: `norm_text`, then full upper-casing for English (unchanged for Chinese).
#[napi]
pub fn norm_entity(
  s: String,
  #[napi(ts_arg_type = "'English' | 'Chinese'")] language_name: String,
) -> napi::Result<String> {
  guard(|| Ok(noderag_text::norm_entity(&s, language(&language_name)?)))
}

/// `fold(s)`: `norm_text`, then full lower-casing (matching only).
#[napi]
pub fn fold(s: String) -> napi::Result<String> {
  guard(|| Ok(noderag_text::fold(&s)))
}

/// Document clean-up (§3.2): CRLF/CR → LF, control characters other than TAB and LF removed.
#[napi]
pub fn clean_document_text(s: String) -> napi::Result<String> {
  guard(|| Ok(noderag_text::clean_document_text(&s).into_owned()))
}

// ---------------------------------------------------------------------------------------
// Ids
// ---------------------------------------------------------------------------------------

/// `H(tag, s)`: lowercase hex SHA-256 of `tag + ":" + s`. The tag must be non-empty without ':'.
#[napi]
pub fn hash_id(tag: String, s: String) -> napi::Result<String> {
  guard(|| ids::hash_id(&tag, &s).map_err(TextError::into_napi))
}

/// `H("text", norm_text(chunk))`.
#[napi]
pub fn text_id(chunk: String) -> napi::Result<String> {
  guard(|| Ok(ids::text_id(&chunk)))
}

/// `H("semantic_unit", norm_text(unit))`.
#[napi]
pub fn semantic_unit_id(unit: String) -> napi::Result<String> {
  guard(|| Ok(ids::semantic_unit_id(&unit)))
}

/// `H("entity", norm_entity(name))`, or null when the name is empty after normalisation.
#[napi]
pub fn entity_id(
  name: String,
  #[napi(ts_arg_type = "'English' | 'Chinese'")] language_name: String,
) -> napi::Result<Option<String>> {
  guard(|| Ok(ids::entity_id(&name, language(&language_name)?)))
}

/// `H("relationship", lo + ":" + hi)` of two entity ids, or null when they are equal.
#[napi]
pub fn relationship_id(entity_id_a: String, entity_id_b: String) -> napi::Result<Option<String>> {
  guard(|| Ok(ids::relationship_id(&entity_id_a, &entity_id_b)))
}

/// `H("attribute", entityId)`.
#[napi]
pub fn attribute_id(entity_id: String) -> napi::Result<String> {
  guard(|| Ok(ids::attribute_id(&entity_id)))
}

/// `H("high_level_element", norm_text(description))`.
#[napi]
pub fn high_level_element_id(description: String) -> napi::Result<String> {
  guard(|| Ok(ids::high_level_element_id(&description)))
}

/// `H("high_level_element_title", elementId)`.
#[napi]
pub fn high_level_element_title_id(element_id: String) -> napi::Result<String> {
  guard(|| Ok(ids::high_level_element_title_id(&element_id)))
}

// ---------------------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------------------

/// Loads the `o200k_base` tokenizer now (~60 ms once per process) instead of on first use.
#[napi]
pub fn warm_tokenizer() -> napi::Result<()> {
  guard(|| {
    tokens::warm_up();
    Ok(())
  })
}

/// `o200k_base` tokens of `s` (special-token text counts as ordinary text).
#[napi]
pub fn count_tokens(s: String) -> napi::Result<u32> {
  guard(|| Ok(tokens::count_tokens(&s) as u32))
}

/// `count_tokens(s)` summed over pieces remembered from earlier calls on this thread (texts
/// that repeat line by line, such as retrieval contexts; noderag_text::tokens_memo).
#[napi]
pub fn count_tokens_memo(s: String) -> napi::Result<u32> {
  guard(|| Ok(tokens_memo::count_tokens_memo(&s) as u32))
}

/// Token counts of many strings at once, in input order.
#[napi]
pub fn count_tokens_batch(texts: Vec<String>) -> napi::Result<Uint32Array> {
  guard(|| Ok(Uint32Array::new(tokens::count_tokens_batch(&texts))))
}

/// `o200k_base` token ids of `s`.
#[napi]
pub fn encode_tokens(s: String) -> napi::Result<Uint32Array> {
  guard(|| Ok(Uint32Array::new(tokens::encode(&s))))
}

/// The longest prefix of `s` (on a character boundary) within `maxTokens` tokens; `s` if it fits.
#[napi]
pub fn truncate_to_tokens(s: String, max_tokens: u32) -> napi::Result<String> {
  guard(|| Ok(tokens::truncate_to_tokens(&s, max_tokens as usize).to_string()))
}

// ---------------------------------------------------------------------------------------
// Chunking
// ---------------------------------------------------------------------------------------

/// Chunks of a text, as parallel arrays. `starts[i]`/`ends[i]` are UTF-16 offsets (JS string
/// indices) into the input: `text.slice(starts[i], ends[i]) === texts[i]`.
#[napi(object)]
pub struct NativeChunks {
  pub texts: Vec<String>,
  pub token_counts: Uint32Array,
  pub starts: Uint32Array,
  pub ends: Uint32Array,
}

/// Rust-side result (Send), turned into `NativeChunks` on the JS thread.
pub struct ChunkOutput {
  texts: Vec<String>,
  token_counts: Vec<u32>,
  starts: Vec<u32>,
  ends: Vec<u32>,
}

impl From<ChunkOutput> for NativeChunks {
  fn from(o: ChunkOutput) -> Self {
    NativeChunks {
      texts: o.texts,
      token_counts: Uint32Array::new(o.token_counts),
      starts: Uint32Array::new(o.starts),
      ends: Uint32Array::new(o.ends),
    }
  }
}

fn chunk(text: &str, chunk_size: u32) -> napi::Result<ChunkOutput> {
  let chunks = noderag_text::chunk_text(text, chunk_size as usize).map_err(TextError::into_napi)?;
  // Starts and ends interleaved are ascending (chunks do not overlap): one pass converts both.
  let bytes: Vec<usize> = chunks.iter().flat_map(|c| [c.start, c.end]).collect();
  let units = utf16_offsets(text, &bytes);
  Ok(ChunkOutput {
    texts: chunks.iter().map(|c| c.text.to_string()).collect(),
    token_counts: chunks.iter().map(|c| c.tokens).collect(),
    starts: units.iter().step_by(2).copied().collect(),
    ends: units.iter().skip(1).step_by(2).copied().collect(),
  })
}

/// Splits a document into chunks of at most `chunkSize` tokens at the best boundary (§3.2),
/// synchronously. Prefer `chunkTextAsync` for whole documents.
#[napi]
pub fn chunk_text(text: String, chunk_size: u32) -> napi::Result<NativeChunks> {
  guard(|| chunk(&text, chunk_size).map(NativeChunks::from))
}

/// `chunkText` on the libuv pool, so a large document does not block the event loop.
#[napi(ts_return_type = "Promise<NativeChunks>")]
pub fn chunk_text_async(text: String, chunk_size: u32) -> AsyncTask<Job<ChunkOutput, NativeChunks>> {
  Job::task(move || chunk(&text, chunk_size), NativeChunks::from)
}

// ---------------------------------------------------------------------------------------
// Relationship strings (§3.3)
// ---------------------------------------------------------------------------------------

/// A unit's entity names: `norm_entity` each, drop empties, dedupe keeping the first.
#[napi]
pub fn normalize_entities(
  names: Vec<String>,
  #[napi(ts_arg_type = "'English' | 'Chinese'")] language_name: String,
) -> napi::Result<Vec<String>> {
  guard(|| {
    Ok(relationship::normalize_entities(
      &names,
      language(&language_name)?,
    ))
  })
}

/// Result of steps 1–4 for one relationship string. `status` is `parsed` (the three parts,
/// trimmed, not yet normalised, and the `method` that split them), `needs_repair` (ask the
/// model, step 5) or `empty` (nothing to repair).
#[napi(object)]
pub struct NativeRelationshipParse {
  #[napi(ts_type = "'parsed' | 'needs_repair' | 'empty'")]
  pub status: String,
  pub source: Option<String>,
  pub relation: Option<String>,
  pub target: Option<String>,
  #[napi(ts_type = "'comma' | 'entity_split' | 'separator'")]
  pub method: Option<String>,
}

fn native_parse(parse: RelationshipParse) -> NativeRelationshipParse {
  let none = |status: &str| NativeRelationshipParse {
    status: status.to_string(),
    source: None,
    relation: None,
    target: None,
    method: None,
  };
  match parse {
    RelationshipParse::Parsed { triple, method } => NativeRelationshipParse {
      status: "parsed".to_string(),
      source: Some(triple.source),
      relation: Some(triple.relation),
      target: Some(triple.target),
      method: Some(
        match method {
          ParseMethod::Comma => "comma",
          ParseMethod::EntitySplit => "entity_split",
          ParseMethod::Separator => "separator",
        }
        .to_string(),
      ),
    },
    RelationshipParse::NeedsRepair => none("needs_repair"),
    RelationshipParse::Empty => none("empty"),
  }
}

/// Steps 1–4 of §3.3. `unitEntities` must be the unit's list from `normalizeEntities`.
#[napi]
pub fn parse_relationship(
  s: String,
  unit_entities: Vec<String>,
  #[napi(ts_arg_type = "'English' | 'Chinese'")] language_name: String,
) -> napi::Result<NativeRelationshipParse> {
  guard(|| {
    Ok(native_parse(relationship::parse_relationship(
      &s,
      &unit_entities,
      language(&language_name)?,
    )))
  })
}

/// A whole unit in one call: its entity list from `normalizeEntities`, each relationship
/// string through steps 1–4 against that list, and, when none needs a repair call,
/// `finalizeUnit` over the parsed triples in order (`final`; absent when one needs repair,
/// then the caller repairs and calls `finalizeUnit` itself).
#[napi(object)]
pub struct NativeUnitParse {
  pub entities: Vec<String>,
  pub parses: Vec<NativeRelationshipParse>,
  #[napi(js_name = "final")]
  pub finalized: Option<NativeUnitRelationships>,
}

/// `normalizeEntities`, `parseRelationship` per string and (without repairs) `finalizeUnit`,
/// with one boundary crossing per unit instead of one per relationship.
#[napi]
pub fn parse_unit(
  names: Vec<String>,
  relationships: Vec<String>,
  #[napi(ts_arg_type = "'English' | 'Chinese'")] language_name: String,
) -> napi::Result<NativeUnitParse> {
  guard(|| {
    let lang = language(&language_name)?;
    let entities = relationship::normalize_entities(&names, lang);
    let parses: Vec<RelationshipParse> = relationships
      .iter()
      .map(|s| relationship::parse_relationship(s, &entities, lang))
      .collect();
    let finalized = if parses.iter().any(|p| matches!(p, RelationshipParse::NeedsRepair)) {
      None
    } else {
      let raw: Vec<RawTriple> = parses
        .iter()
        .filter_map(|p| match p {
          RelationshipParse::Parsed { triple, .. } => Some(triple.clone()),
          _ => None,
        })
        .collect();
      Some(native_unit(relationship::finalize_unit(
        entities.clone(),
        &raw,
        lang,
      )))
    };
    Ok(NativeUnitParse {
      entities,
      parses: parses.into_iter().map(native_parse).collect(),
      finalized,
    })
  })
}

/// A relationship as three strings (input: raw parts; output: normalised).
#[napi(object)]
pub struct NativeTriple {
  pub source: String,
  pub relation: String,
  pub target: String,
}

/// A triple that `finalizeUnit` did not keep: its index in the input and why.
#[napi(object)]
pub struct NativeDroppedTriple {
  pub index: u32,
  #[napi(ts_type = "'same_entity' | 'empty_part'")]
  pub reason: String,
}

#[napi(object)]
pub struct NativeUnitRelationships {
  pub entities: Vec<String>,
  pub relationships: Vec<NativeTriple>,
  pub dropped: Vec<NativeDroppedTriple>,
}

/// The rules after parsing (§3.3): ends `norm_entity`-ed and relation `norm_text`-ed,
/// same-entity triples dropped, ends missing from the entity list appended in order.
#[napi]
pub fn finalize_unit(
  entities: Vec<String>,
  triples: Vec<NativeTriple>,
  #[napi(ts_arg_type = "'English' | 'Chinese'")] language_name: String,
) -> napi::Result<NativeUnitRelationships> {
  guard(|| {
    let lang = language(&language_name)?;
    let raw: Vec<RawTriple> = triples
      .into_iter()
      .map(|t| RawTriple {
        source: t.source,
        relation: t.relation,
        target: t.target,
      })
      .collect();
    Ok(native_unit(relationship::finalize_unit(entities, &raw, lang)))
  })
}

fn native_unit(out: relationship::UnitRelationships) -> NativeUnitRelationships {
  NativeUnitRelationships {
    entities: out.entities,
    relationships: out
      .relationships
      .into_iter()
      .map(|r| NativeTriple {
        source: r.source,
        relation: r.relation,
        target: r.target,
      })
      .collect(),
    dropped: out
      .dropped
      .into_iter()
      .map(|(i, reason)| NativeDroppedTriple {
        index: i as u32,
        reason: match reason {
          DropReason::SameEntity => "same_entity",
          DropReason::EmptyPart => "empty_part",
        }
        .to_string(),
      })
      .collect(),
  }
}
