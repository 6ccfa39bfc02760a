//! Speed of the searches a question makes on a saved index, for tuning the search loop on
//! real data: `cargo run --release -p noderag_hnsw --example search_profile -- <HNSW.bin>
//! <queries.f32> <dim> [k] [ef] [rounds]`. The queries file holds the question vectors as
//! little-endian f32 rows; for HotpotQA-100's questions under the `local` provider:
//! `node --import tsx -e "import('./ts/llm/local/feature-hash.ts').then(async (f) => { const q =
//! (await import('./bench/lib/hotpot.ts')).loadQuestions().map((x) => x.question); const v =
//! f.featureHashBatch(q, 256); require('fs').writeFileSync('/tmp/q.f32', Buffer.from(v.buffer)); })"`
//! (run from the repository root). Prints the CPU time per
//! search of each round and a hash of every result (labels and distance bits), so a change
//! of the search loop can be checked to return the very same hits. `VNNI=0` walks with the
//! AVX2 code distance instead of VNNI's (same hits, for A/B on one machine).

use std::hash::{Hash, Hasher};

use cpu_time::ThreadTime;
use noderag_hnsw::HnswIndex;

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
  let args: Vec<String> = std::env::args().skip(1).collect();
  let [path, queries, dim, rest @ ..] = args.as_slice() else {
    eprintln!("usage: search_profile <HNSW.bin> <queries.f32> <dim> [k] [ef] [rounds]");
    std::process::exit(2);
  };
  let dim: usize = dim.parse().expect("dim");
  let k: usize = rest.first().map_or(100, |s| s.parse().expect("k"));
  let ef: usize = rest.get(1).map_or(100, |s| s.parse().expect("ef"));
  let rounds: usize = rest.get(2).map_or(20, |s| s.parse().expect("rounds"));
  if std::env::var("VNNI").is_ok_and(|v| v == "0") {
    noderag_hnsw::set_code_vnni(false);
  }
  let index = HnswIndex::load_for_search(std::path::Path::new(path), dim, None).expect("index");
  let bytes = std::fs::read(queries).expect("queries");
  let values: Vec<f32> = bytes
    .chunks_exact(4)
    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    .collect();
  let qs: Vec<&[f32]> = values.chunks_exact(dim).collect();
  let mut hasher = std::collections::hash_map::DefaultHasher::new();
  for q in &qs {
    let r = index.search(q, k, ef).expect("search");
    r.labels.hash(&mut hasher);
    for d in &r.distances {
      d.to_bits().hash(&mut hasher);
    }
  }
  println!(
    "{} vectors, {} queries, k {k}, ef {ef}: result hash {:016x}",
    index.len(),
    qs.len(),
    hasher.finish()
  );
  let mut per: Vec<f64> = Vec::new();
  let mut pollute = polluter();
  for _ in 0..rounds {
    let mut spent = std::time::Duration::ZERO;
    for q in &qs {
      pollute();
      let t = ThreadTime::now();
      std::hint::black_box(index.search(q, k, ef).expect("search"));
      spent += t.elapsed();
    }
    per.push(spent.as_secs_f64() * 1e6 / qs.len() as f64);
  }
  let mut sorted = per.clone();
  sorted.sort_by(f64::total_cmp);
  println!(
    "CPU µs per search: median {:.1}, min {:.1} ({})",
    sorted[sorted.len() / 2],
    sorted[0],
    per
      .iter()
      .map(|x| format!("{x:.0}"))
      .collect::<Vec<_>>()
      .join(" ")
  );
}
