//! The chunker of docs/method.md §3.2: a pure function of the text and `chunk_size`.
//!
//! The spec leaves the exact binary search to us ("the search procedure is part of this spec");
//! this is it. With `s` the chunk start (leading whitespace skipped), `C[0] < C[1] < … < C[m-1]`
//! the cut points with `s < pos < len`, and `t(i)` the token count of `text[s..C[i]]`:
//!
//! 1. If `text[s..]` has at most `chunk_size` tokens, it is the last chunk.
//! 2. If `m == 0` or `t(0) > chunk_size`: over-long word, go to 5.
//! 3. `e_max`: `lo = 0, hi = m` (`m` stands for the end, known not to fit); while `hi - lo > 1`: `mid = (lo + hi) / 2`; if
//!    `t(mid) ≤ chunk_size` then `lo = mid` else `hi = mid`. `e_max = lo`.
//! 4. `half = ceil(chunk_size / 2)`. If `t(e_max) < half`, cut at `C[e_max]`. Otherwise find the
//!    first index reaching half the budget: `lo = -1, hi = e_max`; while `hi - lo > 1`:
//!    `mid = ⌊(lo + hi) / 2⌋`; if `t(mid) ≥ half` then `hi = mid` else
//!    `lo = mid`. Among `C[hi..=e_max]` take the strongest class present and cut at its last
//!    point.
//! 5. Over-long word: cut at `s + token_prefix_len(text[s..w], chunk_size)` where `w` is the first
//!    cut point (or the end): the first `chunk_size` tokens, moved back to a character boundary
//!    (at least one character, so the chunker always advances).
//!
//! The chunk is `text[s..c]` trimmed; empty chunks are dropped; the next start is `c` plus any
//! whitespace. Prefix counts come from [`PrefixCounter`], which is exact (equal to counting the
//! substring) but shares work between the prefixes of one start, so chunking is linear in
//! practice instead of quadratic.

use crate::cuts::{cut_points, Cut};
use crate::prefix::PrefixCounter;
use crate::tokens::{token_prefix_len, PieceCache};
use crate::TextError;

/// One chunk: a trimmed slice of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk<'t> {
  /// Byte offset of the chunk's first character in the input.
  pub start: usize,
  /// Byte offset just after the chunk's last character.
  pub end: usize,
  /// `&text[start..end]`.
  pub text: &'t str,
  /// `o200k_base` tokens of `text`.
  pub tokens: u32,
}

fn skip_whitespace(text: &str, from: usize) -> usize {
  from + (text.len() - from - text[from..].trim_start_matches(char::is_whitespace).len())
}

