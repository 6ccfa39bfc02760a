//! Seeded test data for the tests, examples and benchmarks of this crate (the `testing`
//! feature; the crate's own dev-dependency on itself turns it on for them). Not part of
//! the index.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How `clustered` spreads its vectors.
#[derive(Clone, Copy, Debug)]
pub struct ClusterShape {
  /// Number of random centres, uniform in [-1, 1) per dimension.
  pub clusters: usize,
  /// Directions each cluster spreads along (its intrinsic dimension).
  pub latent: usize,
  /// Each direction's values are uniform in [-spread, spread).
  pub spread: f32,
  /// Per-value noise, uniform in [-noise, noise).
  pub noise: f32,
}

impl ClusterShape {
  /// The model of bench/hnsw.ts: 100 clusters spread in a 24-dimensional subspace.
  pub const BENCH: ClusterShape = ClusterShape {
    clusters: 100,
    latent: 24,
    spread: 0.25,
    noise: 0.05,
  };

  /// Tighter clusters of low intrinsic dimension (8), for the contract tests.
  pub fn tight(clusters: usize) -> ClusterShape {
    ClusterShape {
      clusters,
      latent: 8,
      spread: 0.3,
      noise: 0.02,
    }
  }
}

/// `n` vectors of `dim` values (flat, row-major) shaped like text embeddings: around random
/// centres, each cluster spread along a few random directions plus a little noise. The same
/// `seed` gives the same vectors.
pub fn clustered(n: usize, dim: usize, shape: ClusterShape, seed: u64) -> Vec<f32> {
  let ClusterShape {
    clusters,
    latent,
    spread,
    noise,
  } = shape;
  let mut rng = ChaCha8Rng::seed_from_u64(seed);
  let centres: Vec<f32> = (0..clusters * dim).map(|_| rng.gen_range(-1.0..1.0)).collect();
  let bases: Vec<f32> = (0..clusters * latent * dim)
    .map(|_| rng.gen_range(-spread..spread))
    .collect();
  let mut out = Vec::with_capacity(n * dim);
  for _ in 0..n {
    let c = rng.gen_range(0..clusters);
    let z: Vec<f32> = (0..latent).map(|_| rng.gen_range(-1.0..1.0)).collect();
    for j in 0..dim {
      let mut x = centres[c * dim + j] + rng.gen_range(-noise..noise);
      for (l, zl) in z.iter().enumerate() {
        x += zl * bases[(c * latent + l) * dim + j];
      }
      out.push(x);
    }
  }
  out
}
