//! Relationship strings and per-unit entity rules (docs/method.md §3.3).
//!
//! A decomposition gives, per semantic unit, a list of entity names and a list of relationship
//! strings expected as `SOURCE, RELATION, TARGET`. [`normalize_entities`] gives the unit's
//! entity list; [`parse_relationship`] applies steps 1–4 to one string and answers
//! [`RelationshipParse::NeedsRepair`] when they fail (step 5, a model call, is the caller's);
//! [`finalize_unit`] applies the rules after parsing to the unit's triples, in order.

use crate::normalize::{norm_entity, norm_text, Language};

/// A relationship split into its three parts, each trimmed and non-empty, not yet normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawTriple {
  pub source: String,
  pub relation: String,
  pub target: String,
}

/// Which rule split the string (for logs and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseMethod {
  /// Step 2: exactly three comma-separated parts.
  Comma,
  /// Step 3: more than three parts; the only split whose ends are entities of the unit.
  EntitySplit,
  /// Step 4: `|`, `;`, TAB or `->` gave exactly three parts.
  Separator,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelationshipParse {
  Parsed {
    triple: RawTriple,
    method: ParseMethod,
  },
  /// Steps 1–4 failed; the caller may ask the model (prompt R), then drop it (step 6).
  NeedsRepair,
  /// Nothing but whitespace (and an enclosing pair): nothing to repair.
  Empty,
}

/// The unit's entity list: `norm_entity` each name, drop names that become empty, remove
/// duplicates keeping the first occurrence.
pub fn normalize_entities<S: AsRef<str>>(names: &[S], language: Language) -> Vec<String> {
  let mut out: Vec<String> = Vec::with_capacity(names.len());
  for name in names {
    let n = norm_entity(name.as_ref(), language);
    if !n.is_empty() && !out.contains(&n) {
      out.push(n);
    }
  }
  out
}

/// Enclosing pairs removed by step 1: brackets (ASCII and full-width) and quotes.
const BRACKETS: &[(char, char)] = &[
  ('(', ')'),
  ('[', ']'),
  ('{', '}'),
  ('（', '）'),
  ('［', '］'),
  ('｛', '｝'),
];
const QUOTES: &[(char, char)] = &[
  ('"', '"'),
  ('\'', '\''),
  ('“', '”'),
  ('‘', '’'),
  ('«', '»'),
  ('「', '」'),
  ('『', '』'),
  ('＂', '＂'),
];

/// Step 1: trim, then remove one enclosing pair. A bracket pair must enclose the whole string
/// (`(a) and (b)` keeps its brackets).
fn strip_enclosing(s: &str) -> &str {
  let s = s.trim();
  let mut chars = s.chars();
  let (Some(first), Some(last)) = (chars.next(), chars.next_back()) else {
    return s;
  };
  let inner = &s[first.len_utf8()..s.len() - last.len_utf8()];
  if QUOTES.contains(&(first, last)) {
    return inner.trim();
  }
  if BRACKETS.contains(&(first, last)) {
    let mut depth = 0usize;
    for ch in inner.chars() {
      if ch == first {
        depth += 1;
      } else if ch == last {
        if depth == 0 {
          return s; // the first bracket closes before the end
        }
        depth -= 1;
      }
    }
    return inner.trim();
  }
  s
}

/// Splits on any of `seps`, trims the parts and keeps the non-empty ones.
fn parts<'a>(s: &'a str, seps: &[&str]) -> Vec<&'a str> {
  let mut out = Vec::new();
  let mut rest = s;
  loop {
    let next = seps
      .iter()
      .filter_map(|sep| rest.find(sep).map(|i| (i, sep.len())))
      .min();
    match next {
      Some((i, len)) => {
        out.push(rest[..i].trim());
        rest = &rest[i + len..];
      }
      None => {
        out.push(rest.trim());
        break;
      }
    }
  }
  out.retain(|p| !p.is_empty());
  out
}

fn triple(p: &[&str], method: ParseMethod) -> RelationshipParse {
  RelationshipParse::Parsed {
    triple: RawTriple {
      source: p[0].to_string(),
      relation: p[1].to_string(),
      target: p[2].to_string(),
    },
    method,
  }
}

