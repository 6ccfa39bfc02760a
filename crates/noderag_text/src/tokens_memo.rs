//! Exact `o200k_base` counts of texts that repeat in pieces: a search server counts the tokens of
//! every retrieval context (access log, `/v1` usage), and contexts are lines of node texts that
//! come back question after question. A context is cut where the tokenizer's pre-tokenisation is
//! known to break, each piece's count is remembered, and the count of the whole is their sum:
//! the same number `count_tokens` gives, at the cost of hashing the text.
//!
//! Where a cut is safe. BPE runs on each pre-token alone, so a count is additive over any cut
//! that no pre-token spans. The o200k pre-tokeniser's alternatives are, in order:
//!
//! ```text
//! [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! \p{N}{1,3}
//!  ?[^\s\p{L}\p{N}]+[\r\n/]*
//! \s*[\r\n]+
//! \s+(?!\S)
//! \s+
//! ```
//!
//! 1. After a line break, before an ASCII letter, digit or `-`: a pre-token holding the line
//!    break can only go on with more line breaks or `/` (the fourth) or whitespace (the last
//!    three), so one ends exactly there, and the next starts afresh (there is no look-behind).
//! 2. At the start of a line, after `<digits>.` when a space follows (a numbered item, `12. …`):
//!    digits are a pre-token of their own (third), the dot one of its own (fourth: a space is
//!    neither punctuation nor `[\r\n/]`), and the space begins the next.
//!
//! `count_tokens` (bpe-openai) has no look-ahead: it runs `\s+(?!\S)` as `\s+$` (whitespace
//! to the end of the text it is given) and `\s+\s` less its last character. Given a piece
//! alone, `$` is the piece's end, which is where a cut could change a count; but every piece
//! ends in a line break or in the dot of rule 2, and at a line break `\s*[\r\n]+`, earlier in
//! the alternation, matches first; `\s+\s` would need the character after the cut to be
//! whitespace, which it never is.
//!
//! The tests check the sum against `count_tokens` on texts built to probe every rule.

use std::cell::RefCell;

use rustc_hash::FxHashMap;

use crate::tokens::tokenizer;

/// Pieces longer than this are counted, not looked up nor remembered (they rarely come back).
const MAX_PIECE_BYTES: usize = 8 * 1024;
/// Memory the memo may hold per thread, its entries' text and their overhead
/// (ENTRY_OVERHEAD each); past it the memo starts over with a new, empty table.
const MAX_MEMO_BYTES: usize = 16 * 1024 * 1024;
/// What an entry costs beside its text: the key's allocation (header and rounding) and its
/// slot in the table (pointer, length, count, control byte, spare capacity), generously.
const ENTRY_OVERHEAD: usize = 96;

#[derive(Default)]
struct Memo {
  counts: FxHashMap<Box<str>, u32>,
  bytes: usize,
}

thread_local! {
  static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
}

/// `count_tokens(s)`, summed over remembered pieces of `s` (see the module comment).
pub fn count_tokens_memo(s: &str) -> usize {
  MEMO.with(|m| {
    let mut memo = m.borrow_mut();
    pieces(s).map(|p| memo.count(p) as usize).sum()
  })
}

impl Memo {
  fn count(&mut self, piece: &str) -> u32 {
    if piece.len() > MAX_PIECE_BYTES {
      return tokenizer().count(piece) as u32;
    }
    if let Some(&n) = self.counts.get(piece) {
      return n;
    }
    let n = tokenizer().count(piece) as u32;
    let cost = piece.len() + ENTRY_OVERHEAD;
    if self.bytes + cost > MAX_MEMO_BYTES {
      // A new table: `clear` would keep the old one's capacity.
      self.counts = FxHashMap::default();
      self.bytes = 0;
    }
    self.bytes += cost;
    self.counts.insert(piece.into(), n);
    n
  }
}

/// `s` cut at the safe points of the module comment, in order; the pieces join to `s`.
pub fn pieces(s: &str) -> impl Iterator<Item = &str> {
  let bytes = s.as_bytes();
  let mut start = 0usize;
  // The next piece may begin with a numbered item's `<digits>.` (rule 2).
  let mut at_line_start = true;
  std::iter::from_fn(move || {
    if start >= bytes.len() {
      return None;
    }
    if at_line_start {
      at_line_start = false;
      if let Some(end) = numbered_prefix(&bytes[start..]) {
        let piece = &s[start..start + end];
        start += end;
        return Some(piece);
      }
    }
    let mut i = start;
    while i < bytes.len() {
      let b = bytes[i];
      i += 1;
      if (b == b'\n' || b == b'\r') && i < bytes.len() && line_starter(bytes[i]) {
        break;
      }
    }
    let piece = &s[start..i];
    start = i;
    at_line_start = true;
    Some(piece)
  })
}

/// Bytes a piece may begin with after a line break (rule 1): never whitespace nor `/`.
fn line_starter(b: u8) -> bool {
  b.is_ascii_alphanumeric() || b == b'-'
}

