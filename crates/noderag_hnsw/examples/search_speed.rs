//! Search speed on a saved 100k × 384 index (built once, then loaded), for tuning the
//! search loop: recall@10 and queries per CPU second at a few ef values.
//! `cargo run --release -p noderag_hnsw --example search_speed [index-file]`

use cpu_time::ThreadTime;
use noderag_hnsw::{exact_search, HnswIndex, IndexParams, Space};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn clustered(n: usize, dim: usize, seed: u64) -> Vec<f32> {
  const CLUSTERS: usize = 100;
  const LATENT: usize = 24;
  let mut rng = ChaCha8Rng::seed_from_u64(seed);
  let centres: Vec<f32> = (0..CLUSTERS * dim).map(|_| rng.gen_range(-1.0..1.0)).collect();
  let bases: Vec<f32> = (0..CLUSTERS * LATENT * dim)
    .map(|_| rng.gen_range(-0.25..0.25))
    .collect();
  let mut out = Vec::with_capacity(n * dim);
  for _ in 0..n {
    let c = rng.gen_range(0..CLUSTERS);
    let z: Vec<f32> = (0..LATENT).map(|_| rng.gen_range(-1.0..1.0)).collect();
    for j in 0..dim {
      let mut x = centres[c * dim + j] + rng.gen_range(-0.05..0.05);
      for (l, zl) in z.iter().enumerate() {
        x += zl * bases[(c * LATENT + l) * dim + j];
      }
      out.push(x);
    }
  }
  out
}

fn main() {
  let path = std::env::args()
    .nth(1)
    .unwrap_or_else(|| "/tmp/noderag-hnsw-100k.bin".into());
  let path = std::path::Path::new(&path);
  let (n, dim, k, nq) = (100_000, 384, 10, 1000);
  let all = clustered(n + nq, dim, 11);
  let (data, queries) = all.split_at(n * dim);
  let index = match HnswIndex::load(path, dim, Some(n)) {
    Ok(index) => index,
    Err(_) => {
      let index = HnswIndex::build(
        IndexParams {
          space: Space::L2,
          dim,
          m: 16,
          ef_construction: 200,
        },
        data,
      )
      .unwrap();
      index.save(path).unwrap();
      index
    }
  };
  let truth: Vec<Vec<u32>> = queries
    .chunks_exact(dim)
    .map(|q| exact_search(data, dim, Space::L2, q, k).unwrap().labels)
    .collect();
  println!("| ef | recall@10 | queries per CPU s |\n|---:|---:|---:|");
  for ef in [16, 24, 32, 48] {
    let mut best = 0f64;
    let mut recall = 0f64;
    for _ in 0..3 {
      let t = ThreadTime::now();
      let mut hit = 0;
      for (q, tr) in queries.chunks_exact(dim).zip(&truth) {
        hit += index
          .search_graph(q, k, ef)
          .unwrap()
          .labels
          .iter()
          .filter(|l| tr.contains(l))
          .count();
      }
      best = best.max(nq as f64 / t.elapsed().as_secs_f64());
      recall = hit as f64 / (k * nq) as f64;
    }
    println!("| {ef} | {recall:.4} | {best:.0} |");
  }
}
