//! Exact token counts of many prefixes `text[s..c]` of one text, without re-tokenising each
//! prefix from `s`.
//!
//! Pre-tokenisation (the o200k regex) runs left to right, one anchored match at a time. The
//! pieces of `text[s..]` are computed once, lazily. A piece `[p, e)` of `text[s..]` is also a
//! piece of the shorter `text[s..c]` when the regex decided it without looking at or past `c`:
//! the regex crate picks the highest-priority matching path (leftmost-first), every path that
//! matches inside `text[..c]` without an assertion also matches in the longer text, and the
//! only assertion in the o200k patterns is `$` (in `\s+$`, which can only match in the prefix
//! when `text[p..c]` is all whitespace). So the piece carries over when
//!   (a) the regex consumed no byte at or after `c` — `e ≤ c`, or `e + next char ≤ c` for the
//!       whitespace look-ahead pattern `\s+\s`, whose last character is consumed and then
//!       dropped by bpe-openai (we assume that for every whitespace-only piece), and
//!   (b) `text[p..c]` is not all whitespace.
//! Leading pieces that pass both tests are shared; the short rest `text[p_k..c]` is
//! pre-tokenised afresh (there is no look-behind, so starting at `p_k` is the same as
//! continuing). The property test below checks the result against a full count.

use crate::tokens::{tokenizer, PieceCache};

#[derive(Clone, Copy)]
struct Piece {
  start: usize,
  /// Last byte the regex consumed + 1 (see (a) above).
  raw_end: usize,
}

/// Token counts of prefixes `text[s..c]` for one fixed `s`.
pub(crate) struct PrefixCounter<'t, 'c> {
  text: &'t str,
  s: usize,
  pieces: Vec<Piece>,
  /// `sums[i]` = tokens of the first `i` pieces.
  sums: Vec<u64>,
  /// End of the last piece (or `s`).
  end: usize,
  split: Box<dyn Iterator<Item = &'t str> + 't>,
  exhausted: bool,
  cache: &'c mut PieceCache<'t>,
}

impl<'t, 'c> PrefixCounter<'t, 'c> {
  pub(crate) fn new(text: &'t str, s: usize, cache: &'c mut PieceCache<'t>) -> Self {
    PrefixCounter {
      text,
      s,
      pieces: Vec::new(),
      sums: vec![0],
      end: s,
      split: Box::new(tokenizer().split(&text[s..])),
      exhausted: false,
      cache,
    }
  }

  fn extend_one(&mut self) -> bool {
    if self.exhausted {
      return false;
    }
    let Some(piece) = self.split.next() else {
      self.exhausted = true;
      return false;
    };
    let start = piece.as_ptr() as usize - self.text.as_ptr() as usize;
    let end = start + piece.len();
    let mut raw_end = end;
    if piece.chars().all(char::is_whitespace) {
      if let Some(next) = self.text[end..].chars().next() {
        raw_end += next.len_utf8();
      }
    }
    let n = self.cache.count_piece(piece) as u64;
    self.pieces.push(Piece { start, raw_end });
    self.sums.push(self.sums.last().copied().unwrap_or(0) + n);
    self.end = end;
    true
  }

  /// Tokens of `text[s..c]` when that is at most `limit`; otherwise some number greater than
  /// `limit` (the work stops once the budget is certainly exceeded). `c` must be a character
  /// boundary with `s ≤ c ≤ text.len()`.
  pub(crate) fn count_at_most(&mut self, c: usize, limit: u64) -> u64 {
    debug_assert!(self.s <= c && c <= self.text.len());
    // Start of the whitespace run that ends at `c` (condition (b)).
    let w = self.s + self.text[self.s..c].trim_end_matches(char::is_whitespace).len();
    let valid = |p: &Piece| p.raw_end <= c && p.start < w;
    loop {
      if let Some(last) = self.pieces.last() {
        if !valid(last) {
          break;
        }
      }
      if *self.sums.last().unwrap() > limit {
        break;
      }
      if !self.extend_one() {
        break;
      }
    }
    let k = self.pieces.partition_point(valid);
    let shared = self.sums[k];
    if shared > limit {
      return shared;
    }
    let tail_start = if k < self.pieces.len() {
      self.pieces[k].start
    } else {
      self.end
    };
    if tail_start >= c {
      return shared;
    }
    shared + self.cache.count_text(&self.text[tail_start..c])
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::tokens::count_tokens;

  fn check_all_prefixes(text: &str) {
    let bounds: Vec<usize> = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
    for &s in bounds.iter().step_by(3) {
      let mut cache = PieceCache::default();
      let mut pc = PrefixCounter::new(text, s, &mut cache);
      // Visit prefixes out of order, as a binary search does.
      let mut cs: Vec<usize> = bounds.iter().copied().filter(|&c| c >= s).collect();
      let mid = cs.len() / 2;
      cs.rotate_left(mid);
      for c in cs {
        let want = count_tokens(&text[s..c]) as u64;
        assert_eq!(
          pc.count_at_most(c, u64::MAX),
          want,
          "text[{s}..{c}] = {:?}",
          &text[s..c]
        );
      }
    }
  }

  #[test]
  fn prefix_counts_equal_full_counts() {
    check_all_prefixes("Hello  world.\n\n  It's  a   test;   don't\tPANIC!! 1234567 ＡＩ\n");
    check_all_prefixes("北京是中国的首都。上海是最大的城市！「你好」他说…… 2024年\n\n第二段");
    check_all_prefixes("  \n \n\t x  y\u{3000}\u{3000}z \r\n ==== //a/b c++ I'M they'll  \n");
    check_all_prefixes("aGVsbG8gd29ybGQ=aGVsbG8gd29ybGQ=\n🙂🙂 é́ ǅungla DŽ ß");
  }

  #[test]
  fn limits_stop_early_but_stay_exact_below_the_limit() {
    let text = "word ".repeat(2000);
    let mut cache = PieceCache::default();
    let mut pc = PrefixCounter::new(&text, 0, &mut cache);
    assert!(pc.count_at_most(text.len(), 10) > 10);
    // Only about 10 pieces were needed to know.
    assert!(pc.pieces.len() < 20);
    assert_eq!(pc.count_at_most(25, 10), count_tokens(&text[..25]) as u64);
  }

  #[test]
  fn random_texts_from_a_mixed_alphabet() {
    // Deterministic xorshift; characters chosen to stress whitespace runs, contractions,
    // digits, CJK, case changes and punctuation runs.
    let alphabet: Vec<char> = " \n\t\u{3000}aAbZ'sdt0123.,;!?-/=中文。！「」ǅ\u{301}🙂ßx"
      .chars()
      .collect();
    let mut x: u64 = 42;
    for _ in 0..40 {
      let mut t = String::new();
      for _ in 0..60 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        t.push(alphabet[(x % alphabet.len() as u64) as usize]);
      }
      check_all_prefixes(&t);
    }
  }
}