/// Steps 1–4 of §3.3 for one relationship string. `unit_entities` is the unit's entity list
/// as returned by [`normalize_entities`] (used by step 3).
pub fn parse_relationship(s: &str, unit_entities: &[String], language: Language) -> RelationshipParse {
  let s = strip_enclosing(s);
  if s.is_empty() {
    return RelationshipParse::Empty;
  }
  // Step 2.
  let p = parts(s, &[",", "，"]);
  if p.len() == 3 {
    return triple(&p, ParseMethod::Comma);
  }
  // Step 3: prefix p[..i], middle p[i..j], suffix p[j..], each non-empty, joined with ", ".
  if p.len() > 3 {
    let is_entity = |xs: &[&str]| unit_entities.contains(&norm_entity(&xs.join(", "), language));
    let mut found: Option<(usize, usize)> = None;
    let mut count = 0;
    for i in 1..p.len() - 1 {
      if !is_entity(&p[..i]) {
        continue;
      }
      for j in i + 1..p.len() {
        if is_entity(&p[j..]) {
          count += 1;
          found = Some((i, j));
        }
      }
    }
    if count == 1 {
      let (i, j) = found.expect("one split was found");
      let (a, m, b) = (p[..i].join(", "), p[i..j].join(", "), p[j..].join(", "));
      return triple(&[&a, &m, &b], ParseMethod::EntitySplit);
    }
  }
  // Step 4.
  for seps in [&["|"][..], &[";", "；"], &["\t"], &["->", "→"]] {
    let p = parts(s, seps);
    if p.len() == 3 {
      return triple(&p, ParseMethod::Separator);
    }
  }
  RelationshipParse::NeedsRepair
}

/// A relationship after the post-parsing rules: ends `norm_entity`-ed, relation `norm_text`-ed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relationship {
  pub source: String,
  pub relation: String,
  pub target: String,
}

/// Why a parsed triple was not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
  /// Both ends normalise to the same entity.
  SameEntity,
  /// An end or the relation is empty after normalisation.
  EmptyPart,
}

/// A unit after the post-parsing rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitRelationships {
  /// The unit's entities followed by relationship ends that were missing, in order.
  pub entities: Vec<String>,
  pub relationships: Vec<Relationship>,
  /// Index into the input triples and the reason, for each triple not kept.
  pub dropped: Vec<(usize, DropReason)>,
}

