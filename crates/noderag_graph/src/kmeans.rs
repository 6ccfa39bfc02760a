//! k-means on flat f32 vectors (docs/method.md §3.7 linking): seeded k-means++ initialisation,
//! at most 25 Lloyd iterations, stopping early when no assignment changes.
//!
//! Determinism: distances are summed in a fixed order (8 lanes, then the lanes left to
//! right), centroids are averaged in f64 in point order, ties go to the lower centroid.
//! The assignment step runs on several threads, but each point's result does not depend
//! on the split, so the output is identical on any machine. Where the CPU has AVX2 the
//! distances are computed 8 lanes wide and to 4 rows at once (`avx2`): the same lane sums in
//! the same order (a subtraction, a multiplication and an addition per component, no fused
//! multiply-add), so the same bits as `squared_distance`.
//!
//! Most distances of the later iterations are never computed (`assign_bounded`, Elkan's
//! bounds): each point keeps a lower bound on its distance to every centroid and an upper
//! bound on the distance to its own, moved by how far the centroids moved; a centroid whose
//! lower bound clears the upper bound by a margin cannot be the point's nearest, and when
//! none can, the point keeps its centroid without a distance computed. The margin (SLACK)
//! is far wider than the rounding of an f32 distance, so a centroid skipped this way is one
//! whose computed distance would have lost to the kept one: labels, iterations, centroids
//! and inertia are Lloyd's, bit for bit (tested against the plain assignment).

use crate::error::{invalid, Result};
use crate::rng::SplitMix64;

pub const MAX_ITER: u32 = 25;

/// Largest point × centroid table of lower bounds kept between iterations (64 MiB of f32);
/// beyond it every distance is computed each iteration, with the same result.
const CACHE_ENTRIES: usize = 16 << 20;

/// Relative margin of the bounds: far above the relative rounding error of an f32 squared
/// distance summed over 8 lanes (about 2e-5 at dim 1536) and of the bounds' own f32 storage.
const SLACK: f64 = 1e-3;

#[derive(Clone, Debug, PartialEq)]
pub struct KMeans {
  /// Cluster of each point.
  pub labels: Vec<u32>,
  /// k × dim, row-major.
  pub centroids: Vec<f32>,
  pub iterations: u32,
  /// Σ squared distance of each point to its centroid.
  pub inertia: f64,
}

#[derive(Clone, Copy, Debug)]
pub struct KMeansOptions {
  pub seed: u64,
  pub max_iter: u32,
  /// L2-normalise the vectors first (for the `cosine` space).
  pub normalize: bool,
}

impl Default for KMeansOptions {
  fn default() -> Self {
    KMeansOptions {
      seed: crate::SEED,
      max_iter: MAX_ITER,
      normalize: false,
    }
  }
}

/// Squared L2 distance with a fixed summation order.
#[inline]
pub fn squared_distance(a: &[f32], b: &[f32]) -> f32 {
  let mut lanes = [0f32; 8];
  let mut ca = a.chunks_exact(8);
  let mut cb = b.chunks_exact(8);
  for (x, y) in (&mut ca).zip(&mut cb) {
    for l in 0..8 {
      let d = x[l] - y[l];
      lanes[l] += d * d;
    }
  }
  let mut tail = 0f32;
  for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
    let d = x - y;
    tail += d * d;
  }
  ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7])) + tail
}

#[cfg(target_arch = "x86_64")]
fn has_avx2() -> bool {
  use std::sync::OnceLock;
  static AVX2: OnceLock<bool> = OnceLock::new();
  *AVX2.get_or_init(|| is_x86_feature_detected!("avx2"))
}

/// The nearest of the `k` rows of `centroids` to `p` (ties: the lower index) and its squared
/// distance, each distance exactly `squared_distance`.
#[inline]
fn nearest_centroid(p: &[f32], centroids: &[f32], k: usize, dim: usize) -> (u32, f32) {
  #[cfg(target_arch = "x86_64")]
  if has_avx2() {
    // SAFETY: the CPU supports AVX2 (checked at run time just above).
    return unsafe { avx2::nearest_centroid(p, centroids, k, dim) };
  }
  let mut best = 0u32;
  let mut best_d = f32::INFINITY;
  for c in 0..k {
    let d = squared_distance(p, &centroids[c * dim..(c + 1) * dim]);
    if d < best_d {
      best_d = d;
      best = c as u32;
    }
  }
  (best, best_d)
}

