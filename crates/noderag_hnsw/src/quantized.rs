//! 8-bit codes of the stored vectors, for the beam search's traversal.
//!
//! Why: a graph search computes thousands of distances to vectors scattered in memory; at a
//! few hundred dimensions each f32 vector spans many cache lines, so the search waits on
//! memory more than it computes. One byte per value instead of four makes the codes of a
//! whole index fit in cache far more often, and an integer kernel compares 32 values per
//! step. The traversal ranks candidates by code distance; the final beam is re-ranked with
//! exact f32 distances, so returned distances are exact and only the path is approximate.
//!
//! Scalar quantisation with one range for all dimensions (so the code distance is a plain
//! sum of squared byte differences, a fixed multiple of the true squared L2): the range is
//! that of all stored values; a query value outside it clamps. For
//! cosine the stored vectors and the query are unit length, where squared L2 = 2 − 2·cos
//! orders candidates exactly as the cosine distance does.

/// Codes of `n` vectors, each padded with zeros to a multiple of 32 bytes.
pub(crate) struct Codes {
  codes: Vec<u8>,
  stride: usize,
  dim: usize,
  lo: f32,
  /// Codes per unit of value: code = round((x − lo) · inv_step), clamped to 0..=255.
  inv_step: f32,
  /// (smallest, largest) value of the encoded vectors.
  range: (f32, f32),
}

impl Codes {
  /// Encodes the vectors `vector(0..n)`.
  pub(crate) fn build<'a>(n: usize, dim: usize, vector: impl Fn(usize) -> &'a [f32]) -> Codes {
    let (lo, hi) = value_range(n, dim, &vector);
    let span = hi - lo;
    let inv_step = if span > 0.0 && span.is_finite() {
      255.0 / span
    } else {
      0.0
    };
    let stride = dim.div_ceil(32) * 32;
    let mut codes = Codes {
      codes: vec![0; n * stride],
      stride,
      dim,
      lo,
      inv_step,
      range: (lo, hi),
    };
    for i in 0..n {
      let row = &mut codes.codes[i * stride..i * stride + dim];
      encode_into(vector(i), lo, inv_step, row);
    }
    codes
  }

  /// Vectors encoded.
  pub(crate) fn len(&self) -> usize {
    self.codes.len() / self.stride
  }

  /// Encodes `rows` (whole vectors of `dim`) after the stored ones, with the current range:
  /// the same codes as `build` over all of them when their values lie within the range.
  pub(crate) fn push_rows(&mut self, rows: &[f32]) {
    for v in rows.chunks_exact(self.dim) {
      let at = self.codes.len();
      self.codes.resize(at + self.stride, 0);
      encode_into(v, self.lo, self.inv_step, &mut self.codes[at..at + self.dim]);
    }
  }

  /// The range `build` derived (the smallest and largest stored value).
  pub(crate) fn range(&self) -> (f32, f32) {
    self.range
  }

  /// The query's code row (padded like the stored rows).
  pub(crate) fn encode_query(&self, query: &[f32]) -> Vec<u8> {
    let mut out = vec![0; self.stride];
    encode_into(query, self.lo, self.inv_step, &mut out[..self.dim]);
    out
  }

  #[inline]
  pub(crate) fn row(&self, label: u32) -> &[u8] {
    let start = label as usize * self.stride;
    &self.codes[start..start + self.stride]
  }

  /// Bytes of one padded row (for prefetching).
  pub(crate) fn stride(&self) -> usize {
    self.stride
  }

  pub(crate) fn row_ptr(&self, label: u32) -> *const u8 {
    self.codes.as_ptr().wrapping_add(label as usize * self.stride)
  }
}

fn encode_into(v: &[f32], lo: f32, inv_step: f32, out: &mut [u8]) {
  for (o, &x) in out.iter_mut().zip(v) {
    *o = ((x - lo) * inv_step).round().clamp(0.0, 255.0) as u8;
  }
}

/// The smallest and largest stored value. (Percentiles were tried: short texts' vectors
/// hold a few large values, and clamping those lost the recall the codes are meant to keep.)
pub(crate) fn value_range<'a>(n: usize, dim: usize, vector: &impl Fn(usize) -> &'a [f32]) -> (f32, f32) {
  let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
  for i in 0..n {
    for &x in &vector(i)[..dim] {
      lo = lo.min(x);
      hi = hi.max(x);
    }
  }
  if lo > hi {
    (0.0, 0.0)
  } else {
    (lo, hi)
  }
}

/// Squared L2 between two code rows of equal, 32-divisible length.
#[inline]
pub(crate) fn code_l2(a: &[u8], b: &[u8]) -> u32 {
  #[cfg(target_arch = "x86_64")]
  if crate::distance::has_avx2() {
    // SAFETY: the CPU supports AVX2 (checked at run time just above).
    return unsafe { avx2::code_l2(a, b) };
  }
  code_l2_body(a, b)
}

