//! Time of one k-means run, for profiling (`perf record`):
//! `cargo run --release -p noderag_graph --example kmeans_profile -- [vectors.f32] [skip] [n] [dim] [k]`
//! (defaults: the peer bench's full-corpus linking, 6,463 vectors of 1536 after the 992 text
//! vectors of its `HNSW.bin`, k = 81; the file's last rows are read, `skip` of them first
//! left out). Without a file, seeded uniform vectors. Prints wall and process CPU seconds,
//! the iterations, and a hash of the labels and centroid bits (the same on any thread count).

use std::time::Instant;

use noderag_graph::kmeans::{kmeans, KMeansOptions};
use noderag_graph::rng::SplitMix64;

fn main() {
  let raw: Vec<String> = std::env::args().skip(1).collect();
  let num = |i: usize, d: usize| raw.get(i).map_or(d, |a| a.parse().expect("a number"));
  let (skip, n, dim, k) = (num(1, 992), num(2, 6463), num(3, 1536), num(4, 81));
  let data: Vec<f32> = match raw.first() {
    Some(path) => {
      let bytes = std::fs::read(path).expect("the vector file");
      let rows = skip + n;
      assert!(
        bytes.len() >= rows * dim * 4,
        "{path} holds fewer than {rows} rows of {dim}"
      );
      let start = bytes.len() - rows * dim * 4 + skip * dim * 4;
      bytes[start..start + n * dim * 4]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
        .collect()
    }
    None => {
      let mut rng = SplitMix64::new(42);
      (0..n * dim).map(|_| rng.next_f64() as f32 - 0.5).collect()
    }
  };
  let cpu0 = cpu_seconds();
  let t0 = Instant::now();
  let r = kmeans(&data, dim, k, &KMeansOptions::default()).expect("k-means");
  let wall = t0.elapsed().as_secs_f64();
  let cpu = cpu_seconds() - cpu0;
  // FNV-1a over the labels and the centroids' bits.
  let mut h: u64 = 0xCBF2_9CE4_8422_2325;
  for x in r
    .labels
    .iter()
    .copied()
    .chain(r.centroids.iter().map(|c| c.to_bits()))
  {
    for b in x.to_le_bytes() {
      h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3);
    }
  }
  println!(
    "n={n} dim={dim} k={k}: {wall:.3} s wall, {cpu:.3} s CPU, {} iterations, inertia {:.6}, hash {h:016x}",
    r.iterations, r.inertia
  );
}

/// User + system CPU seconds of this process (Linux: /proc/self/stat).
fn cpu_seconds() -> f64 {
  let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
  let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
  let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
  (ticks(11) + ticks(12)) / 100.0
}