/// `squared_distance(p, c)`, 8 lanes wide where the CPU has AVX2 (the same bits).
#[inline]
fn distance(p: &[f32], c: &[f32]) -> f32 {
  #[cfg(target_arch = "x86_64")]
  if has_avx2() {
    // SAFETY: as in `nearest_centroid`.
    return unsafe { avx2::one(p, c) };
  }
  squared_distance(p, c)
}

/// `nearest[i] = min(nearest[i], squared_distance(row i, c))` over the rows of `data`.
#[inline]
fn lower_to(data: &[f32], dim: usize, c: &[f32], nearest: &mut [f64]) {
  #[cfg(target_arch = "x86_64")]
  if has_avx2() {
    // SAFETY: as in `nearest_centroid`.
    return unsafe { avx2::lower_to(data, dim, c, nearest) };
  }
  for (i, d) in nearest.iter_mut().enumerate() {
    *d = d.min(squared_distance(&data[i * dim..(i + 1) * dim], c) as f64);
  }
}

/// `row[c] = squared_distance(p, centroid c)` for each `c` of `which`.
#[inline]
fn distances_to(p: &[f32], centroids: &[f32], dim: usize, which: &[usize], row: &mut [f32]) {
  #[cfg(target_arch = "x86_64")]
  if has_avx2() {
    // SAFETY: as in `nearest_centroid`.
    return unsafe { avx2::distances_to(p, centroids, dim, which, row) };
  }
  for &c in which {
    row[c] = squared_distance(p, &centroids[c * dim..(c + 1) * dim]);
  }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
  use std::arch::x86_64::*;

  /// The 8 lane sums reduced as `squared_distance` does, plus its tail.
  #[target_feature(enable = "avx2")]
  fn finish(acc: __m256, a: &[f32], b: &[f32], from: usize) -> f32 {
    let mut l = [0f32; 8];
    // SAFETY: `l` holds 8 f32.
    unsafe { _mm256_storeu_ps(l.as_mut_ptr(), acc) };
    let mut tail = 0f32;
    for (x, y) in a[from..].iter().zip(&b[from..]) {
      let d = x - y;
      tail += d * d;
    }
    ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7])) + tail
  }

  /// `squared_distance(p, r)` for 4 rows at once (4 independent chains: the addition's
  /// latency, not its throughput, bounds a single one).
  #[target_feature(enable = "avx2")]
  fn four(p: &[f32], r: [&[f32]; 4]) -> [f32; 4] {
    let n = p.len();
    assert!(r.iter().all(|x| x.len() == n));
    let main = n - n % 8;
    let mut acc = [_mm256_setzero_ps(); 4];
    let mut j = 0;
    while j < main {
      // SAFETY: j + 8 <= main <= n, the length of `p` and of every row (asserted above).
      let x = unsafe { _mm256_loadu_ps(p.as_ptr().add(j)) };
      for t in 0..4 {
        // SAFETY: as above.
        let y = unsafe { _mm256_loadu_ps(r[t].as_ptr().add(j)) };
        let d = _mm256_sub_ps(x, y);
        acc[t] = _mm256_add_ps(acc[t], _mm256_mul_ps(d, d));
      }
      j += 8;
    }
    [
      finish(acc[0], p, r[0], main),
      finish(acc[1], p, r[1], main),
      finish(acc[2], p, r[2], main),
      finish(acc[3], p, r[3], main),
    ]
  }

  /// `squared_distance`, 8 lanes wide.
  #[target_feature(enable = "avx2")]
  pub(super) fn one(p: &[f32], r: &[f32]) -> f32 {
    let n = p.len();
    assert_eq!(r.len(), n);
    let main = n - n % 8;
    let mut acc = _mm256_setzero_ps();
    let mut j = 0;
    while j < main {
      // SAFETY: j + 8 <= main <= n, the length of both slices.
      let (x, y) = unsafe {
        (
          _mm256_loadu_ps(p.as_ptr().add(j)),
          _mm256_loadu_ps(r.as_ptr().add(j)),
        )
      };
      let d = _mm256_sub_ps(x, y);
      acc = _mm256_add_ps(acc, _mm256_mul_ps(d, d));
      j += 8;
    }
    finish(acc, p, r, main)
  }

  #[target_feature(enable = "avx2")]
  pub(super) fn nearest_centroid(p: &[f32], centroids: &[f32], k: usize, dim: usize) -> (u32, f32) {
    let row = |c: usize| &centroids[c * dim..(c + 1) * dim];
    let mut best = 0u32;
    let mut best_d = f32::INFINITY;
    let mut c = 0;
    while c + 4 <= k {
      let d = four(p, [row(c), row(c + 1), row(c + 2), row(c + 3)]);
      for (t, &d) in d.iter().enumerate() {
        if d < best_d {
          best_d = d;
          best = (c + t) as u32;
        }
      }
      c += 4;
    }
    while c < k {
      let d = one(p, row(c));
      if d < best_d {
        best_d = d;
        best = c as u32;
      }
      c += 1;
    }
    (best, best_d)
  }

  #[target_feature(enable = "avx2")]
  pub(super) fn distances_to(p: &[f32], centroids: &[f32], dim: usize, which: &[usize], row: &mut [f32]) {
    let at = |c: usize| &centroids[c * dim..(c + 1) * dim];
    let mut groups = which.chunks_exact(4);
    for g in &mut groups {
      let d = four(p, [at(g[0]), at(g[1]), at(g[2]), at(g[3])]);
      for t in 0..4 {
        row[g[t]] = d[t];
      }
    }
    for &c in groups.remainder() {
      row[c] = one(p, at(c));
    }
  }

  #[target_feature(enable = "avx2")]
  pub(super) fn lower_to(data: &[f32], dim: usize, c: &[f32], nearest: &mut [f64]) {
    let row = |i: usize| &data[i * dim..(i + 1) * dim];
    let n = nearest.len();
    let mut i = 0;
    while i + 4 <= n {
      // The distance is symmetric bit for bit (x − y and y − x square alike).
      let d = four(c, [row(i), row(i + 1), row(i + 2), row(i + 3)]);
      for t in 0..4 {
        nearest[i + t] = nearest[i + t].min(d[t] as f64);
      }
      i += 4;
    }
    while i < n {
      nearest[i] = nearest[i].min(one(row(i), c) as f64);
      i += 1;
    }
  }
}

