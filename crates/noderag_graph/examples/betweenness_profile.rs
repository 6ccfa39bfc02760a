//! Time of the Attribute stage's sampled betweenness on a real core graph, for profiling:
//! `cargo run --release -p noderag_graph --example betweenness_profile -- <dir> [rounds]`.
//! `<dir>` holds the graph as `src.u32` and `dst.u32` (little-endian node numbers, one
//! undirected edge per position) and `ids.txt` (one node id per line, in node order), as
//! `toDense` makes them for the Attribute stage (ts/model/adjacency.ts). Prints the wall time
//! of each round (on all cores; `taskset -c 0` for one) and a hash of the scores' bits (the
//! same on any machine).

use std::hash::{Hash, Hasher};
use std::time::Instant;

use noderag_graph::betweenness::betweenness_by_id;
use noderag_graph::csr::Graph;

fn u32s(path: &str) -> Vec<u32> {
  std::fs::read(path)
    .unwrap_or_else(|e| panic!("{path}: {e}"))
    .chunks_exact(4)
    .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
    .collect()
}

fn main() {
  let dir = std::env::args()
    .nth(1)
    .expect("usage: betweenness_profile <dir> [rounds]");
  let rounds: usize = std::env::args().nth(2).map_or(5, |s| s.parse().expect("rounds"));
  let (src, dst) = (u32s(&format!("{dir}/src.u32")), u32s(&format!("{dir}/dst.u32")));
  let ids_text = std::fs::read_to_string(format!("{dir}/ids.txt")).expect("ids.txt");
  let ids: Vec<&str> = ids_text.lines().collect();
  let graph = Graph::from_unweighted(ids.len(), &src, &dst).expect("a valid graph");
  for _ in 0..rounds {
    let t0 = Instant::now();
    let scores = betweenness_by_id(&graph, &ids, noderag_graph::SEED);
    let wall = t0.elapsed().as_secs_f64();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for s in &scores {
      s.to_bits().hash(&mut h);
    }
    println!(
      "{} nodes, {} edges: {:.3} s wall, hash {:016x}",
      ids.len(),
      src.len(),
      wall,
      h.finish()
    );
  }
}
