//! Distances. One kernel per space, written as chunked f32 accumulation so the compiler
//! vectorises it, and compiled twice on x86_64: once for the baseline (SSE2) and once with
//! AVX2+FMA enabled, picked at run time. The same kernels serve graph construction
//! (build.rs), graph search and exact search, so all three agree bit for bit.

use serde::{Deserialize, Serialize};

/// The vector space of an index (docs/method.md §3.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Space {
  /// Squared Euclidean distance.
  L2,
  /// Vectors are L2-normalised at insert and query; distance = 1 − cos.
  Cosine,
}

impl Space {
  pub fn name(self) -> &'static str {
    match self {
      Space::L2 => "l2",
      Space::Cosine => "cosine",
    }
  }

  /// Parses `l2` or `cosine`.
  pub fn parse(s: &str) -> Option<Space> {
    match s {
      "l2" => Some(Space::L2),
      "cosine" => Some(Space::Cosine),
      _ => None,
    }
  }
}

/// 32 lanes = four 8-wide AVX registers (or eight SSE registers) of independent partial
/// sums: enough parallel accumulators to hide the add latency.
const LANES: usize = 32;

// The loops below walk fixed-size arrays (`as_chunks`), so the compiler sees the trip
// count and no bounds checks, and turns each into vector instructions.

#[inline(always)]
fn l2_sq_body(a: &[f32], b: &[f32]) -> f32 {
  let n = a.len().min(b.len());
  let (ca, ta) = a[..n].as_chunks::<LANES>();
  let (cb, tb) = b[..n].as_chunks::<LANES>();
  let mut acc = [0f32; LANES];
  for (x, y) in ca.iter().zip(cb) {
    for i in 0..LANES {
      let d = x[i] - y[i];
      acc[i] += d * d;
    }
  }
  let mut tail = 0f32;
  for (x, y) in ta.iter().zip(tb) {
    let d = x - y;
    tail += d * d;
  }
  reduce(&acc) + tail
}

#[inline(always)]
fn dot_body(a: &[f32], b: &[f32]) -> f32 {
  let n = a.len().min(b.len());
  let (ca, ta) = a[..n].as_chunks::<LANES>();
  let (cb, tb) = b[..n].as_chunks::<LANES>();
  let mut acc = [0f32; LANES];
  for (x, y) in ca.iter().zip(cb) {
    for i in 0..LANES {
      acc[i] += x[i] * y[i];
    }
  }
  let mut tail = 0f32;
  for (x, y) in ta.iter().zip(tb) {
    tail += x * y;
  }
  reduce(&acc) + tail
}

/// (a·b, b·b) in one pass, for exact cosine search over vectors that are not normalised.
#[inline(always)]
fn dot_norm_body(a: &[f32], b: &[f32]) -> (f32, f32) {
  const HALF: usize = LANES / 2;
  let n = a.len().min(b.len());
  let (ca, ta) = a[..n].as_chunks::<HALF>();
  let (cb, tb) = b[..n].as_chunks::<HALF>();
  let mut dot = [0f32; HALF];
  let mut nrm = [0f32; HALF];
  for (x, y) in ca.iter().zip(cb) {
    for i in 0..HALF {
      dot[i] += x[i] * y[i];
      nrm[i] += y[i] * y[i];
    }
  }
  let (mut td, mut tn) = (0f32, 0f32);
  for (x, y) in ta.iter().zip(tb) {
    td += x * y;
    tn += y * y;
  }
  (dot.iter().sum::<f32>() + td, nrm.iter().sum::<f32>() + tn)
}

#[inline(always)]
fn reduce(acc: &[f32; LANES]) -> f32 {
  acc.iter().sum()
}

/// AVX2+FMA versions, written with intrinsics: the auto-vectoriser split the 32-lane
/// loops above into a mix of 2-, 4- and 8-wide operations (seen in the assembly), about
/// 3× slower than four independent 8-wide FMA chains.
#[cfg(target_arch = "x86_64")]
mod avx2 {
  use std::arch::x86_64::*;

