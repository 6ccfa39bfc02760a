//! The measurement behind `EXACT_SEARCH_BELOW`: exact vs graph search time per query as
//! the index grows, printed as a markdown table. (Its earlier parts compared our distance
//! kernel with anndists' and our search with hnsw_rs's; their numbers are in
//! bench/RESULTS.md `## hnsw`, and hnsw_rs is no longer a dependency.)
//!
//! Times are CPU time of the measuring thread (the machine may be shared).
//!
//! `cargo run --release -p noderag_hnsw --example crossover`

use std::hint::black_box;

use cpu_time::ThreadTime;
use noderag_hnsw::testing::{clustered, ClusterShape};
use noderag_hnsw::{exact_search, HnswIndex, IndexParams, Space};

fn main() {
  let dim = 384;

  let k = 10;
  let ef = 64;
  println!("\n## exact vs graph search (dim {dim}, k {k}, ef {ef}; µs per query)\n");
  println!("| n | exact | graph | graph recall@10 |\n|---:|---:|---:|---:|");
  for n in [250usize, 500, 1_000, 2_000, 4_000, 8_000] {
    let all = clustered(n + 200, dim, ClusterShape::BENCH, 3);
    let (data, queries) = all.split_at(n * dim);
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
    let reps = 5;
    let t = ThreadTime::now();
    for _ in 0..reps {
      for q in queries.chunks_exact(dim) {
        black_box(index.search_exact(q, k).unwrap());
      }
    }
    let exact_us = t.elapsed().as_micros() as f64 / (reps * 200) as f64;
    let mut hit = 0;
    let t = ThreadTime::now();
    for _ in 0..reps {
      for q in queries.chunks_exact(dim) {
        black_box(index.search_graph(q, k, ef).unwrap());
      }
    }
    let graph_us = t.elapsed().as_micros() as f64 / (reps * 200) as f64;
    for q in queries.chunks_exact(dim) {
      let tr = exact_search(data, dim, Space::L2, q, k).unwrap().labels;
      hit += index
        .search_graph(q, k, ef)
        .unwrap()
        .labels
        .iter()
        .filter(|l| tr.contains(l))
        .count();
    }
    println!(
      "| {n} | {exact_us:.1} | {graph_us:.1} | {:.4} |",
      hit as f64 / (k * 200) as f64
    );
  }
}