/// Splits `text` into chunks of at most `chunk_size` tokens (§3.2). Only a single "word" longer
/// than the budget is ever split inside, and even then a chunk never exceeds the budget (unless
/// the budget is smaller than one character's tokens, where one character is taken).
pub fn chunk_text(text: &str, chunk_size: usize) -> Result<Vec<Chunk<'_>>, TextError> {
  if chunk_size == 0 {
    return Err(TextError::ChunkSize(chunk_size));
  }
  let budget = chunk_size as u64;
  let half = chunk_size.div_ceil(2) as u64;
  let n = text.len();
  // Cut points are found only once a chunk must end early (most documents fit in one chunk).
  let mut cuts: Option<Vec<Cut>> = None;
  let mut cache = PieceCache::default();
  let mut chunks = Vec::new();
  let mut first_cut = 0usize; // index of the first cut point > s
  let mut s = skip_whitespace(text, 0);

  while s < n {
    let mut pc = PrefixCounter::with_budget(text, s, budget, &mut cache);
    let c = if pc.count_at_most(n, budget) <= budget {
      n
    } else {
      let cuts = cuts.get_or_insert_with(|| cut_points(text));
      while first_cut < cuts.len() && cuts[first_cut].pos <= s {
        first_cut += 1;
      }
      let cand = &cuts[first_cut..];
      if cand.is_empty() || pc.count_at_most(cand[0].pos, budget) > budget {
        let word_end = cand.first().map_or(n, |c| c.pos);
        let len = token_prefix_len(&text[s..word_end], chunk_size);
        let len = if len > 0 {
          len
        } else {
          text[s..].chars().next().map_or(0, char::len_utf8)
        };
        s + len
      } else {
        let (mut lo, mut hi) = (0usize, cand.len());
        while hi - lo > 1 {
          let mid = (lo + hi) / 2;
          if pc.count_at_most(cand[mid].pos, budget) <= budget {
            lo = mid;
          } else {
            hi = mid;
          }
        }
        let e_max = lo;
        if pc.count_at_most(cand[e_max].pos, budget) < half {
          cand[e_max].pos
        } else {
          // First index whose prefix reaches half the budget; `lo = -1` is kept as `lo + 1`.
          let (mut lo1, mut hi) = (0usize, e_max);
          while hi > lo1 {
            let mid = (lo1 + hi - 1) / 2;
            if pc.count_at_most(cand[mid].pos, budget) >= half {
              hi = mid;
            } else {
              lo1 = mid + 1;
            }
          }
          let window = &cand[hi..=e_max];
          let strongest = window.iter().map(|c| c.class).max().expect("window is non-empty");
          window
            .iter()
            .rev()
            .find(|c| c.class == strongest)
            .expect("strongest class is present")
            .pos
        }
      }
    };

    let end = s + text[s..c].trim_end_matches(char::is_whitespace).len();
    if end > s {
      let tokens = pc.count_at_most(end, u64::MAX) as u32;
      chunks.push(Chunk {
        start: s,
        end,
        text: &text[s..end],
        tokens,
      });
    }
    s = skip_whitespace(text, c);
  }
  Ok(chunks)
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::cuts::CutClass;
  use crate::tokens::count_tokens;
  use unicode_segmentation::UnicodeSegmentation;

  use crate::test_rng::Rng;

  const WORDS: &[&str] = &[
    "the",
    "observatory",
    "telescope",
    "Halden",
    "measured",
    "spectral",
    "lines",
    "of",
    "distant",
    "galaxies",
    "and",
    "it's",
    "astronomers",
    "recorded",
    "2024",
    "data",
    "(see",
    "appendix)",
    "night",
    "sky",
    "\"quoted\"",
    "state-of-the-art",
    "U.S.",
    "café",
    "naïve",
    "résumé",
    "3.14",
  ];
  const ZH: &[&str] = &[
    "天文台",
    "望远镜",
    "观测",
    "星系",
    "的",
    "光谱",
    "数据",
    "研究员",
    "记录",
    "夜空",
    "青山",
  ];

  fn english(seed: u64, paragraphs: usize) -> String {
    let mut r = Rng(seed);
    let mut out = String::new();
    for p in 0..paragraphs {
      if p > 0 {
        out.push_str(if r.next().is_multiple_of(4) {
          "\n \n\n"
        } else {
          "\n\n"
        });
      }
      for s in 0..(2 + r.next() % 6) {
        if s > 0 {
          out.push_str(if r.next().is_multiple_of(5) { "\n" } else { " " });
        }
        for w in 0..(4 + r.next() % 14) {
          if w > 0 {
            out.push_str(if r.next().is_multiple_of(9) { ",  " } else { " " });
          }
          out.push_str(r.pick(WORDS));
        }
        out.push_str(r.pick(&[".", "!", "?", ";", ".\"", ".)"]));
      }
    }
    out
  }

  fn chinese(seed: u64, paragraphs: usize) -> String {
    let mut r = Rng(seed);
    let mut out = String::new();
    for p in 0..paragraphs {
      if p > 0 {
        out.push_str("\n\n");
      }
      for _ in 0..(2 + r.next() % 6) {
        for _ in 0..(3 + r.next() % 12) {
          out.push_str(r.pick(ZH));
        }
        out.push_str(r.pick(&["。", "！", "？", "；", "。」", "…"]));
      }
    }
    out
  }

  fn word_boundaries(text: &str) -> Vec<usize> {
    let mut b: Vec<usize> = text.split_word_bound_indices().map(|(i, _)| i).collect();
    b.push(text.len());
    b
  }

  fn strip_ws(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
  }

  /// Properties every chunking must have; returns the chunks' texts.
  fn check(text: &str, chunk_size: usize, words_whole: bool) -> Vec<String> {
    let chunks = chunk_text(text, chunk_size).unwrap();
    let bounds = word_boundaries(text);
    let mut prev_end = 0;
    for ch in &chunks {
      assert!(!ch.text.is_empty());
      assert_eq!(ch.text, &text[ch.start..ch.end]);
      assert_eq!(ch.text, ch.text.trim());
      assert_eq!(ch.tokens as usize, count_tokens(ch.text));
      assert!(
        ch.tokens as usize <= chunk_size,
        "chunk over budget: {} > {chunk_size}",
        ch.tokens
      );
      assert!(ch.start >= prev_end, "chunks overlap");
      prev_end = ch.end;
      if words_whole {
        assert!(
          bounds.binary_search(&ch.start).is_ok(),
          "chunk starts mid-word: {:?}",
          ch.text
        );
        assert!(
          bounds.binary_search(&ch.end).is_ok(),
          "chunk ends mid-word: {:?}",
          ch.text
        );
      }
    }
    let joined: String = chunks.iter().map(|c| c.text).collect();
    assert_eq!(strip_ws(&joined), strip_ws(text), "chunks lose or add text");
    chunks.iter().map(|c| c.text.to_string()).collect()
  }

  /// The same search over plain substring counts: the reference the incremental counter must
  /// reproduce exactly.
  fn reference(text: &str, chunk_size: usize) -> Vec<(usize, usize)> {
    let cuts = cut_points(text);
    let t = |s: usize, c: usize| count_tokens(&text[s..c]);
    let half = chunk_size.div_ceil(2);
    let mut out = vec![];
    let mut s = skip_whitespace(text, 0);
    while s < text.len() {
      let cand: Vec<Cut> = cuts.iter().copied().filter(|c| c.pos > s).collect();
      let c = if t(s, text.len()) <= chunk_size {
        text.len()
      } else if cand.is_empty() || t(s, cand[0].pos) > chunk_size {
        let w = cand.first().map_or(text.len(), |c| c.pos);
        s + token_prefix_len(&text[s..w], chunk_size).max(1)
      } else {
        let (mut lo, mut hi) = (0, cand.len());
        while hi - lo > 1 {
          let mid = (lo + hi) / 2;
          if t(s, cand[mid].pos) <= chunk_size {
            lo = mid
          } else {
            hi = mid
          }
        }
        if t(s, cand[lo].pos) < half {
          cand[lo].pos
        } else {
          let h = (0..=lo).find(|&i| t(s, cand[i].pos) >= half).unwrap();
          let w = &cand[h..=lo];
          let best = w.iter().map(|c| c.class).max().unwrap();
          w.iter().rev().find(|c| c.class == best).unwrap().pos
        }
      };
      let end = s + text[s..c].trim_end().len();
      if end > s {
        out.push((s, end));
      }
      s = skip_whitespace(text, c);
    }
    out
  }

  #[test]
  fn empty_and_short_texts() {
    assert!(chunk_text("", 100).unwrap().is_empty());
    assert!(chunk_text(" \n\t\u{3000} ", 100).unwrap().is_empty());
    let c = chunk_text("  Hello  world.\n", 100).unwrap();
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].text, c[0].start, c[0].end), ("Hello  world.", 2, 15));
    assert_eq!(c[0].tokens, 4); // "Hello" " " " world" "."
    assert_eq!(chunk_text("x", 0), Err(TextError::ChunkSize(0)));
  }

  #[test]
  fn english_chunks_respect_budget_words_and_content() {
    for (seed, size) in [(1, 64), (2, 100), (3, 257), (4, 1048)] {
      let text = english(seed, 40);
      let chunks = check(&text, size, true);
      assert!(chunks.len() > 1, "seed {seed}: expected several chunks");
      // All but the last chunk use at least about half the budget (the untrimmed prefix does).
      let n = chunks.len();
      for c in &chunks[..n - 1] {
        assert!(count_tokens(c) + 3 >= size / 2, "short chunk {c:?}");
      }
    }
  }

  #[test]
  fn chinese_chunks_respect_budget_words_and_content() {
    for (seed, size) in [(5, 64), (6, 200)] {
      let text = chinese(seed, 30);
      check(&text, size, true);
    }
    // One long paragraph, no line breaks: chunks end at sentence marks.
    let text = chinese(7, 1).repeat(20).replace("\n", "");
    for c in check(&text, 64, true) {
      let last = c.chars().last().unwrap();
      assert!(
        "。！？；」…".contains(last),
        "chunk does not end a sentence: {c:?}"
      );
    }
  }

  #[test]
  fn paragraphs_are_preferred_over_lines_sentences_and_words() {
    // Paragraphs of ~40 tokens with a budget of 100: every cut is a paragraph break.
    let para = "The observatory recorded the night sky. Astronomers measured spectral lines of distant galaxies and wrote it down.";
    let text = [para; 12].join("\n\n");
    for c in check(&text, 100, true) {
      assert!(c == para || c.split("\n\n").all(|p| p == para), "{c:?}");
    }
    // Without paragraph breaks, line breaks win over sentence ends.
    let text = [para; 12].join("\n");
    for c in check(&text, 100, true) {
      assert!(c.ends_with("down."), "{c:?}");
    }
  }

  #[test]
  fn incremental_counting_matches_the_plain_reference() {
    let texts = [
      english(11, 12),
      chinese(12, 8),
      format!("{}\n\n{}", english(13, 3), chinese(14, 3)),
    ];
    for text in &texts {
      for size in [64, 97, 300] {
        let got: Vec<(usize, usize)> = chunk_text(text, size)
          .unwrap()
          .iter()
          .map(|c| (c.start, c.end))
          .collect();
        assert_eq!(got, reference(text, size), "size {size}");
      }
    }
  }

  #[test]
  fn an_over_long_word_is_the_only_split_inside_a_word() {
    // Letters and digits only: UAX #29 keeps this as one word.
    let mut r = Rng(99);
    let alnum: Vec<char> = ('A'..='Z').chain('a'..='z').chain('0'..='9').collect();
    let blob: String = (0..3000).map(|_| r.pick(&alnum)).collect();
    assert_eq!(word_boundaries(&blob), vec![0, blob.len()]);
    let text = format!("Before the blob.\n\n{blob}\n\nAfter the blob.");
    let chunks = chunk_text(&text, 64).unwrap();
    assert!(chunks.len() > 5);
    let joined: String = chunks.iter().map(|c| c.text).collect();
    assert_eq!(strip_ws(&joined), strip_ws(&text));
    for c in &chunks {
      assert!(c.tokens <= 64);
    }
    // Splits happen only inside the blob; the prose around it stays whole.
    assert_eq!(chunks[0].text, "Before the blob.");
    assert!(chunks.last().unwrap().text.ends_with("\n\nAfter the blob."));
    // The blob pieces fill the budget (token-prefix cut), except the last one.
    let inner = &chunks[1..chunks.len() - 1];
    for c in &inner[..inner.len() - 1] {
      assert!(c.tokens >= 60, "{}", c.tokens);
    }
    // Same with a multi-byte blob: cuts move back to character boundaries.
    let wide: String = "ＡＩ".repeat(400);
    let chunks = chunk_text(&wide, 64).unwrap();
    assert_eq!(chunks.iter().map(|c| c.text).collect::<String>(), wide);
  }

  #[test]
  fn deterministic_and_classes_are_used() {
    let text = english(21, 30);
    let a = chunk_text(&text, 128).unwrap();
    let b = chunk_text(&text, 128).unwrap();
    assert_eq!(a, b);
    // Most ends are paragraph ends here (paragraphs are short relative to the budget).
    let cuts = cut_points(&text);
    let para_ends = a
      .iter()
      .filter(|c| {
        let after = skip_whitespace(&text, c.end);
        cuts
          .iter()
          .any(|k| k.class == CutClass::Paragraph && k.pos > c.end && k.pos <= after)
      })
      .count();
    assert!(para_ends * 2 >= a.len(), "{para_ends} of {}", a.len());
  }
}
