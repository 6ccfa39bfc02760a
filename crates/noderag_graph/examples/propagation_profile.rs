//! The propagation on a real index, for tuning the push step against the very questions the
//! server answers: `cargo run --release -p noderag_graph --example propagation_profile -- <dir>
//! [rounds]`. `<dir>` holds the search graph's inputs and the questions' seeds as raw
//! little-endian arrays (`types.u8`, `src.u32`, `dst.u32`, `weight.f64`, `sim_src.u32`,
//! `sim_dst.u32`, and `seeds.bin`: per question a u32 count, then (u32 node, f64 weight)
//! pairs), written from a loaded index by a script. Prints the wall time per propagation of
//! each round (2-step walk, α = 0.5, the default quotas) and a hash of every result, so a
//! change of the walk can be checked to give the very same nodes and scores, bit for bit.

use std::hash::{Hash, Hasher};
use std::time::Instant;

use noderag_graph::csr::EdgeList;
use noderag_graph::search::{PropagationParams, SearchGraph};

fn read(dir: &str, name: &str) -> Vec<u8> {
  std::fs::read(format!("{dir}/{name}")).unwrap_or_else(|e| panic!("{dir}/{name}: {e}"))
}

fn u32s(b: &[u8]) -> Vec<u32> {
  b.chunks_exact(4)
    .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
    .collect()
}

fn f64s(b: &[u8]) -> Vec<f64> {
  b.chunks_exact(8)
    .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
    .collect()
}

/// With `POLLUTE=<MiB>`, that much memory is written between two questions (not timed), as
/// the rest of a server's work evicts the index from the caches between its questions.
fn polluter() -> impl FnMut() {
  let mib: usize = std::env::var("POLLUTE")
    .ok()
    .and_then(|s| s.parse().ok())
    .unwrap_or(0);
  let mut junk = vec![0u8; mib << 20];
  move || {
    for i in (0..junk.len()).step_by(64) {
      junk[i] = junk[i].wrapping_add(1);
    }
    std::hint::black_box(&junk);
  }
}

fn main() {
  let dir = std::env::args()
    .nth(1)
    .expect("usage: propagation_profile <dir> [rounds]");
  let rounds: usize = std::env::args().nth(2).map_or(20, |s| s.parse().expect("rounds"));
  let types = read(&dir, "types.u8");
  let (src, dst, weight) = (
    u32s(&read(&dir, "src.u32")),
    u32s(&read(&dir, "dst.u32")),
    f64s(&read(&dir, "weight.f64")),
  );
  let (sim_src, sim_dst) = (u32s(&read(&dir, "sim_src.u32")), u32s(&read(&dir, "sim_dst.u32")));
  let graph = SearchGraph::build(
    types,
    EdgeList::weighted(&src, &dst, &weight),
    &sim_src,
    &sim_dst,
    true,
  )
  .expect("graph");
  let seeds_bytes = read(&dir, "seeds.bin");
  let mut queries: Vec<(Vec<u32>, Vec<f64>)> = Vec::new();
  let mut at = 0;
  while at < seeds_bytes.len() {
    let n = u32::from_le_bytes(seeds_bytes[at..at + 4].try_into().unwrap()) as usize;
    at += 4;
    let (mut ids, mut ws) = (Vec::new(), Vec::new());
    for _ in 0..n {
      ids.push(u32::from_le_bytes(seeds_bytes[at..at + 4].try_into().unwrap()));
      ws.push(f64::from_le_bytes(
        seeds_bytes[at + 4..at + 12].try_into().unwrap(),
      ));
      at += 12;
    }
    queries.push((ids, ws));
  }
  // Quotas as the search asks for them (cross types: 5 + the hits of their type, at most 10).
  let quotas = [15u32, 15, 10, 5, 25, 17, 2];
  let params = PropagationParams::walk(0.5, 2);
  let mut hasher = std::collections::hash_map::DefaultHasher::new();
  let mut eligible = 0u64;
  let mut entries = 0u64;
  for (ids, ws) in &queries {
    let r = graph.top_nodes(ids, ws, &params, &quotas).expect("top");
    r.ids.hash(&mut hasher);
    for s in &r.scores {
      s.to_bits().hash(&mut hasher);
    }
    r.types.hash(&mut hasher);
    (r.steps, r.eligible).hash(&mut hasher);
    eligible += u64::from(r.eligible);
    entries += r.work.entries_read;
  }
  println!(
    "{} nodes, {} edges, {} questions, {:.0} eligible and {:.0} CSR entries read per question: result hash {:016x}",
    graph.node_count(),
    graph.edge_count(),
    queries.len(),
    eligible as f64 / queries.len() as f64,
    entries as f64 / queries.len() as f64,
    hasher.finish()
  );
  let mut per = Vec::new();
  let mut pollute = polluter();
  for _ in 0..rounds {
    let mut spent = std::time::Duration::ZERO;
    for (ids, ws) in &queries {
      pollute();
      let t = Instant::now();
      std::hint::black_box(graph.top_nodes(ids, ws, &params, &quotas).expect("top"));
      spent += t.elapsed();
    }
    per.push(spent.as_secs_f64() * 1e6 / queries.len() as f64);
  }
  let mut sorted = per.clone();
  sorted.sort_by(f64::total_cmp);
  println!(
    "µs per propagation: median {:.1}, min {:.1} ({})",
    sorted[sorted.len() / 2],
    sorted[0],
    per
      .iter()
      .map(|x| format!("{x:.0}"))
      .collect::<Vec<_>>()
      .join(" ")
  );
}