fn code_l2_body(a: &[u8], b: &[u8]) -> u32 {
  a.iter()
    .zip(b)
    .map(|(&x, &y)| {
      let d = x as i32 - y as i32;
      (d * d) as u32
    })
    .sum()
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
  use std::arch::x86_64::*;

  /// 32 bytes per step: widen to i16, subtract, and let `madd` square and pair-sum into i32
  /// (|d| ≤ 255, so a pair sum ≤ 130,050 and a row of up to 16k values cannot overflow).
  #[target_feature(enable = "avx2,fma")]
  pub(super) unsafe fn code_l2(a: &[u8], b: &[u8]) -> u32 {
    let n = a.len().min(b.len());
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut acc0 = _mm256_setzero_si256();
    let mut acc1 = _mm256_setzero_si256();
    let mut i = 0;
    // SAFETY (loads): i + 32 <= n and both slices hold n bytes.
    while i + 32 <= n {
      let (va, vb) = unsafe {
        (
          _mm256_loadu_si256(pa.add(i) as *const __m256i),
          _mm256_loadu_si256(pb.add(i) as *const __m256i),
        )
      };
      let a_lo = _mm256_cvtepu8_epi16(_mm256_castsi256_si128(va));
      let a_hi = _mm256_cvtepu8_epi16(_mm256_extracti128_si256::<1>(va));
      let b_lo = _mm256_cvtepu8_epi16(_mm256_castsi256_si128(vb));
      let b_hi = _mm256_cvtepu8_epi16(_mm256_extracti128_si256::<1>(vb));
      let d_lo = _mm256_sub_epi16(a_lo, b_lo);
      let d_hi = _mm256_sub_epi16(a_hi, b_hi);
      acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(d_lo, d_lo));
      acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(d_hi, d_hi));
      i += 32;
    }
    // SAFETY: the CPU has AVX2 (this function's contract).
    let mut total = unsafe { hsum_epi32(_mm256_add_epi32(acc0, acc1)) };
    for k in i..n {
      let d = a[k] as i32 - b[k] as i32;
      total += (d * d) as u32;
    }
    total
  }

  /// The sum of the eight i32 lanes of `acc`, as u32 (the code kernels' sums are never
  /// negative).
  #[target_feature(enable = "avx2")]
  pub(crate) unsafe fn hsum_epi32(acc: __m256i) -> u32 {
    let s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256::<1>(acc));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
    _mm_cvtsi128_si32(s) as u32
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn kernel_matches_the_scalar_sum() {
    for len in [32usize, 64, 96, 1536] {
      let a: Vec<u8> = (0..len).map(|i| (i * 37 % 256) as u8).collect();
      let b: Vec<u8> = (0..len).map(|i| (255 - i * 11 % 256) as u8).collect();
      assert_eq!(code_l2(&a, &b), code_l2_body(&a, &b), "len {len}");
      assert_eq!(code_l2(&a, &a), 0);
    }
    // Extremes: every difference 255.
    let zeros = vec![0u8; 1536];
    let full = vec![255u8; 1536];
    assert_eq!(code_l2(&zeros, &full), 1536 * 255 * 255);
  }

  #[test]
  fn code_distance_tracks_the_true_distance() {
    // 200 pseudo-random vectors in [-1, 1]^48: the code distance, scaled back, is close
    // to the true squared L2 (within quantisation noise), and orders far pairs alike.
    let dim = 48;
    let mut state = 12345u64;
    let mut next = || {
      state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
      ((state >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
    };
    let data: Vec<f32> = (0..200 * dim).map(|_| next()).collect();
    let codes = Codes::build(200, dim, |i| &data[i * dim..(i + 1) * dim]);
    assert_eq!(codes.stride(), 64);
    let step = 1.0 / codes.inv_step;
    let q = &data[..dim];
    let qc = codes.encode_query(q);
    for j in 1..200u32 {
      let row = &data[j as usize * dim..(j as usize + 1) * dim];
      let exact = crate::distance::l2_squared(q, row);
      let approx = code_l2(&qc, codes.row(j)) as f32 * step * step;
      assert!(
        (approx - exact).abs() < 0.05 * exact + 0.05,
        "{j}: {approx} vs {exact}"
      );
    }
  }

  #[test]
  fn constant_data_encodes_to_zero_without_dividing_by_zero() {
    let data = vec![0.5f32; 64];
    let codes = Codes::build(2, 32, |i| &data[i * 32..(i + 1) * 32]);
    assert_eq!(code_l2(&codes.encode_query(&data[..32]), codes.row(1)), 0);
  }
}
