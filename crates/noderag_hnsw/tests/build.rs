//! The construction's promises (build.rs): the same file bytes on any thread count, for any
//! split of the insertion into calls, across a checkpoint (save, load, go on); recall on
//! seeded data; old (hnsw_rs, format 1) files still read and extended.

use std::path::Path;

use noderag_hnsw::testing::{clustered, ClusterShape};
use noderag_hnsw::{exact_search, read_file_header, HnswIndex, IndexParams, Space, BATCH, FORMAT_VERSION};

fn params(space: Space, dim: usize) -> IndexParams {
  IndexParams {
    space,
    dim,
    m: 12,
    ef_construction: 64,
  }
}

fn built(space: Space, dim: usize, data: &[f32], threads: usize) -> HnswIndex {
  let mut index = HnswIndex::new(params(space, dim)).unwrap();
  index.set_build_threads(threads);
  index.add(data).unwrap();
  index
}

fn saved_bytes(index: &HnswIndex, dir: &Path, name: &str) -> Vec<u8> {
  let path = dir.join(name);
  index.save(&path).unwrap();
  std::fs::read(path).unwrap()
}

#[test]
fn the_same_input_gives_the_same_bytes_on_one_or_many_threads() {
  let dim = 24;
  let dir = tempfile::tempdir().unwrap();
  // Not a multiple of the batch, so the last batch is incomplete.
  let data = clustered(3 * BATCH * 4 + 77, dim, ClusterShape::tight(8), 31);
  for space in [Space::L2, Space::Cosine] {
    let one = saved_bytes(&built(space, dim, &data, 1), dir.path(), "one.bin");
    for threads in [2, 3, 8] {
      let many = saved_bytes(&built(space, dim, &data, threads), dir.path(), "many.bin");
      assert!(
        one == many,
        "{space:?}: {threads} threads wrote other bytes than 1"
      );
    }
  }
}

/// The construction's walk computes code distances with VNNI where the CPU has it
/// (code_dot.rs); the result is `code_l2`'s exactly, so the bytes are those of the portable
/// kernel. (On a CPU without AVX-VNNI both builds take the portable path.)
#[test]
fn the_vnni_code_distance_builds_the_bytes_of_the_portable_one() {
  // 170 values: code rows of 192 bytes, through both the 128- and the 32-byte steps.
  let dim = 170;
  let dir = tempfile::tempdir().unwrap();
  let data = clustered(2 * BATCH + 50, dim, ClusterShape::tight(6), 33);
  for space in [Space::L2, Space::Cosine] {
    noderag_hnsw::set_code_vnni(false);
    let portable = saved_bytes(&built(space, dim, &data, 2), dir.path(), "portable.bin");
    noderag_hnsw::set_code_vnni(true);
    let vnni = saved_bytes(&built(space, dim, &data, 2), dir.path(), "vnni.bin");
    assert!(portable == vnni, "{space:?}: the VNNI walk built another graph");
  }
}

/// The search walk, too, takes the VNNI code distance where the CPU has it (view.rs); its
/// hits and distances are those of the AVX2/portable walk, bit for bit.
#[test]
fn the_vnni_code_distance_walks_to_the_hits_of_the_portable_one() {
  let dim = 170;
  let data = clustered(2 * BATCH + 50, dim, ClusterShape::tight(6), 34);
  let queries = clustered(40, dim, ClusterShape::tight(6), 35);
  for space in [Space::L2, Space::Cosine] {
    let index = built(space, dim, &data, 2);
    let run = |vnni: bool| {
      noderag_hnsw::set_code_vnni(vnni);
      queries
        .chunks_exact(dim)
        .map(|q| {
          let r = index.search_graph(q, 20, 40).unwrap();
          let bits: Vec<u32> = r.distances.iter().map(|d| d.to_bits()).collect();
          (r.labels, bits)
        })
        .collect::<Vec<_>>()
    };
    let portable = run(false);
    let vnni = run(true);
    assert!(portable.iter().all(|(labels, _)| labels.len() == 20));
    assert!(portable == vnni, "{space:?}: the VNNI walk found other hits");
  }
}

#[test]
fn how_the_insertion_is_split_into_calls_changes_nothing() {
  let dim = 16;
  let dir = tempfile::tempdir().unwrap();
  let data = clustered(2_500, dim, ClusterShape::tight(6), 32);
  let whole = saved_bytes(&built(Space::L2, dim, &data, 2), dir.path(), "whole.bin");
  let mut split = HnswIndex::new(params(Space::L2, dim)).unwrap();
  split.set_build_threads(3);
  let mut at = 0;
  for (i, size) in [1usize, 31, 200, 700, 5, 1_000].iter().cycle().enumerate() {
    if at == 2_500 {
      break;
    }
    let n = (*size).min(2_500 - at);
    assert_eq!(
      split.add_deferred(&data[at * dim..(at + n) * dim]).unwrap() as usize,
      at,
      "call {i}"
    );
    at += n;
  }
  split.refresh_view().unwrap();
  assert!(whole == saved_bytes(&split, dir.path(), "split.bin"));
}

