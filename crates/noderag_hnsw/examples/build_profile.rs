//! Build time of one index, for profiling construction (`perf record`):
//! `cargo run --release -p noderag_hnsw --example build_profile -- [n] [dim] [m] [ef]`
//! (defaults 7452 1536 50 200: the vector count and parameters of the peer bench's full corpus).

use std::time::Instant;

use noderag_hnsw::{HnswIndex, IndexParams, Space};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn main() {
  let args: Vec<usize> = std::env::args()
    .skip(1)
    .map(|a| a.parse().expect("a number"))
    .collect();
  let arg = |i: usize, d: usize| args.get(i).copied().unwrap_or(d);
  let (n, dim, m, ef) = (arg(0, 7452), arg(1, 1536), arg(2, 50), arg(3, 200));
  let mut rng = ChaCha8Rng::seed_from_u64(42);
  let vectors: Vec<f32> = (0..n * dim).map(|_| rng.gen_range(-1.0..1.0)).collect();
  let params = IndexParams {
    space: Space::L2,
    dim,
    m,
    ef_construction: ef,
  };
  let t = Instant::now();
  let index = HnswIndex::build(params, &vectors).expect("build");
  println!(
    "n={n} dim={dim} m={m} ef={ef}: build {:.2} s ({} vectors)",
    t.elapsed().as_secs_f64(),
    index.len()
  );
}