  #[inline]
  #[target_feature(enable = "avx2,fma")]
  fn hsum(v: __m256) -> f32 {
    let lo = _mm256_castps256_ps128(v);
    let hi = _mm256_extractf128_ps::<1>(v);
    let s = _mm_add_ps(lo, hi);
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    let s = _mm_add_ss(s, _mm_shuffle_ps::<0b01>(s, s));
    _mm_cvtss_f32(s)
  }

  #[target_feature(enable = "avx2,fma")]
  pub(super) unsafe fn l2_sq(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut acc = [_mm256_setzero_ps(); 4];
    let mut i = 0;
    // SAFETY (all loads): i + 32 <= n, resp. i + 8 <= n, and both slices hold n values.
    while i + 32 <= n {
      for (j, acc) in acc.iter_mut().enumerate() {
        let d = unsafe {
          _mm256_sub_ps(
            _mm256_loadu_ps(pa.add(i + 8 * j)),
            _mm256_loadu_ps(pb.add(i + 8 * j)),
          )
        };
        *acc = _mm256_fmadd_ps(d, d, *acc);
      }
      i += 32;
    }
    while i + 8 <= n {
      let d = unsafe { _mm256_sub_ps(_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i))) };
      acc[0] = _mm256_fmadd_ps(d, d, acc[0]);
      i += 8;
    }
    let sum = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
    let mut total = hsum(sum);
    for k in i..n {
      let d = a[k] - b[k];
      total += d * d;
    }
    total
  }

  #[target_feature(enable = "avx2,fma")]
  pub(super) unsafe fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut acc = [_mm256_setzero_ps(); 4];
    let mut i = 0;
    // SAFETY (all loads): as in `l2_sq`.
    while i + 32 <= n {
      for (j, acc) in acc.iter_mut().enumerate() {
        let (x, y) = unsafe {
          (
            _mm256_loadu_ps(pa.add(i + 8 * j)),
            _mm256_loadu_ps(pb.add(i + 8 * j)),
          )
        };
        *acc = _mm256_fmadd_ps(x, y, *acc);
      }
      i += 32;
    }
    while i + 8 <= n {
      let (x, y) = unsafe { (_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i))) };
      acc[0] = _mm256_fmadd_ps(x, y, acc[0]);
      i += 8;
    }
    let sum = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
    let mut total = hsum(sum);
    for k in i..n {
      total += a[k] * b[k];
    }
    total
  }

  #[target_feature(enable = "avx2,fma")]
  pub(super) unsafe fn dot_norm(a: &[f32], b: &[f32]) -> (f32, f32) {
    let n = a.len().min(b.len());
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let (mut d0, mut d1, mut n0, mut n1) = (
      _mm256_setzero_ps(),
      _mm256_setzero_ps(),
      _mm256_setzero_ps(),
      _mm256_setzero_ps(),
    );
    let mut i = 0;
    // SAFETY (all loads): as in `l2_sq`.
    while i + 16 <= n {
      let (x0, y0, x1, y1) = unsafe {
        (
          _mm256_loadu_ps(pa.add(i)),
          _mm256_loadu_ps(pb.add(i)),
          _mm256_loadu_ps(pa.add(i + 8)),
          _mm256_loadu_ps(pb.add(i + 8)),
        )
      };
      d0 = _mm256_fmadd_ps(x0, y0, d0);
      n0 = _mm256_fmadd_ps(y0, y0, n0);
      d1 = _mm256_fmadd_ps(x1, y1, d1);
      n1 = _mm256_fmadd_ps(y1, y1, n1);
      i += 16;
    }
    let (mut dt, mut nt) = (hsum(_mm256_add_ps(d0, d1)), hsum(_mm256_add_ps(n0, n1)));
    for k in i..n {
      dt += a[k] * b[k];
      nt += b[k] * b[k];
    }
    (dt, nt)
  }
}