/// The HNSW stage's checkpoint: link what is pending, save, load the file back, go on.
/// An interrupted run resumes from that file; an uninterrupted one reloads it too; both
/// must end with the bytes of a run that kept the index in memory.
#[test]
fn a_checkpoint_and_resume_gives_the_bytes_of_an_uninterrupted_build() {
  let dim = 16;
  let dir = tempfile::tempdir().unwrap();
  let data = clustered(3_000, dim, ClusterShape::tight(6), 33);
  let cut = 1_300; // not on a batch boundary: the checkpoint links an incomplete batch
  let mut kept = HnswIndex::new(params(Space::Cosine, dim)).unwrap();
  kept.add_deferred(&data[..cut * dim]).unwrap();
  kept.link_pending();
  kept.add_deferred(&data[cut * dim..]).unwrap();
  kept.refresh_view().unwrap();
  let kept = saved_bytes(&kept, dir.path(), "kept.bin");

  let mut first = HnswIndex::new(params(Space::Cosine, dim)).unwrap();
  first.set_build_threads(1);
  first.add_deferred(&data[..cut * dim]).unwrap();
  assert!(
    first.save(&dir.path().join("x.bin")).is_err(),
    "save must refuse pending vectors"
  );
  first.link_pending();
  let checkpoint = dir.path().join("checkpoint.bin");
  first.save(&checkpoint).unwrap();
  drop(first); // the interruption
  let mut resumed = HnswIndex::load(&checkpoint, dim, Some(cut)).unwrap();
  resumed.set_build_threads(4);
  resumed.add_deferred(&data[cut * dim..]).unwrap();
  resumed.refresh_view().unwrap();
  assert!(kept == saved_bytes(&resumed, dir.path(), "resumed.bin"));
}

#[test]
fn recall_at_10_on_clustered_data_matches_the_hnsw_rs_era() {
  // The shape and parameters of bench/hnsw.ts at a tenth of its size and dim 64.
  let dim = 64;
  let (n, nq, k) = (10_000, 200, 10);
  let mut data = clustered(n + nq, dim, ClusterShape::BENCH, 34);
  let queries = data.split_off(n * dim);
  let index = {
    let mut i = HnswIndex::new(IndexParams {
      space: Space::L2,
      dim,
      m: 16,
      ef_construction: 200,
    })
    .unwrap();
    i.add(&data).unwrap();
    i
  };
  let mut found = 0;
  for q in queries.chunks_exact(dim) {
    let truth = exact_search(&data, dim, Space::L2, q, k).unwrap().labels;
    let got = index.search_graph(q, k, 32).unwrap().labels;
    found += got.iter().filter(|l| truth.contains(l)).count();
  }
  let recall = found as f64 / (k * nq) as f64;
  assert!(recall >= 0.95, "recall@10 at ef 32: {recall}");
}

const FIXTURE: &str = concat!(
  env!("CARGO_MANIFEST_DIR"),
  "/tests/fixtures/v1-hnsw_rs-l2-1200x8-m4"
);

/// A format-1 file written by the hnsw_rs build (1,200 vectors, dim 8, m 4, ef 32), with
/// five queries and the answers that build gave (tests/fixtures/*.json).
#[test]
fn a_format_1_file_answers_as_before_and_can_grow_into_format_2() {
  let path = Path::new(FIXTURE).with_extension("bin");
  let expected: serde_json::Value =
    serde_json::from_str(&std::fs::read_to_string(Path::new(FIXTURE).with_extension("json")).unwrap())
      .unwrap();
  let header = read_file_header(&path).unwrap();
  assert_eq!((header.format_version, header.library.as_str()), (1, "hnsw_rs"));
  let read = HnswIndex::load_for_search(&path, 8, Some(1_200)).unwrap();
  let mut loaded = HnswIndex::load(&path, 8, Some(1_200)).unwrap();
  assert_eq!(
    read.layer0_edges().0.len() as u64,
    expected["layer0_links"].as_u64().unwrap()
  );
  for case in expected["queries"].as_array().unwrap() {
    let q: Vec<f32> = case["query"]
      .as_array()
      .unwrap()
      .iter()
      .map(|v| v.as_f64().unwrap() as f32)
      .collect();
    let labels: Vec<u32> = case["labels"]
      .as_array()
      .unwrap()
      .iter()
      .map(|v| v.as_u64().unwrap() as u32)
      .collect();
    let distances: Vec<f32> = case["distances"]
      .as_array()
      .unwrap()
      .iter()
      .map(|v| v.as_f64().unwrap() as f32)
      .collect();
    for index in [&read, &loaded] {
      let got = index.search(&q, 5, 32).unwrap();
      assert_eq!(got.labels, labels);
      assert_eq!(got.distances, distances);
    }
  }
  // Grows with the new construction; saved again, it is format 2 and keeps its answers.
  let more = clustered(300, 8, ClusterShape::tight(4), 35);
  assert_eq!(loaded.add(&more).unwrap(), 1_200);
  assert_eq!(loaded.search(&more[..8], 1, 32).unwrap().labels, vec![1_200]);
  let dir = tempfile::tempdir().unwrap();
  let out = dir.path().join("HNSW.bin");
  loaded.save(&out).unwrap();
  assert_eq!(read_file_header(&out).unwrap().format_version, FORMAT_VERSION);
  let again = HnswIndex::load_for_search(&out, 8, Some(1_500)).unwrap();
  assert_eq!(again.layer0_edges(), loaded.layer0_edges());
  let q = &more[8 * 7..8 * 8];
  assert_eq!(
    again.search(q, 10, 32).unwrap(),
    loaded.search(q, 10, 32).unwrap()
  );
}
