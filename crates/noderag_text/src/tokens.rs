//! `o200k_base` token counts (docs/method.md §0), through GitHub's `bpe-openai` crate: the same
//! pre-tokenisation and merges as tiktoken (cross-checked on the HotpotQA corpus, see the tests),
//! with the vocabulary compiled into the binary. The tokenizer is built once per process, on
//! first use (~60 ms), by `bpe_openai::o200k_base()`'s lazy static.

use bpe_openai::Tokenizer;
use rustc_hash::FxHashMap;

/// The process-wide `o200k_base` tokenizer.
pub fn tokenizer() -> &'static Tokenizer {
  bpe_openai::o200k_base()
}

/// Forces the tokenizer to load now (e.g. at server start) instead of on the first count.
pub fn warm_up() {
  let _ = tokenizer().count("");
}

/// Number of `o200k_base` tokens of `s` (special tokens are not recognised: `<|endoftext|>`
/// counts as ordinary text, like tiktoken's `encode_ordinary`).
pub fn count_tokens(s: &str) -> usize {
  tokenizer().count(s)
}

/// Token counts of many strings, sharing a cache of pre-tokenised pieces (words repeat).
pub fn count_tokens_batch<S: AsRef<str>>(texts: &[S]) -> Vec<u32> {
  let mut cache = PieceCache::default();
  texts
    .iter()
    .map(|t| cache.count_text(t.as_ref()) as u32)
    .collect()
}

/// Token ids of `s`.
pub fn encode(s: &str) -> Vec<u32> {
  tokenizer().encode(s)
}

/// Text of token ids; `None` when they do not decode to valid UTF-8 (a cut inside a character).
pub fn decode(tokens: &[u32]) -> Option<String> {
  tokenizer().decode(tokens)
}

/// Byte length of the longest prefix of `s` that ends on a character boundary, is covered by
/// the first `k ≤ max_tokens` tokens of the encoding of `s`, and itself counts at most
/// `max_tokens` tokens; `k` is tried from `max_tokens` down, so normally the result is simply
/// "the first `max_tokens` tokens, moved back to a character boundary".
pub fn token_prefix_len(s: &str, max_tokens: usize) -> usize {
  let tok = tokenizer();
  // Byte ends of the first `max_tokens` tokens. Only the pre-tokenised piece in which the
  // budget runs out is encoded; earlier pieces are taken whole.
  let mut ends: Vec<usize> = Vec::with_capacity(max_tokens.min(1 << 16));
  let mut covered = 0usize;
  for piece in tok.split(s) {
    if ends.len() >= max_tokens {
      break;
    }
    let piece_tokens = tok.bpe.count(piece.as_bytes());
    if ends.len() + piece_tokens <= max_tokens {
      covered += piece.len();
      ends.extend(std::iter::repeat_n(covered, piece_tokens));
    } else {
      let mut at = covered;
      for t in tok.bpe.encode_via_backtracking(piece.as_bytes()) {
        if ends.len() >= max_tokens {
          break;
        }
        at += tok.bpe.token_len(t);
        ends.push(at);
      }
      covered += piece.len();
    }
  }
  if ends.len() < max_tokens && covered == s.len() {
    // Everything fits (fewer tokens than the budget).
    return s.len();
  }
  for k in (1..=ends.len()).rev() {
    let b = floor_char_boundary(s, ends[k - 1]);
    if b > 0 && tok.count(&s[..b]) <= max_tokens {
      return b;
    }
  }
  0
}

/// `s` cut to at most `max_tokens` tokens (see [`token_prefix_len`]); `s` itself when it fits.
pub fn truncate_to_tokens(s: &str, max_tokens: usize) -> &str {
  &s[..token_prefix_len(s, max_tokens)]
}

/// Largest character boundary of `s` at or before byte `i`.
pub(crate) fn floor_char_boundary(s: &str, mut i: usize) -> usize {
  if i >= s.len() {
    return s.len();
  }
  while !s.is_char_boundary(i) {
    i -= 1;
  }
  i
}