pub fn kmeans(data: &[f32], dim: usize, k: usize, opts: &KMeansOptions) -> Result<KMeans> {
  kmeans_with(data, dim, k, opts, CACHE_ENTRIES)
}

/// `kmeans`, keeping the distance table between iterations up to `cache_entries` (tests: 0).
fn kmeans_with(
  data: &[f32],
  dim: usize,
  k: usize,
  opts: &KMeansOptions,
  cache_entries: usize,
) -> Result<KMeans> {
  if dim == 0 {
    return Err(invalid("dim must be >= 1"));
  }
  if !data.len().is_multiple_of(dim) {
    return Err(invalid(format!(
      "vectors has {} values, not a multiple of dim {dim}",
      data.len()
    )));
  }
  let n = data.len() / dim;
  if k == 0 || k > n {
    return Err(invalid(format!(
      "k must be within [1, {n}] (the number of vectors), got {k}"
    )));
  }
  if let Some(i) = data.iter().position(|x| !x.is_finite()) {
    return Err(invalid(format!(
      "vectors[{i}] is not finite (vector {}, component {})",
      i / dim,
      i % dim
    )));
  }
  let normalized;
  let data = if opts.normalize {
    normalized = normalize_rows(data, dim);
    &normalized[..]
  } else {
    data
  };
  let mut rng = SplitMix64::new(opts.seed);
  let mut centroids = init_plus_plus(data, dim, n, k, &mut rng);
  let mut labels = vec![u32::MAX; n];
  let mut dists = vec![0f32; n];
  let mut bounds = (n.saturating_mul(k) <= cache_entries).then(|| Bounds {
    lower: vec![0f32; n * k],
    upper: vec![0f32; n],
  });
  // How far each centroid moved in the last update (0 when not at all, bit for bit).
  let mut shifts = vec![0f64; k];
  let mut iterations = 0;
  loop {
    let changed = match bounds.as_mut() {
      Some(b) => assign_bounded(data, dim, &centroids, k, &mut labels, b, &shifts),
      None => assign(data, dim, &centroids, k, &mut labels, &mut dists),
    };
    if changed == 0 || iterations == opts.max_iter {
      break;
    }
    iterations += 1;
    shifts = update_centroids(data, dim, k, &labels, &mut centroids);
  }
  if bounds.is_some() {
    // The bounded assignment skips distances: each point's distance to its centroid, as the
    // plain assignment's last pass would have measured it.
    for (i, d) in dists.iter_mut().enumerate() {
      let c = labels[i] as usize;
      *d = distance(&data[i * dim..(i + 1) * dim], &centroids[c * dim..(c + 1) * dim]);
    }
  }
  let inertia = dists.iter().map(|&d| d as f64).sum();
  Ok(KMeans {
    labels,
    centroids,
    iterations,
    inertia,
  })
}

