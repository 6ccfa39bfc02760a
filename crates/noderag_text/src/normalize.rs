//! The normal forms of docs/method.md §0 and the document clean-up of §3.2.
//!
//! "Whitespace" is the Unicode `White_Space` property, which is exactly what Rust's
//! `char::is_whitespace` tests (U+FEFF is not whitespace). Casing uses Rust's
//! `str::to_uppercase` / `to_lowercase`: Unicode default full case mappings, locale-independent
//! (`ß` → `SS`, final sigma handled), which is what the spec asks for.

use std::borrow::Cow;

use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

use crate::TextError;

/// The `language` setting: decides whether entity names are upper-cased.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
  English,
  Chinese,
}

impl Language {
  /// Parses the config value (`English` or `Chinese`, exact spelling as in Node_config.yaml).
  pub fn parse(s: &str) -> Result<Self, TextError> {
    match s {
      "English" => Ok(Language::English),
      "Chinese" => Ok(Language::Chinese),
      other => Err(TextError::Language(other.to_string())),
    }
  }
}

/// Unicode NFKC, skipping the work when the quick check proves the text is already NFKC
/// (all ASCII text, most CJK text).
fn nfkc(s: &str) -> Cow<'_, str> {
  if is_nfkc_quick(s.chars()) == IsNormalized::Yes {
    Cow::Borrowed(s)
  } else {
    Cow::Owned(s.nfkc().collect())
  }
}

/// `norm_text(s)`: NFKC; strip leading and trailing whitespace; each run of whitespace becomes
/// one U+0020.
pub fn norm_text(s: &str) -> String {
  let n = nfkc(s);
  let mut out = String::with_capacity(n.len());
  let mut pending_space = false;
  for ch in n.chars() {
    if ch.is_whitespace() {
      // Only a space between two non-whitespace characters survives.
      pending_space = !out.is_empty();
    } else {
      if pending_space {
        out.push(' ');
        pending_space = false;
      }
      out.push(ch);
    }
  }
  out
}

/// `norm_entity(s)`: `norm_text(s)`, upper-cased (full, locale-independent) for English,
/// case unchanged for Chinese.
pub fn norm_entity(s: &str, language: Language) -> String {
  let t = norm_text(s);
  match language {
    Language::English => t.to_uppercase(),
    Language::Chinese => t,
  }
}

/// `fold(s)`: `norm_text(s)` then full lower-casing. Used only for matching (§6.3).
pub fn fold(s: &str) -> String {
  norm_text(s).to_lowercase()
}

/// Document clean-up after extraction (§3.2): CRLF and lone CR become LF; control characters
/// (general category Cc) other than TAB and LF are removed. Borrows when nothing changes.
pub fn clean_document_text(s: &str) -> Cow<'_, str> {
  let needs_work = s.chars().any(|c| c.is_control() && c != '\t' && c != '\n');
  if !needs_work {
    return Cow::Borrowed(s);
  }
  let mut out = String::with_capacity(s.len());
  let mut chars = s.chars().peekable();
  while let Some(c) = chars.next() {
    match c {
      '\r' => {
        if chars.peek() == Some(&'\n') {
          chars.next();
        }
        out.push('\n');
      }
      '\t' | '\n' => out.push(c),
      c if c.is_control() => {}
      c => out.push(c),
    }
  }
  Cow::Owned(out)
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn norm_text_collapses_unicode_whitespace_and_applies_nfkc() {
    assert_eq!(norm_text("Hello  world.\n"), "Hello world.");
    assert_eq!(norm_text("\u{3000}a\u{00A0}\u{2003}b\t\n c  "), "a b c");
    assert_eq!(norm_text("ＡＩ ﬁ ①"), "AI fi 1");
    assert_eq!(norm_text(""), "");
    assert_eq!(norm_text(" \t\n "), "");
  }

  #[test]
  fn feff_is_not_whitespace() {
    assert_eq!(norm_text("\u{FEFF}x\u{FEFF}"), "\u{FEFF}x\u{FEFF}");
    assert_eq!(norm_text("a \u{FEFF} b"), "a \u{FEFF} b");
  }

  #[test]
  fn norm_entity_upper_cases_english_only() {
    assert_eq!(norm_entity("  Marie\tCurie ", Language::English), "MARIE CURIE");
    assert_eq!(norm_entity("straße", Language::English), "STRASSE");
    assert_eq!(norm_entity("ＡＩ", Language::English), "AI");
    assert_eq!(norm_entity("居里夫人", Language::Chinese), "居里夫人");
    assert_eq!(norm_entity(" Marie  Curie", Language::Chinese), "Marie Curie");
    assert_eq!(norm_entity(" \u{3000} ", Language::English), "");
  }

  #[test]
  fn fold_lower_cases_fully() {
    assert_eq!(fold("  PARIS   Agreement "), "paris agreement");
    assert_eq!(fold("İ"), "i\u{307}");
    // Final sigma is context-dependent in the default mapping.
    assert_eq!(fold("ΟΔΟΣ ΣΑ"), "οδο\u{3C2} \u{3C3}α");
  }

  #[test]
  fn language_parse_is_exact() {
    assert_eq!(Language::parse("English"), Ok(Language::English));
    assert_eq!(Language::parse("Chinese"), Ok(Language::Chinese));
    assert!(Language::parse("english").is_err());
  }

  #[test]
  fn clean_document_text_normalises_line_ends_and_drops_controls() {
    assert_eq!(clean_document_text("a\r\nb\rc\n\rd"), "a\nb\nc\n\nd");
    assert_eq!(
      clean_document_text("x\u{0}y\u{7}z\u{1b}[0m\u{85}\t\n"),
      "xyz[0m\t\n"
    );
    assert!(matches!(clean_document_text("plain\ttext\n"), Cow::Borrowed(_)));
    // Not control characters: kept.
    assert_eq!(
      clean_document_text("\u{FEFF}a\u{2028}b\u{200B}\r"),
      "\u{FEFF}a\u{2028}b\u{200B}\n"
    );
  }
}
