//! Build time of one index, for profiling construction (`perf record`):
//! `cargo run --release -p noderag_hnsw --example build_profile -- [n] [dim] [m] [ef] [threads]`
//! (defaults 7452 1536 50 200 and the available parallelism: the vector count and
//! parameters of the peer bench's full corpus). Prints wall and process CPU seconds.

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
  let threads = arg(4, noderag_hnsw::default_threads());
  let mut rng = ChaCha8Rng::seed_from_u64(42);
  let vectors: Vec<f32> = (0..n * dim).map(|_| rng.gen_range(-1.0..1.0)).collect();
  let params = IndexParams {
    space: Space::L2,
    dim,
    m,
    ef_construction: ef,
  };
  let t = Instant::now();
  let cpu = cpu_time::ProcessTime::now();
  let mut index = HnswIndex::new(params).expect("params");
  index.set_build_threads(threads);
  index.add(&vectors).expect("build");
  println!(
    "n={n} dim={dim} m={m} ef={ef} threads={threads}: build {:.2} s wall, {:.2} s CPU ({} vectors)",
    t.elapsed().as_secs_f64(),
    cpu.elapsed().as_secs_f64(),
    index.len()
  );
}
