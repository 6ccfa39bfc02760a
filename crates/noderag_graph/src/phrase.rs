//! Exact-phrase matching over entity names and high-level-element titles (docs/method.md §6.3).
//!
//! Text is folded — `fold(s)` = NFKC, trim, collapse whitespace, Unicode default full
//! lower-casing — and split into tokens:
//! - a maximal run of CJK ideographs is ONE token (Chinese has no spaces, so "whole word"
//!   means "whole run of ideographs": `北京` matches `北京` and `北京 大学`, not `北京大学`);
//! - a maximal run of other word characters is one token. Word characters: letters
//!   (Alphabetic), marks (General_Category M), numbers (Numeric) and connector punctuation
//!   (`_` and the other Pc characters). A mark continues whatever run it follows;
//! - any other non-whitespace character is a token by itself (`c++` → `c` `+` `+`,
//!   `u.s.` → `u` `.` `s` `.`), so punctuation takes part in matching.
//!
//! A phrase matches a name when its token sequence occurs contiguously in the name's.
//! The index is positional: token → [(name, position)]. A phrase walks the postings of its
//! rarest token and checks the neighbouring positions, so the cost follows the postings,
//! not the number of names.
//!
//! (The same fold/tokeniser rules are small enough to live here; crates/noderag_text has
//! the general text normal forms.)

use std::collections::HashMap;

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// `norm_text(s)` then lower-casing: NFKC, trim, whitespace runs → one space, lowercase.
pub fn fold(s: &str) -> String {
  let nfkc: String = s.nfkc().collect();
  let mut out = String::with_capacity(nfkc.len());
  for (k, word) in nfkc
    .split(char::is_whitespace)
    .filter(|w| !w.is_empty())
    .enumerate()
  {
    if k > 0 {
      out.push(' ');
    }
    out.push_str(word);
  }
  out.to_lowercase()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
  Space,
  Ideograph,
  Word,
  Mark,
  Other,
}

fn class(c: char) -> Class {
  if c.is_whitespace() {
    Class::Space
  } else if is_cjk_ideograph(c) {
    Class::Ideograph
  } else if is_combining_mark(c) {
    Class::Mark
  } else if c.is_alphabetic() || c.is_numeric() || is_connector_punctuation(c) {
    Class::Word
  } else {
    Class::Other
  }
}

/// Unicode `Ideographic` characters of the CJK blocks (unified, extensions A–I,
/// compatibility) plus 〆 〇 and the Suzhou numerals.
fn is_cjk_ideograph(c: char) -> bool {
  matches!(c as u32,
    0x3006 | 0x3007 | 0x3021..=0x3029 | 0x3038..=0x303A
    | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF
    | 0x20000..=0x2A6DF | 0x2A700..=0x2EE5F | 0x2F800..=0x2FA1F | 0x30000..=0x323AF)
}

/// General_Category Pc (connector punctuation).
fn is_connector_punctuation(c: char) -> bool {
  matches!(
    c,
    '_' | '\u{203F}' | '\u{2040}' | '\u{2054}' | '\u{FE33}' | '\u{FE34}' | '\u{FE4D}'
      ..='\u{FE4F}' | '\u{FF3F}'
  )
}

/// Tokens of an already folded string (slices of it).
pub fn tokenize(folded: &str) -> Vec<&str> {
  let mut tokens = Vec::new();
  let mut run: Option<(usize, Class)> = None; // start byte and kind of the open run
  for (i, c) in folded.char_indices() {
    let cl = class(c);
    match (cl, run) {
      (Class::Mark, Some(_)) => {} // a mark continues the open run
      (Class::Word | Class::Ideograph, Some((_, kind))) if kind == cl => {}
      _ => {
        if let Some((start, _)) = run.take() {
          tokens.push(&folded[start..i]);
        }
        match cl {
          Class::Space => {}
          Class::Other => tokens.push(&folded[i..i + c.len_utf8()]),
          Class::Mark => run = Some((i, Class::Word)),
          _ => run = Some((i, cl)),
        }
      }
    }
  }
  if let Some((start, _)) = run {
    tokens.push(&folded[start..]);
  }
  tokens
}

/// The token sequence of `fold(s)`, owned.
pub fn phrase_tokens(s: &str) -> Vec<String> {
  tokenize(&fold(s)).into_iter().map(str::to_string).collect()
}