fn normalize_rows(data: &[f32], dim: usize) -> Vec<f32> {
  let mut out = data.to_vec();
  for row in out.chunks_exact_mut(dim) {
    let norm = row.iter().map(|&x| (x as f64) * (x as f64)).sum::<f64>().sqrt();
    if norm > 0.0 {
      for x in row {
        *x = (*x as f64 / norm) as f32;
      }
    }
  }
  out
}

/// k-means++: the first centre uniformly at random, each next one with probability
/// proportional to the squared distance to the nearest centre chosen so far.
fn init_plus_plus(data: &[f32], dim: usize, n: usize, k: usize, rng: &mut SplitMix64) -> Vec<f32> {
  let row = |i: usize| &data[i * dim..(i + 1) * dim];
  let mut centroids = Vec::with_capacity(k * dim);
  let first = rng.below(n as u64) as usize;
  centroids.extend_from_slice(row(first));
  let mut nearest: Vec<f64> = (0..n)
    .map(|i| squared_distance(row(i), row(first)) as f64)
    .collect();
  for _ in 1..k {
    let total: f64 = nearest.iter().sum();
    let pick = if total > 0.0 {
      let mut x = rng.next_f64() * total;
      let mut chosen = n - 1;
      for (i, &d) in nearest.iter().enumerate() {
        if x < d {
          chosen = i;
          break;
        }
        x -= d;
      }
      chosen
    } else {
      rng.below(n as u64) as usize // every point coincides with a centre
    };
    let c = row(pick);
    centroids.extend_from_slice(c);
    // Each point's minimum is its own: split over threads, the same values.
    let threads = threads_for(n * dim);
    if threads <= 1 {
      lower_to(data, dim, c, &mut nearest);
    } else {
      let chunk = n.div_ceil(threads);
      std::thread::scope(|scope| {
        for (t, part) in nearest.chunks_mut(chunk).enumerate() {
          let rows = &data[t * chunk * dim..(t * chunk + part.len()) * dim];
          scope.spawn(move || lower_to(rows, dim, c, part));
        }
      });
    }
  }
  centroids
}

/// The number of threads for `work` point × centroid × dimension steps.
fn threads_for(work: usize) -> usize {
  if work < 2_000_000 {
    1
  } else {
    std::thread::available_parallelism().map_or(1, |p| p.get())
  }
}

/// `f(start, labels, …)` on consecutive chunks of the points, on `threads` threads; the sum
/// of what they return. Each point's result does not depend on the split.
fn par_points<T: Send>(
  labels: &mut [u32],
  other: Vec<T>,
  threads: usize,
  f: impl Fn(usize, &mut [u32], T) -> usize + Sync,
) -> usize {
  let n = labels.len();
  let chunk = n.div_ceil(threads.max(1)).max(1);
  if threads <= 1 || other.len() <= 1 {
    return labels
      .chunks_mut(chunk)
      .zip(other)
      .enumerate()
      .map(|(t, (l, o))| f(t * chunk, l, o))
      .sum();
  }
  std::thread::scope(|scope| {
    let f = &f;
    let handles: Vec<_> = labels
      .chunks_mut(chunk)
      .zip(other)
      .enumerate()
      .map(|(t, (l, o))| scope.spawn(move || f(t * chunk, l, o)))
      .collect();
    handles
      .into_iter()
      .map(|h| h.join().expect("k-means worker panicked"))
      .sum()
  })
}