/// Length of `<digits>.` when `line` starts with it and a space follows (rule 2).
fn numbered_prefix(line: &[u8]) -> Option<usize> {
  let digits = line.iter().take_while(|b| b.is_ascii_digit()).count();
  (digits > 0 && line.get(digits) == Some(&b'.') && line.get(digits + 1) == Some(&b' ')).then_some(digits + 1)
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::test_rng::Rng;
  use crate::tokens::count_tokens;

  /// Fragments chosen to sit on both sides of every cut: line breaks of every kind, spaces
  /// before and after them, `/`, punctuation runs, digits of every length, contractions,
  /// capitals, non-ASCII letters and spaces, numbered items and the context's header lines.
  const FRAGMENTS: &[&str] = &[
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    " \n",
    "\n ",
    "  \n\n",
    "/",
    "\n/",
    ".\n",
    ".\n\n",
    "\"",
    "'s",
    "'S",
    " ",
    "  ",
    "\t",
    "-",
    "--",
    "------------text-------------",
    "1. ",
    "12. ",
    "1234. ",
    "7.",
    "3.5",
    "2.  x",
    "9 . ",
    "word",
    "Word",
    "WORD",
    "wOrd",
    " quoted \"Title\"",
    "élan",
    "Ünïcode",
    "東京",
    "\u{a0}",
    "\u{3000}",
    "naïve",
    "(x)",
    "a/b",
    "...",
    "!?",
    "100",
    "4567",
    "e5",
    "x'll",
    " 's",
    "—",
    "🙂",
    "\u{301}",
    "a\u{301}",
    "Nick Hexum",
    "The band's album.",
    "[1]",
    "#",
    "@",
    "\\n",
  ];

  #[test]
  fn sums_of_pieces_equal_whole_counts() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..20_000 {
      let len = 1 + (rng.next() % 24) as usize;
      let text: String = (0..len).map(|_| rng.pick(FRAGMENTS)).collect();
      let joined: String = pieces(&text).collect();
      assert_eq!(joined, text, "pieces must join to the text");
      let sum: usize = pieces(&text).map(count_tokens).sum();
      assert_eq!(
        sum,
        count_tokens(&text),
        "round {round}: {text:?} cut as {:?}",
        pieces(&text).collect::<Vec<_>>()
      );
      assert_eq!(
        count_tokens_memo(&text),
        count_tokens(&text),
        "memo, round {round}: {text:?}"
      );
    }
  }

  #[test]
  fn a_context_is_cut_into_its_lines_and_item_numbers() {
    let context = "------------attribute-------------\n1. Nick Hexum is an American singer.\n2. The band 311.\n\n------------text-------------\n1. Formed in 1988.\n\n";
    let got: Vec<&str> = pieces(context).collect();
    assert_eq!(
      got,
      [
        "------------attribute-------------\n",
        "1.",
        " Nick Hexum is an American singer.\n",
        "2.",
        " The band 311.\n\n",
        "------------text-------------\n",
        "1.",
        " Formed in 1988.\n\n",
      ]
    );
    assert_eq!(count_tokens_memo(context), count_tokens(context));
    // Again, from the memo.
    assert_eq!(count_tokens_memo(context), count_tokens(context));
  }

  #[test]
  fn no_cut_before_whitespace_or_a_slash() {
    for text in [
      "a.\n/b",
      "a\n b",
      "a\n\tb",
      "a\n\u{a0}b",
      "x\r\ny",
      "1.x",
      "1.  x",
      " 1. x",
    ] {
      let sum: usize = pieces(text).map(count_tokens).sum();
      assert_eq!(sum, count_tokens(text), "{text:?}");
    }
    assert_eq!(pieces("a\n/b").count(), 1);
    assert_eq!(pieces("a\n b").count(), 1);
    assert_eq!(pieces("1.x").count(), 1);
  }

  #[test]
  fn the_memo_starts_over_past_its_size() {
    let mut memo = Memo::default();
    let long = "x".repeat(MAX_PIECE_BYTES);
    for i in 0..(MAX_MEMO_BYTES / MAX_PIECE_BYTES + 2) {
      let piece = format!("{i}{long}");
      // Over the piece limit: counted, not kept.
      assert_eq!(memo.count(&piece) as usize, count_tokens(&piece));
    }
    assert_eq!(memo.bytes, 0);
    assert!(memo.counts.is_empty());
    // Short pieces: their overhead counts too, so the table holds far fewer than 16 MiB of them.
    for i in 0..(MAX_MEMO_BYTES / ENTRY_OVERHEAD + 2) {
      memo.count(&format!("{i}"));
      assert!(memo.bytes <= MAX_MEMO_BYTES);
    }
    assert!(memo.counts.len() <= MAX_MEMO_BYTES / ENTRY_OVERHEAD);
    for i in 0..(MAX_MEMO_BYTES / 1000 + 2) {
      let piece = format!("{i:0>1000}");
      memo.count(&piece);
      assert!(memo.bytes <= MAX_MEMO_BYTES);
    }
  }
}