pub struct PhraseMatcher {
  vocab: HashMap<String, u32>,
  /// Postings of token t: `postings[posting_offsets[t]..posting_offsets[t + 1]]`, each
  /// (name, position), in name order then position order.
  posting_offsets: Vec<u32>,
  postings: Vec<(u32, u32)>,
  /// Tokens of name i: `name_tokens[name_offsets[i]..name_offsets[i + 1]]`.
  name_offsets: Vec<u32>,
  name_tokens: Vec<u32>,
}

impl PhraseMatcher {
  /// Builds the index over `names` (name i is reported as i).
  pub fn new<S: AsRef<str>>(names: &[S]) -> PhraseMatcher {
    let mut vocab: HashMap<String, u32> = HashMap::new();
    let mut name_offsets = Vec::with_capacity(names.len() + 1);
    let mut name_tokens = Vec::new();
    name_offsets.push(0u32);
    for name in names {
      let folded = fold(name.as_ref());
      for tok in tokenize(&folded) {
        let next = vocab.len() as u32;
        let id = *vocab.entry(tok.to_string()).or_insert(next);
        name_tokens.push(id);
      }
      name_offsets.push(name_tokens.len() as u32);
    }
    let mut counts = vec![0u32; vocab.len() + 1];
    for &t in &name_tokens {
      counts[t as usize + 1] += 1;
    }
    for t in 1..counts.len() {
      counts[t] += counts[t - 1];
    }
    let posting_offsets = counts.clone();
    let mut fill = counts;
    let mut postings = vec![(0u32, 0u32); name_tokens.len()];
    for name in 0..names.len() {
      let (a, b) = (name_offsets[name] as usize, name_offsets[name + 1] as usize);
      for (pos, &t) in name_tokens[a..b].iter().enumerate() {
        postings[fill[t as usize] as usize] = (name as u32, pos as u32);
        fill[t as usize] += 1;
      }
    }
    PhraseMatcher {
      vocab,
      posting_offsets,
      postings,
      name_offsets,
      name_tokens,
    }
  }

  pub fn name_count(&self) -> usize {
    self.name_offsets.len() - 1
  }

  pub fn vocabulary_size(&self) -> usize {
    self.vocab.len()
  }

  /// Every name containing at least one of `phrases` as a whole phrase; sorted, distinct.
  /// Phrases without tokens match nothing.
  pub fn find<S: AsRef<str>>(&self, phrases: &[S]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut seen: Vec<Vec<u32>> = Vec::new();
    for phrase in phrases {
      let Some(ids) = self.token_ids(phrase.as_ref()) else {
        continue;
      };
      if ids.is_empty() || seen.contains(&ids) {
        continue; // no token, or a duplicate phrase
      }
      self.find_ids(&ids, &mut out);
      seen.push(ids);
    }
    out.sort_unstable();
    out.dedup();
    out
  }

  /// Token ids of a phrase; None when a token is unknown (then nothing can match).
  fn token_ids(&self, phrase: &str) -> Option<Vec<u32>> {
    let folded = fold(phrase);
    tokenize(&folded)
      .into_iter()
      .map(|t| self.vocab.get(t).copied())
      .collect()
  }

  fn postings_of(&self, t: u32) -> &[(u32, u32)] {
    &self.postings[self.posting_offsets[t as usize] as usize..self.posting_offsets[t as usize + 1] as usize]
  }