/// Memoised BPE counts of pre-tokenised pieces (a word, a number group, a whitespace run…).
/// Keys borrow from the caller's text, so a cache lives as long as that text.
#[derive(Default)]
pub(crate) struct PieceCache<'t> {
  counts: FxHashMap<&'t str, u32>,
}

impl<'t> PieceCache<'t> {
  /// BPE token count of one pre-tokenised piece.
  pub(crate) fn count_piece(&mut self, piece: &'t str) -> u32 {
    if let Some(&n) = self.counts.get(piece) {
      return n;
    }
    let n = tokenizer().bpe.count(piece.as_bytes()) as u32;
    // Long pieces (blobs) rarely repeat; keep the map small.
    if piece.len() <= 64 {
      self.counts.insert(piece, n);
    }
    n
  }

  /// Token count of a whole string: pre-tokenise, then sum the pieces' counts.
  pub(crate) fn count_text(&mut self, text: &'t str) -> u64 {
    tokenizer().split(text).map(|p| self.count_piece(p) as u64).sum()
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  /// Expected counts and ids computed with tiktoken-rs 0.12.1 (`o200k_base_singleton()
  /// .encode_ordinary`), an independent implementation of the same vocabulary.
  const TIKTOKEN_VECTORS: &[(&str, &[u32])] = &[
    ("hello world", &[24912, 2375]),
    ("Hello world.", &[13225, 2375, 13]),
    ("", &[]),
    (" ", &[220]),
    ("  \n\n  x", &[11691, 220, 1215]),
    ("居里夫人", &[38873, 8756, 31050, 1995]),
    (
      "Marie Curie discovered radium in 1898.",
      &[145989, 19518, 396, 16988, 9920, 2883, 306, 220, 13589, 23, 13],
    ),
    ("ＡＩ", &[107807, 590, 102]),
    ("a   b", &[64, 256, 287]),
    ("don't", &[91418]),
    ("I'M", &[40, 95346]),
    ("\u{feff}x", &[5574, 87]),
    ("🙂🙂", &[37459, 37459]),
    ("12345678", &[7633, 19354, 4388]),
    ("   ", &[271]),
    ("x  \n", &[87, 4066]),
    (
      "北京是中国的首都。上海是最大的城市！",
      &[
        19340, 3221, 11372, 1616, 15425, 12232, 788, 53339, 3221, 190330, 47371, 3393,
      ],
    ),
  ];

  #[test]
  fn counts_and_ids_match_tiktoken() {
    for (text, ids) in TIKTOKEN_VECTORS {
      assert_eq!(count_tokens(text), ids.len(), "count of {text:?}");
      assert_eq!(encode(text), *ids, "encoding of {text:?}");
      assert_eq!(decode(ids).as_deref(), Some(*text), "decoding of {text:?}");
    }
  }

  #[test]
  fn batch_counts_equal_single_counts() {
    let texts: Vec<&str> = TIKTOKEN_VECTORS.iter().map(|(t, _)| *t).collect();
    let batch = count_tokens_batch(&texts);
    for (t, n) in texts.iter().zip(batch) {
      assert_eq!(n as usize, count_tokens(t));
    }
  }

  #[test]
  fn truncation_keeps_character_boundaries_and_budget() {
    assert_eq!(truncate_to_tokens("hello world", 5), "hello world");
    assert_eq!(truncate_to_tokens("hello world", 1), "hello");
    assert_eq!(truncate_to_tokens("hello world", 0), "");
    // "ＡＩ" = [107807, 590, 102]: the last two tokens are the bytes of "Ｉ"; two tokens
    // end inside "Ｉ", so the cut moves back to the boundary after "Ａ".
    assert_eq!(truncate_to_tokens("ＡＩ", 2), "Ａ");
    let zh = "北京是中国的首都。上海是最大的城市！";
    for k in 0..=13 {
      let t = truncate_to_tokens(zh, k);
      assert!(count_tokens(t) <= k, "{k}: {t:?}");
      assert!(zh.starts_with(t));
    }
    assert_eq!(truncate_to_tokens(zh, 2), "北京是");
  }
}