/// Assigns each point to its nearest centroid (ties: lower index), measuring every distance.
/// Returns how many labels changed.
fn assign(
  data: &[f32],
  dim: usize,
  centroids: &[f32],
  k: usize,
  labels: &mut [u32],
  dists: &mut [f32],
) -> usize {
  let threads = threads_for(labels.len() * k * dim);
  let chunk = labels.len().div_ceil(threads).max(1);
  par_points(
    labels,
    dists.chunks_mut(chunk).collect(),
    threads,
    |start, labels, dists| {
      let mut changed = 0;
      for (off, (label, dist)) in labels.iter_mut().zip(dists.iter_mut()).enumerate() {
        let p = &data[(start + off) * dim..(start + off + 1) * dim];
        let (best, best_d) = nearest_centroid(p, centroids, k, dim);
        if *label != best {
          *label = best;
          changed += 1;
        }
        *dist = best_d;
      }
      changed
    },
  )
}

/// Elkan's bounds, kept between assignments (see the module comment). Distances here are
/// Euclidean, not squared.
struct Bounds {
  /// n × k: at most the distance from each point to each centroid.
  lower: Vec<f32>,
  /// At least the distance from each point to its centroid.
  upper: Vec<f32>,
}

/// A lower bound stored from a distance known to about 2e-5.
#[inline]
fn lower_from(d: f64) -> f32 {
  (d * (1.0 - SLACK)) as f32
}

/// An upper bound stored from a distance known to about 2e-5.
#[inline]
fn upper_from(d: f64) -> f32 {
  (d * (1.0 + SLACK)) as f32
}

/// `assign` with the bounds: the same labels, without the distances the bounds rule out
/// (`labels[i] == u32::MAX`: not assigned yet, every distance measured). `shifts[c]` is how
/// far centroid c moved since the last call.
fn assign_bounded(
  data: &[f32],
  dim: usize,
  centroids: &[f32],
  k: usize,
  labels: &mut [u32],
  bounds: &mut Bounds,
  shifts: &[f64],
) -> usize {
  // Later assignments measure few distances, but which points need them is not known ahead.
  let threads = threads_for(labels.len() * k * dim);
  let chunk = labels.len().div_ceil(threads).max(1);
  let parts: Vec<(&mut [f32], &mut [f32])> = bounds
    .lower
    .chunks_mut(chunk * k)
    .zip(bounds.upper.chunks_mut(chunk))
    .collect();
  par_points(labels, parts, threads, |start, labels, (lower, upper)| {
    let mut row = vec![0f32; k];
    let mut which: Vec<usize> = Vec::with_capacity(k);
    let mut changed = 0;
    for (off, label) in labels.iter_mut().enumerate() {
      let p = &data[(start + off) * dim..(start + off + 1) * dim];
      let lower = &mut lower[off * k..(off + 1) * k];
      let upper = &mut upper[off];
      which.clear();
      if *label == u32::MAX {
        which.extend(0..k);
      } else {
        let a = *label as usize;
        // The centroids moved: so may the distances, by at most how far they moved.
        for (l, &s) in lower.iter_mut().zip(shifts) {
          if s > 0.0 {
            *l = (((*l as f64) - s * (1.0 + SLACK)) * (1.0 - SLACK)).max(0.0) as f32;
          }
        }
        if shifts[a] > 0.0 {
          *upper = (((*upper as f64) + shifts[a] * (1.0 + SLACK)) * (1.0 + SLACK)) as f32;
        }
        let beaten = |lower: &[f32], upper: f32| {
          let margin = upper as f64 * (1.0 + SLACK);
          (0..k).any(|c| c != a && lower[c] as f64 <= margin)
        };
        if !beaten(lower, *upper) {
          continue;
        }
        row[a] = distance(p, &centroids[a * dim..(a + 1) * dim]);
        *upper = upper_from((row[a] as f64).sqrt());
        lower[a] = lower_from((row[a] as f64).sqrt());
        if !beaten(lower, *upper) {
          continue;
        }
        let margin = *upper as f64 * (1.0 + SLACK);
        which.extend((0..k).filter(|&c| c != a && lower[c] as f64 <= margin));
        which.push(a); // measured above; `row[a]` holds it
      }
      let fresh = if *label == u32::MAX {
        &which[..]
      } else {
        &which[..which.len() - 1]
      };
      distances_to(p, centroids, dim, fresh, &mut row);
      for &c in fresh {
        lower[c] = lower_from((row[c] as f64).sqrt());
      }
      // The nearest measured one; ties go to the lower index, as in `nearest_centroid`.
      let (mut best, mut best_d) = (u32::MAX, f32::INFINITY);
      for &c in &which {
        if row[c] < best_d || (row[c] == best_d && (c as u32) < best) {
          best_d = row[c];
          best = c as u32;
        }
      }
      *upper = upper_from((best_d as f64).sqrt());
      if *label != best {
        *label = best;
        changed += 1;
      }
    }
    changed
  })
}

