//! Search speed on a saved 100k × 384 index (built once, then loaded), for tuning the
//! search loop: recall@10 and queries per CPU second at a few ef values.
//! `cargo run --release -p noderag_hnsw --example search_speed [index-file]`

use cpu_time::ThreadTime;
use noderag_hnsw::testing::{clustered, ClusterShape};
use noderag_hnsw::{exact_search, HnswIndex, IndexParams, Space};

fn main() {
  let path = std::env::args()
    .nth(1)
    .unwrap_or_else(|| "/tmp/noderag-hnsw-100k.bin".into());
  let path = std::path::Path::new(&path);
  let (n, dim, k, nq) = (100_000, 384, 10, 1000);
  let all = clustered(n + nq, dim, ClusterShape::BENCH, 11);
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
