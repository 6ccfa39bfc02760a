//! Profiling aid for the search propagation (no Node needed):
//! `cargo run --release -p noderag_graph --example propagation [scale]`.
//! Builds a NodeRAG-shaped synthetic graph (Zipf entity hubs, similarity edges), runs 300
//! queries of 10 vector seeds + 3 entity seeds, prints min / p50 / p99 latency and the
//! bytes-touched bound inputs, then times Leiden on the unit–entity–relationship graph.
//! The node benchmark (bench/graph.ts) is the reference.

use std::time::Instant;

use noderag_graph::csr::EdgeList;
use noderag_graph::rng::SplitMix64;
use noderag_graph::search::{PropagationParams, SearchGraph, Strategy};

fn main() {
  let scale: f64 = std::env::args().nth(1).map_or(1.0, |s| s.parse().expect("scale"));
  let c = |x: f64| (x * scale) as u32;
  let (text, unit, ent, rel, attr, hle) = (c(30e3), c(100e3), c(60e3), c(80e3), c(3e3), c(2e3));
  let mut types = Vec::new();
  let mut starts = Vec::new();
  for (t, count) in [text, unit, ent, rel, attr, hle, hle].into_iter().enumerate() {
    starts.push(types.len() as u32);
    types.extend(std::iter::repeat_n(t as u8, count as usize));
  }
  let mut rng = SplitMix64::new(42);
  let mut cdf: Vec<f64> = (0..ent)
    .scan(0.0, |acc, r| {
      *acc += 1.0 / (r as f64 + 1.0);
      Some(*acc)
    })
    .collect();
  let total = *cdf.last().unwrap();
  cdf.iter_mut().for_each(|x| *x /= total);
  let zipf = |rng: &mut SplitMix64| {
    let u = rng.next_f64();
    starts[2] + cdf.partition_point(|&x| x < u).min(ent as usize - 1) as u32
  };
  let (mut s, mut d, mut w) = (vec![], vec![], vec![]);
  for i in 0..unit {
    for _ in 0..3 + rng.below(4) {
      s.push(starts[1] + i);
      d.push(zipf(&mut rng));
      w.push(1.0);
    }
    s.push(starts[1] + i);
    d.push(starts[0] + rng.below(text as u64) as u32);
    w.push(1.0);
  }
  for i in 0..rel {
    for _ in 0..2 {
      s.push(starts[3] + i);
      d.push(zipf(&mut rng));
      w.push(1.0);
    }
  }
  for i in 0..ent {
    s.push(starts[1] + rng.below(unit as u64) as u32);
    d.push(starts[2] + i);
    w.push(1.0);
  }
  let community_edges: (Vec<u32>, Vec<u32>) = s
    .iter()
    .zip(&d)
    .filter(|(&a, &b)| a >= starts[1] && b >= starts[1])
    .map(|(&a, &b)| (a, b))
    .unzip();
  let vector: Vec<u32> = (starts[0]..starts[0] + text)
    .chain(starts[1]..starts[1] + unit)
    .chain(starts[4]..starts[4] + attr + hle)
    .collect();
  let (mut ss, mut sd) = (vec![], vec![]);
  for &v in &vector {
    for _ in 0..10 {
      ss.push(v);
      sd.push(vector[rng.below(vector.len() as u64) as usize]);
    }
  }
  let t = Instant::now();
  let g = SearchGraph::build(types, EdgeList::weighted(&s, &d, &w), &ss, &sd, true).unwrap();
  println!(
    "nodes {} edges {} build {:.1} ms",
    g.node_count(),
    g.edge_count(),
    t.elapsed().as_secs_f64() * 1e3
  );
  let quotas = [40u32, 40, 10, 30, 40, 40, 10];
  for strategy in [Strategy::Auto, Strategy::Dense] {
    let params = PropagationParams {
      strategy,
      ..PropagationParams::walk(0.5, 2)
    };
    let mut times = vec![];
    let mut bytes = vec![];
    let mut lines = vec![];
    let reps = if strategy == Strategy::Dense { 20 } else { 300 };
    for _ in 0..reps {
      let mut seeds: Vec<u32> = (0..10)
        .map(|_| vector[rng.below(vector.len() as u64) as usize])
        .collect();
      seeds.extend((0..3).map(|_| starts[2] + rng.below(2000) as u32));
      let t = Instant::now();
      let r = g.top_nodes(&seeds, &[1.0; 13], &params, &quotas).unwrap();
      times.push(t.elapsed().as_secs_f64() * 1e3);
      bytes.push(r.work.bytes_touched as f64);
      lines.push(r.work.line_bytes as f64);
    }
    times.sort_by(f64::total_cmp);
    bytes.sort_by(f64::total_cmp);
    lines.sort_by(f64::total_cmp);
    println!(
      "{strategy:?}: min {:.3} ms p50 {:.3} ms p99 {:.3} ms; bytes p50 {:.2} MiB, by line {:.2} MiB",
      times[0],
      times[times.len() / 2],
      times[times.len() * 99 / 100],
      bytes[bytes.len() / 2] / 1048576.0,
      lines[lines.len() / 2] / 1048576.0
    );
  }
  let cg = noderag_graph::csr::Graph::from_unweighted(g.node_count(), &community_edges.0, &community_edges.1)
    .unwrap();
  let t = Instant::now();
  let r = noderag_graph::leiden::leiden(&cg, &Default::default());
  println!(
    "leiden: {:.0} ms, {} edges, Q = {:.4}, {} communities, {} iterations",
    t.elapsed().as_secs_f64() * 1e3,
    cg.edge_count(),
    r.modularity,
    r.count,
    r.iterations
  );
}