/// Mean of each cluster (f64 sums in point order); an empty cluster keeps its centroid.
/// Returns how far each centroid moved (Euclidean, computed in f64; 0 when its value did not
/// change bit for bit).
fn update_centroids(data: &[f32], dim: usize, k: usize, labels: &[u32], centroids: &mut [f32]) -> Vec<f64> {
  let mut counts = vec![0usize; k];
  for &l in labels {
    counts[l as usize] += 1;
  }
  // Sums in point order, each thread over its own range of components: the same values on
  // any number of threads.
  let threads = threads_for(labels.len() * dim).min(dim);
  let width = dim.div_ceil(threads.max(1));
  let sums_of = |from: usize, to: usize| {
    let w = to - from;
    let mut sums = vec![0f64; k * w];
    for (i, &l) in labels.iter().enumerate() {
      let l = l as usize;
      for (s, &x) in sums[l * w..(l + 1) * w]
        .iter_mut()
        .zip(&data[i * dim + from..i * dim + to])
      {
        *s += x as f64;
      }
    }
    sums
  };
  let ranges: Vec<(usize, usize)> = (0..dim)
    .step_by(width.max(1))
    .map(|f| (f, (f + width).min(dim)))
    .collect();
  let parts: Vec<Vec<f64>> = if ranges.len() <= 1 {
    ranges.iter().map(|&(f, t)| sums_of(f, t)).collect()
  } else {
    std::thread::scope(|scope| {
      let handles: Vec<_> = ranges
        .iter()
        .map(|&(f, t)| {
          let sums_of = &sums_of;
          scope.spawn(move || sums_of(f, t))
        })
        .collect();
      handles
        .into_iter()
        .map(|h| h.join().expect("k-means worker panicked"))
        .collect()
    })
  };
  let mut sums = vec![0f64; k * dim];
  for (&(from, to), part) in ranges.iter().zip(&parts) {
    let w = to - from;
    for c in 0..k {
      sums[c * dim + from..c * dim + to].copy_from_slice(&part[c * w..(c + 1) * w]);
    }
  }
  let mut shifts = vec![0f64; k];
  for c in 0..k {
    if counts[c] > 0 {
      let mut moved2 = 0f64;
      for j in 0..dim {
        let v = (sums[c * dim + j] / counts[c] as f64) as f32;
        let d = v as f64 - centroids[c * dim + j] as f64;
        moved2 += d * d;
        centroids[c * dim + j] = v;
      }
      shifts[c] = moved2.sqrt();
    }
  }
  shifts
}

#[cfg(test)]
mod tests {
  use super::*;

  /// Well separated blobs: centres far apart on a few axes, small noise.
  fn blobs(rng: &mut SplitMix64, k: usize, per: usize, dim: usize) -> (Vec<f32>, Vec<u32>) {
    let mut data = Vec::new();
    let mut truth = Vec::new();
    for i in 0..k * per {
      let c = (i * 7919) % k; // interleaved, so clusters are not contiguous runs
      for j in 0..dim {
        let centre = if j % k == c { 100.0 } else { 0.0 };
        data.push(centre + (rng.next_f64() as f32 - 0.5));
      }
      truth.push(c as u32);
    }
    (data, truth)
  }

