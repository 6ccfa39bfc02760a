//! Build time of one index, for profiling construction (`perf record`):
//! `cargo run --release -p noderag_hnsw --example build_profile -- [n] [dim] [m] [ef] [threads] [vectors.f32]`
//! (defaults 7452 1536 50 200 and the available parallelism: the vector count and
//! parameters of the peer bench's full corpus). Vectors are uniform random unless a file of
//! little-endian f32 rows is given (e.g. the data section of an `HNSW.bin`: its last
//! n × dim × 4 bytes); then `n` rows of it are used. Prints wall and process CPU seconds,
//! and a hash of the saved graph (the same on any thread count). With `AB=1` it builds four
//! times, the code distance without and with VNNI alternated (code_dot.rs).

use std::time::Instant;

use noderag_hnsw::{HnswIndex, IndexParams, Space};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn main() {
  let raw: Vec<String> = std::env::args().skip(1).collect();
  let file = raw.get(5).cloned();
  let args: Vec<usize> = raw.iter().take(5).map(|a| a.parse().expect("a number")).collect();
  let arg = |i: usize, d: usize| args.get(i).copied().unwrap_or(d);
  let (n, dim, m, ef) = (arg(0, 7452), arg(1, 1536), arg(2, 50), arg(3, 200));
  let threads = arg(4, noderag_hnsw::default_threads());
  let vectors: Vec<f32> = match &file {
    Some(path) => {
      let bytes = std::fs::read(path).expect("the vector file");
      assert!(
        bytes.len() >= n * dim * 4,
        "{path} holds fewer than {n} rows of {dim}"
      );
      let start = bytes.len() - n * dim * 4;
      bytes[start..]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
        .collect()
    }
    None => {
      let mut rng = ChaCha8Rng::seed_from_u64(42);
      (0..n * dim).map(|_| rng.gen_range(-1.0..1.0)).collect()
    }
  };
  let params = IndexParams {
    space: Space::L2,
    dim,
    m,
    ef_construction: ef,
  };
  // `AB=1`: the code distance without and with VNNI, alternated twice (same graph expected).
  let modes: Vec<Option<bool>> = if std::env::var("AB").is_ok_and(|v| v == "1") {
    vec![Some(false), Some(true), Some(false), Some(true)]
  } else {
    vec![None]
  };
  for mode in modes {
    if let Some(on) = mode {
      noderag_hnsw::set_code_vnni(on);
    }
    let (wall, cpu, len, sha) = build_once(params, &vectors, threads);
    let vnni = match mode {
      Some(on) => format!(" vnni={on}"),
      None => String::new(),
    };
    println!(
      "n={n} dim={dim} m={m} ef={ef} threads={threads}{vnni}: build {wall:.2} s wall, {cpu:.2} s CPU ({len} vectors, graph sha256 {sha})"
    );
  }
}

/// One build: wall and process CPU seconds, vectors, and the start of the graph's SHA-256.
fn build_once(params: IndexParams, vectors: &[f32], threads: usize) -> (f64, f64, usize, String) {
  let t = Instant::now();
  let cpu = cpu_time::ProcessTime::now();
  let mut index = HnswIndex::new(params).expect("params");
  index.set_build_threads(threads);
  index.add(vectors).expect("build");
  let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu.elapsed().as_secs_f64());
  let out = std::env::temp_dir().join(format!("build_profile-{}.bin", std::process::id()));
  index.save(&out).expect("save");
  let header = noderag_hnsw::read_file_header(&out).expect("header");
  let _ = std::fs::remove_file(&out);
  (wall, cpu, index.len(), header.graph_sha256[..16].to_string())
}
