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
//!
//! With a token budget ([`PrefixCounter::with_budget`]) the pieces come from `text[s..W]`,
//! `W = s + (budget + 1) · L` where `L` is the longest token's byte length: the argument
//! above holds for any text and its prefixes, so counts of `text[s..c]` for `c ≤ W` are
//! still exact, and a longer prefix has more than `budget` tokens (each token covers at most
//! `L` bytes). Without the window a run of letters with no space or punctuation is one piece
//! to the end of the text: finding it scanned the whole rest of the text for every chunk,
//! and counting it encoded all of it (chunking a 1 MB such text took 36 s).

use std::sync::OnceLock;

use crate::tokens::{floor_char_boundary, tokenizer, PieceCache};

/// Byte length of the longest token of the vocabulary.
fn longest_token_len() -> usize {
  static LEN: OnceLock<usize> = OnceLock::new();
  *LEN.get_or_init(|| {
    let bpe = &tokenizer().bpe;
    (0..bpe.num_tokens() as u32)
      .map(|t| bpe.token_len(t))
      .max()
      .unwrap_or(1)
  })
}

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
  /// End of the text split into pieces (`text.len()` without a budget).
  window_end: usize,
  /// `Some(budget)`: a prefix longer than the window has more than `budget` tokens.
  budget: Option<u64>,
}

impl<'t, 'c> PrefixCounter<'t, 'c> {
  /// Exact counts of any prefix (the tests' reference; the chunker uses `with_budget`).
  #[cfg(test)]
  pub(crate) fn new(text: &'t str, s: usize, cache: &'c mut PieceCache<'t>) -> Self {
    Self::over(text, s, text.len(), None, cache)
  }

  /// For a chunker that only needs exact counts up to `budget` tokens: the pieces come from
  /// a window of the text long enough to hold `budget + 1` tokens (see the module notes).
  pub(crate) fn with_budget(text: &'t str, s: usize, budget: u64, cache: &'c mut PieceCache<'t>) -> Self {
    let span = (budget.saturating_add(1)).saturating_mul(longest_token_len() as u64);
    let window_end = floor_char_boundary(
      text,
      s.saturating_add(usize::try_from(span).unwrap_or(usize::MAX)),
    );
    Self::over(text, s, window_end, Some(budget), cache)
  }

  fn over(
    text: &'t str,
    s: usize,
    window_end: usize,
    budget: Option<u64>,
    cache: &'c mut PieceCache<'t>,
  ) -> Self {
    PrefixCounter {
      text,
      s,
      pieces: Vec::new(),
      sums: vec![0],
      end: s,
      split: Box::new(tokenizer().split(&text[s..window_end])),
      exhausted: false,
      cache,
      window_end,
      budget,
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
    if c > self.window_end {
      match self.budget {
        // More than `budget` (hence `limit`) tokens: the window holds budget + 1 of the longest.
        Some(budget) if limit <= budget => return budget + 1,
        // An exact count past the window: split the whole rest of the text instead.
        _ => {
          let text = self.text;
          self.pieces.clear();
          self.sums.truncate(1);
          self.end = self.s;
          self.split = Box::new(tokenizer().split(&text[self.s..]));
          self.exhausted = false;
          self.window_end = text.len();
          self.budget = None;
        }
      }
    }
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
  fn with_a_budget_counts_stay_exact_and_longer_prefixes_exceed_it() {
    let texts = [
      "漢字".repeat(3_000),
      "a".repeat(20_000),
      "word, ".repeat(3_000),
      format!("{}  {}", "x".repeat(5_000), "tail end. ".repeat(500)),
    ];
    for text in &texts {
      let bounds: Vec<usize> = (0..=text.len())
        .filter(|&i| text.is_char_boundary(i))
        .step_by(97)
        .collect();
      for budget in [1u64, 7, 100] {
        let mut cache = PieceCache::default();
        let mut pc = PrefixCounter::with_budget(text, 0, budget, &mut cache);
        for &c in &bounds {
          let want = count_tokens(&text[..c]) as u64;
          let got = pc.count_at_most(c, budget);
          if want <= budget {
            assert_eq!(got, want, "budget {budget}, c {c}");
          } else {
            assert!(got > budget, "budget {budget}, c {c}: {got} for {want}");
          }
        }
        // An exact count past the window is still exact.
        assert_eq!(pc.count_at_most(text.len(), u64::MAX), count_tokens(text) as u64);
      }
    }
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