  fn find_ids(&self, ids: &[u32], out: &mut Vec<u32>) {
    let (rare_at, rare) = ids
      .iter()
      .enumerate()
      .min_by_key(|(_, &t)| self.postings_of(t).len())
      .map(|(i, &t)| (i as u32, t))
      .expect("non-empty phrase");
    let mut last_name = u32::MAX;
    for &(name, pos) in self.postings_of(rare) {
      if name == last_name || pos < rare_at {
        continue; // already matched, or the phrase would start before the name
      }
      let start = (self.name_offsets[name as usize] + pos - rare_at) as usize;
      let end = start + ids.len();
      if end <= self.name_offsets[name as usize + 1] as usize && self.name_tokens[start..end] == *ids {
        out.push(name);
        last_name = name;
      }
    }
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn matcher(names: &[&str]) -> PhraseMatcher {
    PhraseMatcher::new(names)
  }

  #[test]
  fn fold_and_tokenize() {
    assert_eq!(fold("  Hello \u{3000}\t WORLD\n"), "hello world");
    assert_eq!(fold("ＣＡＦÉ"), "café"); // NFKC width + lowercase
    assert_eq!(tokenize("c++ templates"), vec!["c", "+", "+", "templates"]);
    assert_eq!(tokenize("u.s. army"), vec!["u", ".", "s", ".", "army"]);
    assert_eq!(tokenize("snake_case x2"), vec!["snake_case", "x2"]);
    assert_eq!(
      tokenize("北京大学 iphone手机"),
      vec!["北京大学", "iphone", "手机"]
    );
    assert_eq!(tokenize("e\u{301}t\u{e9}"), vec!["e\u{301}t\u{e9}"]); // a mark continues the word
    assert_eq!(tokenize("🙂ok"), vec!["🙂", "ok"]);
    assert!(tokenize("   ").is_empty());
  }

  #[test]
  fn whole_words_case_insensitive() {
    let m = matcher(&[
      "PARIS",
      "PARIS AGREEMENT",
      "PARISIAN",
      "Treaty of Paris",
      "paris-based firm",
      "Comparison",
    ]);
    assert_eq!(m.find(&["paris"]), vec![0, 1, 3, 4]);
    assert_eq!(m.find(&["PARIS agreement"]), vec![1]);
    assert_eq!(m.find(&["agreement paris"]), Vec::<u32>::new());
    assert_eq!(m.find(&["Parisian"]), vec![2]);
  }

  #[test]
  fn punctuation_phrases() {
    let m = matcher(&[
      "C++ TEMPLATES",
      "C",
      "C#",
      "U.S. CONGRESS",
      "US ARMY",
      "THE U.S.",
      "ｃ＋＋ book",
    ]);
    assert_eq!(m.find(&["c++"]), vec![0, 6]);
    assert_eq!(m.find(&["C"]), vec![0, 1, 2, 6]);
    assert_eq!(m.find(&["u.s."]), vec![3, 5]);
    assert_eq!(m.find(&["us"]), vec![4]);
    assert_eq!(m.find(&["c#"]), vec![2]);
  }

  #[test]
  fn empty_unknown_and_duplicate_phrases() {
    let m = matcher(&["ALPHA", "BETA", ""]);
    assert!(m.find(&[""]).is_empty());
    assert!(m.find(&["   \t"]).is_empty());
    assert!(m.find(&["gamma"]).is_empty());
    assert!(m.find::<&str>(&[]).is_empty());
    assert_eq!(m.find(&["alpha", "ALPHA", " alpha ", "beta"]), vec![0, 1]);
  }

  #[test]
  fn chinese_matches_whole_ideograph_runs() {
    let m = matcher(&[
      "北京",
      "北京大学",
      "北京 大学",
      "在北京",
      "iPhone手机",
      "北京, 中国",
    ]);
    assert_eq!(m.find(&["北京"]), vec![0, 2, 5]);
    assert_eq!(m.find(&["北京大学"]), vec![1]);
    assert_eq!(m.find(&["大学"]), vec![2]);
    assert_eq!(m.find(&["手机"]), vec![4]);
    assert_eq!(m.find(&["IPHONE"]), vec![4]);
  }

  #[test]
  fn repeated_tokens_and_positions() {
    let m = matcher(&["new york new york", "york", "new jersey new york"]);
    assert_eq!(m.find(&["york new"]), vec![0]);
    assert_eq!(m.find(&["new york"]), vec![0, 2]);
    assert_eq!(m.find(&["york"]), vec![0, 1, 2]);
    assert_eq!(m.name_count(), 3);
  }

  #[test]
  fn agrees_with_a_scan_on_generated_names() {
    let words = ["a", "b", "c", "+", ".", "北京"];
    let mut rng = crate::rng::SplitMix64::new(17);
    let gen = |rng: &mut crate::rng::SplitMix64, max: u64| -> Vec<&str> {
      (0..=rng.below(max))
        .map(|_| words[rng.below(words.len() as u64) as usize])
        .collect()
    };
    let names: Vec<String> = (0..300).map(|_| gen(&mut rng, 6).join(" ")).collect();
    let m = PhraseMatcher::new(&names);
    for _ in 0..200 {
      let phrase = gen(&mut rng, 3);
      let want: Vec<u32> = names
        .iter()
        .enumerate()
        .filter(|(_, n)| {
          let nt: Vec<&str> = n.split(' ').collect();
          nt.windows(phrase.len()).any(|w| w == phrase.as_slice())
        })
        .map(|(i, _)| i as u32)
        .collect();
      assert_eq!(m.find(&[phrase.join(" ")]), want, "{phrase:?}");
    }
  }
}