  /// The naive reference: Lloyd from the given initial centres, plain loops in f64.
  fn reference_lloyd(data: &[f32], dim: usize, init: &[f32], k: usize, iters: u32) -> Vec<u32> {
    let n = data.len() / dim;
    let mut cent: Vec<f64> = init.iter().map(|&x| x as f64).collect();
    let mut labels = vec![0u32; n];
    for _ in 0..=iters {
      for i in 0..n {
        let mut best = (f64::INFINITY, 0);
        for c in 0..k {
          let d: f64 = (0..dim)
            .map(|j| (data[i * dim + j] as f64 - cent[c * dim + j]).powi(2))
            .sum();
          if d < best.0 {
            best = (d, c);
          }
        }
        labels[i] = best.1 as u32;
      }
      let mut sums = vec![0f64; k * dim];
      let mut counts = vec![0f64; k];
      for i in 0..n {
        let c = labels[i] as usize;
        counts[c] += 1.0;
        for j in 0..dim {
          sums[c * dim + j] += data[i * dim + j] as f64;
        }
      }
      for c in 0..k {
        if counts[c] > 0.0 {
          for j in 0..dim {
            cent[c * dim + j] = sums[c * dim + j] / counts[c];
          }
        }
      }
    }
    labels
  }

  fn same_partition(a: &[u32], b: &[u32]) -> bool {
    let mut map = std::collections::HashMap::new();
    let mut back = std::collections::HashMap::new();
    a.iter()
      .zip(b)
      .all(|(x, y)| *map.entry(x).or_insert(y) == y && *back.entry(y).or_insert(x) == x)
  }

  #[test]
  fn separable_blobs_are_recovered_deterministically() {
    let mut rng = SplitMix64::new(10);
    let (k, dim) = (5, 13);
    let (data, truth) = blobs(&mut rng, k, 40, dim);
    let a = kmeans(&data, dim, k, &KMeansOptions::default()).unwrap();
    assert!(same_partition(&a.labels, &truth));
    assert_eq!(a, kmeans(&data, dim, k, &KMeansOptions::default()).unwrap());
    assert!(a.iterations <= MAX_ITER);
    // The centroid of each cluster is its mean.
    let c0 = a.labels[0] as usize;
    assert!((a.centroids[c0 * dim + truth[0] as usize] - 100.0).abs() < 0.2);
  }

  #[test]
  fn matches_a_naive_lloyd_from_the_same_start() {
    let mut rng = SplitMix64::new(12);
    let (n, dim, k) = (300, 9, 6);
    let data: Vec<f32> = (0..n * dim).map(|_| rng.next_f64() as f32 * 10.0).collect();
    let mut r = SplitMix64::new(crate::SEED);
    let init = init_plus_plus(&data, dim, n, k, &mut r);
    let got = kmeans(&data, dim, k, &KMeansOptions::default()).unwrap();
    let want = reference_lloyd(&data, dim, &init, k, got.iterations);
    assert_eq!(got.labels, want);
  }

  /// The bounds change nothing: same labels, centroids, iterations and inertia as measuring
  /// every distance each time, on data that takes many iterations, threaded (n·k·dim above
  /// the threshold) and not; and on lattice points, where many distances tie exactly and
  /// the lower index must win as in the plain assignment.
  #[test]
  fn the_bounds_give_the_same_result() {
    let mut rng = SplitMix64::new(15);
    let lattice = |rng: &mut SplitMix64, n: usize, dim: usize| -> Vec<f32> {
      (0..n * dim).map(|_| (rng.below(4) as f32) * 0.5).collect()
    };
    let cases: Vec<(usize, usize, usize, Vec<f32>)> = vec![
      (
        2000,
        48,
        30,
        (0..2000 * 48).map(|_| rng.next_f64() as f32).collect(),
      ),
      (300, 13, 7, (0..300 * 13).map(|_| rng.next_f64() as f32).collect()),
      (40, 1, 5, (0..40).map(|_| rng.next_f64() as f32).collect()),
      (500, 2, 9, lattice(&mut rng, 500, 2)),
      (800, 3, 12, lattice(&mut rng, 800, 3)),
    ];
    for (n, dim, k, data) in cases {
      let opts = KMeansOptions::default();
      let cached = kmeans_with(&data, dim, k, &opts, CACHE_ENTRIES).unwrap();
      let plain = kmeans_with(&data, dim, k, &opts, 0).unwrap();
      assert!(cached.iterations > 1, "n {n}: {} iterations", cached.iterations);
      assert_eq!(cached.labels, plain.labels);
      assert_eq!(cached.iterations, plain.iterations);
      assert_eq!(cached.inertia.to_bits(), plain.inertia.to_bits());
      let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
      assert_eq!(bits(&cached.centroids), bits(&plain.centroids));
    }
  }