#[cfg(target_arch = "x86_64")]
pub(crate) fn has_avx2() -> bool {
  use std::sync::OnceLock;
  static AVX2: OnceLock<bool> = OnceLock::new();
  *AVX2.get_or_init(|| is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"))
}

/// Squared Euclidean distance.
#[inline]
pub fn l2_squared(a: &[f32], b: &[f32]) -> f32 {
  #[cfg(target_arch = "x86_64")]
  if has_avx2() {
    // SAFETY: the CPU supports AVX2 and FMA (checked at run time just above).
    return unsafe { avx2::l2_sq(a, b) };
  }
  l2_sq_body(a, b)
}

/// Inner product.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
  #[cfg(target_arch = "x86_64")]
  if has_avx2() {
    // SAFETY: as in `l2_squared`.
    return unsafe { avx2::dot(a, b) };
  }
  dot_body(a, b)
}

/// (a·b, |b|²).
#[inline]
pub fn dot_and_norm(a: &[f32], b: &[f32]) -> (f32, f32) {
  #[cfg(target_arch = "x86_64")]
  if has_avx2() {
    // SAFETY: as in `l2_squared`.
    return unsafe { avx2::dot_norm(a, b) };
  }
  dot_norm_body(a, b)
}

/// Scales `v` to unit length in place. A zero vector stays zero (its cosine distance to
/// anything is then 1), rather than becoming NaN.
pub fn normalize(v: &mut [f32]) {
  let n = dot(v, v).sqrt();
  if n > 0.0 && n.is_finite() {
    let inv = 1.0 / n;
    for x in v.iter_mut() {
      *x *= inv;
    }
  }
}

/// Distance between a query and a stored vector, both already prepared for `space`
/// (normalised for cosine). Never negative (the neighbour heuristic compares distances, and
/// 1 − cos of two unit vectors can round to −1e-7).
#[inline]
pub fn distance(space: Space, a: &[f32], b: &[f32]) -> f32 {
  match space {
    Space::L2 => l2_squared(a, b),
    Space::Cosine => (1.0 - dot(a, b)).max(0.0),
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn naive_l2(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| ((x - y) as f64).powi(2)).sum()
  }

  #[test]
  fn kernels_match_naive_sums_for_every_tail_length() {
    for n in [1usize, 7, 16, 31, 32, 33, 64, 100, 384] {
      let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
      let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
      let want = naive_l2(&a, &b);
      assert!(
        (l2_squared(&a, &b) as f64 - want).abs() < 1e-4 * (1.0 + want),
        "l2 n={n}"
      );
      let want_dot: f64 = a.iter().zip(&b).map(|(x, y)| (*x as f64) * (*y as f64)).sum();
      assert!(
        (dot(&a, &b) as f64 - want_dot).abs() < 1e-4 * (1.0 + want_dot.abs()),
        "dot n={n}"
      );
      let (d, nb) = dot_and_norm(&a, &b);
      let want_nb: f64 = b.iter().map(|y| (*y as f64).powi(2)).sum();
      assert!((d as f64 - want_dot).abs() < 1e-4 * (1.0 + want_dot.abs()));
      assert!((nb as f64 - want_nb).abs() < 1e-4 * (1.0 + want_nb));
    }
  }

  #[test]
  fn cosine_distance_is_never_negative_and_zero_vectors_stay_finite() {
    let mut a = vec![0.3f32; 77];
    normalize(&mut a);
    assert!(distance(Space::Cosine, &a, &a) >= 0.0);
    assert!(distance(Space::Cosine, &a, &a) < 1e-5);
    let mut z = vec![0f32; 77];
    normalize(&mut z);
    assert!(z.iter().all(|x| *x == 0.0));
    assert_eq!(distance(Space::Cosine, &a, &z), 1.0);
  }
}
