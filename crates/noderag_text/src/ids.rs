//! Hash ids (docs/method.md §2.1): `H(tag, s)` = lowercase hex SHA-256 of the UTF-8 bytes of
//! `tag + ":" + s`, and one helper per node kind so callers cannot forget a normalisation.

use sha2::{Digest, Sha256};

use crate::normalize::{norm_entity, norm_text, Language};
use crate::TextError;

/// Node type names used as tags.
pub mod tags {
  pub const TEXT: &str = "text";
  pub const SEMANTIC_UNIT: &str = "semantic_unit";
  pub const ENTITY: &str = "entity";
  pub const RELATIONSHIP: &str = "relationship";
  pub const ATTRIBUTE: &str = "attribute";
  pub const HIGH_LEVEL_ELEMENT: &str = "high_level_element";
  pub const HIGH_LEVEL_ELEMENT_TITLE: &str = "high_level_element_title";
}

/// `H(tag, s)` for a tag known to be valid (the constants of [`tags`]).
fn h(tag: &str, s: &str) -> String {
  let mut hasher = Sha256::new();
  hasher.update(tag.as_bytes());
  hasher.update(b":");
  hasher.update(s.as_bytes());
  hex::encode(hasher.finalize())
}

/// `H(tag, s)` for any tag. A tag must be non-empty and contain no `:`, otherwise ids of
/// different types could collide (`H("a:b", c)` = `H("a", "b:" + c)`).
pub fn hash_id(tag: &str, s: &str) -> Result<String, TextError> {
  if tag.is_empty() || tag.contains(':') {
    return Err(TextError::Tag(tag.to_string()));
  }
  Ok(h(tag, s))
}

/// `text`: `H("text", norm_text(chunk))`.
pub fn text_id(chunk: &str) -> String {
  h(tags::TEXT, &norm_text(chunk))
}

/// `semantic_unit`: `H("semantic_unit", norm_text(unit))`.
pub fn semantic_unit_id(unit: &str) -> String {
  h(tags::SEMANTIC_UNIT, &norm_text(unit))
}

/// `entity`: `H("entity", norm_entity(name))`, or `None` when the name is empty after
/// normalisation (such names are discarded).
pub fn entity_id(name: &str, language: Language) -> Option<String> {
  let n = norm_entity(name, language);
  if n.is_empty() {
    None
  } else {
    Some(h(tags::ENTITY, &n))
  }
}

/// `entity` id of a name that is already `norm_entity`-ed (the stored `context`).
pub fn entity_id_of_normalized(normalized_name: &str) -> String {
  h(tags::ENTITY, normalized_name)
}

/// `relationship`: `H("relationship", lo + ":" + hi)` of the two entity ids in code-point order,
/// or `None` when both ends are the same entity (no relationship).
pub fn relationship_id(entity_id_a: &str, entity_id_b: &str) -> Option<String> {
  let (lo, hi) = match entity_id_a.cmp(entity_id_b) {
    std::cmp::Ordering::Less => (entity_id_a, entity_id_b),
    std::cmp::Ordering::Greater => (entity_id_b, entity_id_a),
    std::cmp::Ordering::Equal => return None,
  };
  Some(h(tags::RELATIONSHIP, &format!("{lo}:{hi}")))
}

/// `attribute`: `H("attribute", entity_id)`.
pub fn attribute_id(entity_id: &str) -> String {
  h(tags::ATTRIBUTE, entity_id)
}

/// `high_level_element`: `H("high_level_element", norm_text(description))`.
pub fn high_level_element_id(description: &str) -> String {
  h(tags::HIGH_LEVEL_ELEMENT, &norm_text(description))
}

/// `high_level_element_title`: `H("high_level_element_title", element_id)`.
pub fn high_level_element_title_id(element_id: &str) -> String {
  h(tags::HIGH_LEVEL_ELEMENT_TITLE, element_id)
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::normalize::norm_entity;

  // Every test vector of docs/method.md §2.1.
  const MARIE: &str = "df55c077da9a492e6122574089591bd17829c6f4d71c323d9e20976aa2e9788e";
  const PARIS: &str = "14d8b063e1b01733d61353c188fa5b80d7790b3c6c0881cbf548a632c6813fbf";

  #[test]
  fn entity_vectors() {
    assert_eq!(norm_entity("  Marie\tCurie ", Language::English), "MARIE CURIE");
    assert_eq!(entity_id("  Marie\tCurie ", Language::English).unwrap(), MARIE);
    assert_eq!(norm_entity("Paris", Language::English), "PARIS");
    assert_eq!(entity_id("Paris", Language::English).unwrap(), PARIS);
    assert_eq!(norm_entity("ＡＩ", Language::English), "AI");
    assert_eq!(
      entity_id("ＡＩ", Language::English).unwrap(),
      "a4782eef32492fe9050aaf8f0562a46893df5eb8f2b79b3cbe4fa79ef063ef76"
    );
    assert_eq!(norm_entity("居里夫人", Language::Chinese), "居里夫人");
    assert_eq!(
      entity_id("居里夫人", Language::Chinese).unwrap(),
      "c4e1e01b11eee03ef79fc210523f264ea503fcd604b56e2a2822742bceb360e9"
    );
    assert_eq!(entity_id_of_normalized("PARIS"), PARIS);
  }

  #[test]
  fn relationship_vector_is_order_independent() {
    let want = "4db555214a445ed00e7a84ae87d7fb59e5215608faffaa1015d4ceaa0f046f35";
    assert_eq!(relationship_id(MARIE, PARIS).unwrap(), want);
    assert_eq!(relationship_id(PARIS, MARIE).unwrap(), want);
    assert_eq!(relationship_id(PARIS, PARIS), None);
  }

  #[test]
  fn attribute_vector() {
    assert_eq!(
      attribute_id(MARIE),
      "1aa41d4deb4861d7adf76727763f9c24e3bcfee85040ff803bae264c772caf81"
    );
  }

  #[test]
  fn text_vector() {
    assert_eq!(norm_text("Hello  world.\n"), "Hello world.");
    assert_eq!(
      text_id("Hello  world.\n"),
      "b9ec61ebd939b0c12ccfb5ca767aadd68577cfa469a437793f315be47c3ab5c3"
    );
  }

  #[test]
  fn helpers_are_h_of_their_tag() {
    assert_eq!(
      semantic_unit_id(" a  b "),
      hash_id("semantic_unit", "a b").unwrap()
    );
    assert_eq!(
      high_level_element_id("x\ny"),
      hash_id("high_level_element", "x y").unwrap()
    );
    assert_eq!(
      high_level_element_title_id("e1"),
      hash_id("high_level_element_title", "e1").unwrap()
    );
    // Plain SHA-256 of "entity:PARIS", computed independently with coreutils sha256sum.
    assert_eq!(hash_id("entity", "PARIS").unwrap(), PARIS);
  }

  #[test]
  fn empty_entities_have_no_id_and_bad_tags_are_rejected() {
    assert_eq!(entity_id(" \u{3000}\t", Language::English), None);
    assert!(hash_id("a:b", "c").is_err());
    assert!(hash_id("", "c").is_err());
  }
}