  #[test]
  fn threaded_assignment_equals_single_threaded() {
    let mut rng = SplitMix64::new(13);
    let (n, dim, k) = (3000, 64, 12); // n·k·dim above the threading threshold
    let data: Vec<f32> = (0..n * dim).map(|_| rng.next_f64() as f32).collect();
    let cent: Vec<f32> = data[..k * dim].to_vec();
    let (mut l1, mut d1) = (vec![u32::MAX; n], vec![0f32; n]);
    assign(&data, dim, &cent, k, &mut l1, &mut d1);
    for i in 0..n {
      let p = &data[i * dim..(i + 1) * dim];
      let best = (0..k)
        .map(|c| (squared_distance(p, &cent[c * dim..(c + 1) * dim]), c as u32))
        .fold((f32::INFINITY, 0), |a, b| if b.0 < a.0 { b } else { a });
      assert_eq!(l1[i], best.1);
    }
  }

  /// The AVX2 kernels give the bits of the portable loops: every distance, the chosen
  /// centroid with its ties, and the k-means++ minimum, for dims with and without a tail.
  #[test]
  fn wide_kernels_match_the_portable_loop_bit_for_bit() {
    let mut rng = SplitMix64::new(14);
    for &(dim, k, n) in &[
      (1, 3, 9),
      (7, 5, 11),
      (8, 4, 10),
      (13, 9, 17),
      (64, 6, 7),
      (1536, 7, 9),
    ] {
      let mut data: Vec<f32> = (0..n * dim)
        .map(|_| (rng.next_f64() as f32 - 0.5) * 3.0)
        .collect();
      // Equal rows, so ties between centroids are exercised.
      let (a, b) = (data[..dim].to_vec(), 2 * dim);
      data[b..b + dim].copy_from_slice(&a);
      let cent: Vec<f32> = data[..k * dim.min(data.len() / k)].to_vec();
      let k = cent.len() / dim;
      for i in 0..n {
        let p = &data[i * dim..(i + 1) * dim];
        let mut want = (0u32, f32::INFINITY);
        for c in 0..k {
          let d = squared_distance(p, &cent[c * dim..(c + 1) * dim]);
          if d < want.1 {
            want = (c as u32, d);
          }
        }
        let got = nearest_centroid(p, &cent, k, dim);
        assert_eq!(
          (got.0, got.1.to_bits()),
          (want.0, want.1.to_bits()),
          "dim {dim} point {i}"
        );
      }
      let c = &data[dim..2 * dim];
      let start: Vec<f64> = (0..n).map(|i| (i as f64) * 0.37).collect();
      let mut got = start.clone();
      lower_to(&data, dim, c, &mut got);
      let want: Vec<f64> = (0..n)
        .map(|i| start[i].min(squared_distance(&data[i * dim..(i + 1) * dim], c) as f64))
        .collect();
      assert_eq!(
        got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        "dim {dim}"
      );
    }
  }

  #[test]
  fn normalize_and_errors() {
    let data = [3.0f32, 4.0, 6.0, 8.0, -1.0, 0.0];
    let r = kmeans(
      &data,
      2,
      2,
      &KMeansOptions {
        normalize: true,
        ..Default::default()
      },
    )
    .unwrap();
    assert_eq!(r.labels[0], r.labels[1]); // same direction
    assert_ne!(r.labels[0], r.labels[2]);
    assert!(kmeans(&data, 4, 1, &KMeansOptions::default())
      .unwrap_err()
      .to_string()
      .contains("multiple of dim"));
    assert!(kmeans(&data, 2, 4, &KMeansOptions::default())
      .unwrap_err()
      .to_string()
      .contains("k must be"));
    assert!(kmeans(&[f32::NAN, 0.0], 2, 1, &KMeansOptions::default()).is_err());
    let one = kmeans(&[1.0, 1.0, 1.0, 1.0], 2, 2, &KMeansOptions::default()).unwrap();
    assert_eq!(one.labels, vec![0, 0]); // identical points: tie goes to the lower centroid
  }
}
