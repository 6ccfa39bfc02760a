//! The beam search's code distance (view.rs): `code_l2(query, row)` of quantized.rs, exactly,
//! with the query's side prepared once per search.
//!
//! A search compares one query with a couple of thousand stored code rows. `code_l2` widens
//! both rows from bytes to 16-bit words on every call; here the query is widened once, so
//! each 32 stored bytes cost two widening loads, two subtractions against the stored query
//! words, two multiply-adds and two additions. Every term is an exact integer (|a − b| ≤ 255,
//! a pair of squares ≤ 130,050 in an i32 lane), so the sum is `code_l2`'s, bit for bit: the
//! walk and its results do not change.

use crate::quantized::code_l2;

/// A query code row ready for [`WalkQuery::distance`].
pub(crate) struct WalkQuery {
  code: Vec<u8>,
  /// The code widened to u16 (AVX2 path only; empty otherwise).
  words: Vec<u16>,
}

impl WalkQuery {
  /// `code` is the query's padded code row (quantized.rs `encode_query`).
  pub(crate) fn new(code: Vec<u8>) -> WalkQuery {
    #[cfg(target_arch = "x86_64")]
    let wide = crate::distance::has_avx2() && code.len().is_multiple_of(32);
    #[cfg(not(target_arch = "x86_64"))]
    let wide = false;
    let words = if wide {
      code.iter().map(|&b| u16::from(b)).collect()
    } else {
      Vec::new()
    };
    WalkQuery { code, words }
  }

  /// `code_l2(query, row)` for a stored row of the query's padded length.
  #[inline]
  pub(crate) fn distance(&self, row: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if !self.words.is_empty() && row.len() == self.words.len() {
      // SAFETY: `words` is only filled when the CPU has AVX2 and the rows are whole
      // multiples of 32 bytes; `row` has the same length (checked just above).
      return unsafe { avx2::distance(&self.words, row) };
    }
    code_l2(&self.code, row)
  }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
  use std::arch::x86_64::*;

  use crate::quantized::avx2::hsum_epi32;

  /// Σ (row[i] − query[i])² with the query already in 16-bit words; `words.len() ==
  /// row.len()`, a multiple of 32.
  #[target_feature(enable = "avx2,fma")]
  pub(super) unsafe fn distance(words: &[u16], row: &[u8]) -> u32 {
    let n = row.len();
    let (pq, pr) = (words.as_ptr(), row.as_ptr());
    let mut acc0 = _mm256_setzero_si256();
    let mut acc1 = _mm256_setzero_si256();
    let mut i = 0;
    while i + 32 <= n {
      // SAFETY (loads): i + 32 <= n, and both slices hold n elements.
      let (r_lo, r_hi, q_lo, q_hi) = unsafe {
        (
          _mm256_cvtepu8_epi16(_mm_loadu_si128(pr.add(i) as *const __m128i)),
          _mm256_cvtepu8_epi16(_mm_loadu_si128(pr.add(i + 16) as *const __m128i)),
          _mm256_loadu_si256(pq.add(i) as *const __m256i),
          _mm256_loadu_si256(pq.add(i + 16) as *const __m256i),
        )
      };
      let d_lo = _mm256_sub_epi16(r_lo, q_lo);
      let d_hi = _mm256_sub_epi16(r_hi, q_hi);
      acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(d_lo, d_lo));
      acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(d_hi, d_hi));
      i += 32;
    }
    // SAFETY: the CPU has AVX2 (this function's contract).
    unsafe { hsum_epi32(_mm256_add_epi32(acc0, acc1)) }
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn equals_code_l2() {
    for len in [32usize, 64, 96, 256, 1536] {
      let a: Vec<u8> = (0..len).map(|i| (i * 37 % 256) as u8).collect();
      let b: Vec<u8> = (0..len).map(|i| (255 - i * 11 % 256) as u8).collect();
      let q = WalkQuery::new(a.clone());
      assert_eq!(q.distance(&b), code_l2(&a, &b), "len {len}");
      assert_eq!(q.distance(&a), 0);
    }
    let zeros = vec![0u8; 1536];
    let full = vec![255u8; 1536];
    assert_eq!(WalkQuery::new(zeros).distance(&full), 1536 * 255 * 255);
  }
}
