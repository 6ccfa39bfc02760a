//! Measurements behind two decisions, printed as markdown tables:
//!  1. the distance kernel: ours (chunked, AVX2 at run time) vs anndists' `DistL2`
//!     (scalar, or simdeez with `--features simdeez`);
//!  2. search on the flat view vs hnsw_rs's own `search`, same graph, same ef;
//!  3. `EXACT_SEARCH_BELOW`: exact vs graph search time per query as the index grows.
//!
//! Times are CPU time of the measuring thread (the machine may be shared).
//!
//! `cargo run --release -p noderag_hnsw --example crossover [--features simdeez]`

use std::hint::black_box;

use cpu_time::ThreadTime;
use hnsw_rs::anndists::dist::{DistL2, Distance};
use noderag_hnsw::testing::{clustered, ClusterShape};
use noderag_hnsw::{exact_search, l2_squared, HnswIndex, IndexParams, Space};

fn per_call_ns(calls: usize, mut f: impl FnMut(usize)) -> f64 {
  let t = ThreadTime::now();
  for i in 0..calls {
    f(i);
  }
  t.elapsed().as_nanos() as f64 / calls as f64
}

fn main() {
  let dim = 384;
  let (k, ef) = (10, 64);

  println!("## distance kernels, dim {dim} (ns per call)\n");
  let pool = clustered(1_000, dim, ClusterShape::BENCH, 1);
  let row = |i: usize| &pool[(i % 1_000) * dim..(i % 1_000 + 1) * dim];
  let calls = 2_000_000;
  let ours = per_call_ns(calls, |i| {
    black_box(l2_squared(black_box(row(i)), black_box(row(i + 7))));
  });
  let theirs = per_call_ns(calls, |i| {
    black_box(DistL2.eval(black_box(row(i)), black_box(row(i + 7))));
  });
  let simdeez = if cfg!(feature = "simdeez") {
    "simdeez_f on"
  } else {
    "scalar, simdeez_f off"
  };
  println!("| kernel | ns |\n|---|---:|\n| noderag l2_squared | {ours:.1} |\n| anndists DistL2 ({simdeez}) | {theirs:.1} |\n");

  println!("## same graph: flat-view search vs hnsw_rs search (n 20000, k {k})\n");
  let all = clustered(20_500, dim, ClusterShape::BENCH, 2);
  let (data, queries) = all.split_at(20_000 * dim);
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
  let truth: Vec<Vec<u32>> = queries
    .chunks_exact(dim)
    .map(|q| exact_search(data, dim, Space::L2, q, k).unwrap().labels)
    .collect();
  println!(
    "| ef | view recall | view µs/query | hnsw_rs recall | hnsw_rs µs/query |\n|---:|---:|---:|---:|---:|"
  );
  for ef in [16, 32, 64, 128] {
    let mut cells = Vec::new();
    for use_view in [true, false] {
      let mut hit = 0;
      let t = ThreadTime::now();
      for (q, tr) in queries.chunks_exact(dim).zip(&truth) {
        let r = if use_view {
          index.search_graph(q, k, ef).unwrap()
        } else {
          index.search_hnsw_rs(q, k, ef).unwrap()
        };
        hit += r.labels.iter().filter(|l| tr.contains(l)).count();
      }
      let us = t.elapsed().as_micros() as f64 / truth.len() as f64;
      cells.push(format!("{:.4} | {us:.1}", hit as f64 / (k * truth.len()) as f64));
    }
    println!("| {ef} | {} | {} |", cells[0], cells[1]);
  }

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