/// The rules after parsing (§3.3): normalise ends and relation, drop same-entity relationships,
/// append ends missing from the unit's entity list. `entities` is the unit's list from
/// [`normalize_entities`]; `triples` are the parsed (or repaired) relationships in output order.
pub fn finalize_unit(entities: Vec<String>, triples: &[RawTriple], language: Language) -> UnitRelationships {
  let mut entities = entities;
  let mut relationships = Vec::with_capacity(triples.len());
  let mut dropped = Vec::new();
  for (i, t) in triples.iter().enumerate() {
    let source = norm_entity(&t.source, language);
    let target = norm_entity(&t.target, language);
    let relation = norm_text(&t.relation);
    if source.is_empty() || target.is_empty() || relation.is_empty() {
      dropped.push((i, DropReason::EmptyPart));
      continue;
    }
    if source == target {
      dropped.push((i, DropReason::SameEntity));
      continue;
    }
    for end in [&source, &target] {
      if !entities.contains(end) {
        entities.push(end.clone());
      }
    }
    relationships.push(Relationship {
      source,
      relation,
      target,
    });
  }
  UnitRelationships {
    entities,
    relationships,
    dropped,
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use Language::*;

  fn ents(xs: &[&str]) -> Vec<String> {
    normalize_entities(xs, English)
  }

  fn parsed(s: &str, e: &[String]) -> (String, String, String, ParseMethod) {
    match parse_relationship(s, e, English) {
      RelationshipParse::Parsed { triple, method } => (triple.source, triple.relation, triple.target, method),
      other => panic!("{s:?} → {other:?}"),
    }
  }

  fn t(a: &str, r: &str, b: &str) -> RawTriple {
    RawTriple {
      source: a.into(),
      relation: r.into(),
      target: b.into(),
    }
  }

  #[test]
  fn entity_lists_are_normalised_and_deduplicated_in_first_seen_order() {
    assert_eq!(
      ents(&["Paris", " marie  curie", "PARIS", "  ", "ＡＩ", "Marie Curie"]),
      ["PARIS", "MARIE CURIE", "AI"]
    );
    assert_eq!(
      normalize_entities(&["居里夫人", "居里夫人 ", "Paris"], Chinese),
      ["居里夫人", "Paris"]
    );
  }

  #[test]
  fn step_1_and_2_commas_and_enclosing_pairs() {
    let e = ents(&[]);
    let want = (
      "Marie Curie".into(),
      "was born in".into(),
      "Warsaw".into(),
      ParseMethod::Comma,
    );
    assert_eq!(parsed("Marie Curie, was born in, Warsaw", &e), want);
    assert_eq!(parsed("  (Marie Curie ,was born in,  Warsaw) ", &e), want);
    assert_eq!(parsed("[Marie Curie, was born in, Warsaw]", &e), want);
    assert_eq!(parsed("\"Marie Curie, was born in, Warsaw\"", &e), want);
    assert_eq!(parsed("“Marie Curie，was born in，Warsaw”", &e), want);
    assert_eq!(parsed("Marie Curie, was born in, Warsaw,", &e), want); // empty parts are ignored
    assert_eq!(
      parsed("居里夫人，出生于，华沙", &e),
      (
        "居里夫人".into(),
        "出生于".into(),
        "华沙".into(),
        ParseMethod::Comma
      )
    );
  }

  #[test]
  fn brackets_must_enclose_the_whole_string() {
    // "(a) b, c, (d)" keeps its brackets: the first one closes early.
    assert_eq!(
      parsed("(X) Corp, owns, (Y)", &ents(&[])),
      ("(X) Corp".into(), "owns".into(), "(Y)".into(), ParseMethod::Comma)
    );
  }

  #[test]
  fn step_3_entity_names_with_commas() {
    let e = ents(&["Apple, Inc.", "Cupertino, California"]);
    assert_eq!(
      parsed("Apple, Inc., is headquartered in, Cupertino, California", &e),
      (
        "Apple, Inc.".into(),
        "is headquartered in".into(),
        "Cupertino, California".into(),
        ParseMethod::EntitySplit
      )
    );
    // The middle may hold commas too.
    let e = ents(&["Apple, Inc.", "Tim Cook"]);
    assert_eq!(
      parsed("apple,  inc., since 2011, is led by, Tim Cook", &e),
      (
        "apple, inc.".into(),
        "since 2011, is led by".into(),
        "Tim Cook".into(),
        ParseMethod::EntitySplit
      )
    );
    // Two possible splits: ambiguous, and no other separator helps → repair.
    let e = ents(&["A", "A, B", "D"]);
    assert_eq!(
      parse_relationship("A, B, C, D", &e, English),
      RelationshipParse::NeedsRepair
    );
    // Without matching entities → repair.
    assert_eq!(
      parse_relationship("a, b, c, d", &ents(&["x"]), English),
      RelationshipParse::NeedsRepair
    );
  }

  #[test]
  fn step_4_other_separators_in_order() {
    let e = ents(&[]);
    assert_eq!(
      parsed("Curie | won | Nobel Prize", &e),
      (
        "Curie".into(),
        "won".into(),
        "Nobel Prize".into(),
        ParseMethod::Separator
      )
    );
    assert_eq!(parsed("Curie; won; Nobel Prize", &e).1, "won");
    assert_eq!(parsed("居里夫人；获得；诺贝尔奖", &e).2, "诺贝尔奖");
    assert_eq!(parsed("Curie\twon\tNobel Prize", &e).0, "Curie");
    assert_eq!(parsed("Curie -> won -> Nobel Prize", &e).1, "won");
    assert_eq!(parsed("Curie → won → Nobel Prize", &e).1, "won");
    // Commas inside a part do not stop the `|` split.
    assert_eq!(
      parsed("Curie | born in Warsaw, Poland | Warsaw", &e).1,
      "born in Warsaw, Poland"
    );
    // `|` is tried before `;`.
    assert_eq!(
      parsed("a|b;c|d", &e),
      ("a".into(), "b;c".into(), "d".into(), ParseMethod::Separator)
    );
  }

  #[test]
  fn unparseable_and_empty_strings() {
    let e = ents(&[]);
    assert_eq!(
      parse_relationship("Curie won the Nobel Prize", &e, English),
      RelationshipParse::NeedsRepair
    );
    assert_eq!(
      parse_relationship("a, b", &e, English),
      RelationshipParse::NeedsRepair
    );
    assert_eq!(parse_relationship("  ", &e, English), RelationshipParse::Empty);
    assert_eq!(parse_relationship("()", &e, English), RelationshipParse::Empty);
    assert_eq!(
      parse_relationship(", ,", &e, English),
      RelationshipParse::NeedsRepair
    );
  }

  #[test]
  fn finalize_normalises_drops_and_appends_ends() {
    let e = ents(&["Marie Curie", "Paris"]);
    let out = finalize_unit(
      e,
      &[
        t("marie curie", " moved  to ", "Paris"),
        t("Pierre Curie", "married", "Marie Curie"),
        t("Paris", "is", " paris"),
        t("Sorbonne", "is in", "Paris"),
        t("Pierre  Curie", "worked with", "marie curie"),
      ],
      English,
    );
    assert_eq!(out.entities, ["MARIE CURIE", "PARIS", "PIERRE CURIE", "SORBONNE"]);
    assert_eq!(
      out.relationships[0],
      Relationship {
        source: "MARIE CURIE".into(),
        relation: "moved to".into(),
        target: "PARIS".into()
      }
    );
    assert_eq!(out.relationships.len(), 4);
    assert_eq!(out.dropped, vec![(2, DropReason::SameEntity)]);
    let out = finalize_unit(vec![], &[t("\u{3000}", "x", "y")], Chinese);
    assert_eq!(out.dropped, vec![(0, DropReason::EmptyPart)]);
    assert!(out.entities.is_empty());
  }
}
