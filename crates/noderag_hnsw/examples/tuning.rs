//! Graph quality experiments at 100k vectors (dim 64 to keep builds short): recall@10 and
//! CPU µs/query per ef, searching without and with reverse links.
//! `cargo run --release -p noderag_hnsw --example tuning`

use cpu_time::ThreadTime;
use noderag_hnsw::testing::{clustered, ClusterShape};
use noderag_hnsw::{exact_search, HnswIndex, IndexParams, Space};

fn main() {
  let args: Vec<String> = std::env::args().collect();
  let n: usize = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(100_000);
  let dim: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(64);
  let (k, nq) = (10, 300);
  let all = clustered(n + nq, dim, ClusterShape::BENCH, 7);
  let (data, queries) = all.split_at(n * dim);
  let truth: Vec<Vec<u32>> = queries
    .chunks_exact(dim)
    .map(|q| exact_search(data, dim, Space::L2, q, k).unwrap().labels)
    .collect();
  let params = IndexParams {
    space: Space::L2,
    dim,
    m: 16,
    ef_construction: 200,
  };
  println!("n {n}, dim {dim}, M 16, efConstruction 200\n");
  println!("| variant | build wall s | ef=16 | ef=32 | ef=64 | ef=128 |\n|---|---:|---:|---:|---:|---:|");
  {
    let name = "default";
    let t = std::time::Instant::now();
    let mut index = HnswIndex::build(params, data).unwrap();
    let build = t.elapsed().as_secs_f64();
    for reverse in [false, true] {
      index.set_search_reverse_links(reverse).unwrap();
      let mut cells = Vec::new();
      for ef in [16, 32, 64, 128] {
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
        let us = t.elapsed().as_micros() as f64 / nq as f64;
        cells.push(format!("{:.3} / {us:.0}µs", hit as f64 / (k * nq) as f64));
      }
      let label = if reverse {
        format!("{name} + reverse links")
      } else {
        name.to_string()
      };
      println!("| {label} | {build:.1} | {} |", cells.join(" | "));
    }
  }
}
