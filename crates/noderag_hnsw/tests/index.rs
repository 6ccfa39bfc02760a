//! Contract tests of the vector index against exact search, on seeded data.

use std::path::Path;

use noderag_hnsw::testing::{clustered, ClusterShape};
use noderag_hnsw::{exact_search, HnswError, HnswIndex, IndexParams, Space, EXACT_SEARCH_BELOW, MAGIC};

/// `n` data vectors and `q` queries drawn from the same clusters (queries are not stored).
fn data_and_queries(n: usize, q: usize, dim: usize, clusters: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
  let mut all = clustered(n + q, dim, ClusterShape::tight(clusters), seed);
  let queries = all.split_off(n * dim);
  (all, queries)
}

fn params(space: Space, dim: usize) -> IndexParams {
  IndexParams {
    space,
    dim,
    m: 16,
    ef_construction: 100,
  }
}

fn recall_at(index: &HnswIndex, data: &[f32], queries: &[f32], dim: usize, k: usize, ef: usize) -> f64 {
  let space = index.params().space;
  let mut found = 0usize;
  for q in queries.chunks_exact(dim) {
    let truth = exact_search(data, dim, space, q, k).unwrap();
    let got = index.search(q, k, ef).unwrap();
    assert_eq!(got.len(), k);
    assert!(
      got.distances.windows(2).all(|w| w[0] <= w[1]),
      "distances must be sorted"
    );
    found += got.labels.iter().filter(|l| truth.labels.contains(l)).count();
  }
  found as f64 / (k * queries.len() / dim) as f64
}

#[test]
fn recall_at_10_is_at_least_095_on_20k_vectors_and_every_vector_finds_itself() {
  let dim = 32;
  let (data, queries) = data_and_queries(20_000, 300, dim, 50, 1);
  let index = HnswIndex::build(params(Space::L2, dim), &data).unwrap();
  assert_eq!(index.len(), 20_000);
  let recall = recall_at(&index, &data, &queries, dim, 10, 64);
  assert!(recall >= 0.95, "recall@10 = {recall}");

  // docs/method.md §3.9: guard against orphaned points (a known defect class of the crate).
  let mut lost = Vec::new();
  for (label, v) in data.chunks_exact(dim).enumerate() {
    let r = index.search_graph(v, 1, 200).unwrap();
    if r.labels.first() != Some(&(label as u32)) {
      lost.push(label);
    }
  }
  assert!(
    lost.is_empty(),
    "{} vectors do not find themselves, e.g. {:?}",
    lost.len(),
    &lost[..lost.len().min(10)]
  );
}

#[test]
fn cosine_space_normalises_and_reaches_recall() {
  let dim = 48;
  let (mut data, queries) = data_and_queries(6_000, 200, dim, 30, 3);
  // Scale rows by different factors: cosine must not care.
  for (i, row) in data.chunks_exact_mut(dim).enumerate() {
    let s = 1.0 + (i % 7) as f32;
    row.iter_mut().for_each(|x| *x *= s);
  }
  let index = HnswIndex::build(params(Space::Cosine, dim), &data).unwrap();
  let recall = recall_at(&index, &data, &queries, dim, 10, 64);
  assert!(recall >= 0.95, "cosine recall@10 = {recall}");
  let r = index.search(&data[..dim], 1, 50).unwrap();
  assert_eq!(r.labels, vec![0]);
  assert!(r.distances[0].abs() < 1e-5);
  let stored = index.vector(0).unwrap();
  let norm: f32 = stored.iter().map(|x| x * x).sum::<f32>().sqrt();
  assert!((norm - 1.0).abs() < 1e-5);
}

#[test]
fn identical_inputs_build_identical_graphs() {
  let dim = 16;
  let data = clustered(3_000, dim, ClusterShape::tight(10), 5);
  let a = HnswIndex::build(params(Space::L2, dim), &data).unwrap();
  let b = HnswIndex::build(params(Space::L2, dim), &data).unwrap();
  assert_eq!(a.layer0_edges(), b.layer0_edges());
}

#[test]
fn small_indexes_answer_exactly_and_k_is_clamped() {
  let dim = 8;
  let (data, queries) = data_and_queries(300, 20, dim, 5, 6);
  let index = HnswIndex::build(params(Space::L2, dim), &data).unwrap();
  assert!(index.len() < EXACT_SEARCH_BELOW);
  for q in queries.chunks_exact(dim) {
    let got = index.search(q, 10, 1).unwrap();
    let want = exact_search(&data, dim, Space::L2, q, 10).unwrap();
    assert_eq!(got.labels, want.labels);
  }
  assert_eq!(index.search(&data[..dim], 1_000, 10).unwrap().len(), 300);
  assert!(index.search(&data[..dim], 0, 10).unwrap().is_empty());
  let empty = HnswIndex::new(params(Space::L2, dim)).unwrap();
  assert!(empty.search(&data[..dim], 5, 10).unwrap().is_empty());
  assert!(empty.layer0_edges().0.is_empty());
}

#[test]
fn incremental_add_continues_labels_and_keeps_earlier_results() {
  let dim = 24;
  let (all, queries) = data_and_queries(7_000, 100, dim, 20, 8);
  let (first, second) = all.split_at(4_000 * dim);
  let mut index = HnswIndex::build(params(Space::L2, dim), first).unwrap();
  let before: Vec<_> = queries
    .chunks_exact(dim)
    .map(|q| index.search(q, 10, 80).unwrap())
    .collect();
  assert_eq!(index.add(second).unwrap(), 4_000);
  assert_eq!(index.len(), 7_000);
  // Old vectors keep their labels and are still found.
  for label in (0..4_000).step_by(97) {
    let v = &first[label * dim..(label + 1) * dim];
    assert_eq!(index.search(v, 1, 100).unwrap().labels, vec![label as u32]);
  }
  for label in (0..3_000).step_by(97) {
    let v = &second[label * dim..(label + 1) * dim];
    assert_eq!(
      index.search(v, 1, 100).unwrap().labels,
      vec![(4_000 + label) as u32]
    );
  }
  // An earlier hit stays a hit unless a new, closer vector displaced it.
  let after_recall = recall_at(&index, &all, &queries, dim, 10, 80);
  assert!(after_recall >= 0.95, "recall after add = {after_recall}");
  for (q, old) in queries.chunks_exact(dim).zip(&before) {
    let now = index.search(q, 10, 80).unwrap();
    let cutoff = *now.distances.last().unwrap();
    for (l, d) in old.labels.iter().zip(&old.distances) {
      if *d < cutoff {
        assert!(
          now.labels.contains(l),
          "earlier hit {l} at {d} lost (cutoff {cutoff})"
        );
      }
    }
  }
}

#[test]
fn retired_labels_are_never_returned() {
  let dim = 16;
  let data = clustered(5_000, dim, ClusterShape::tight(10), 11);
  let mut index = HnswIndex::build(params(Space::L2, dim), &data).unwrap();
  let retired: Vec<u32> = (0..5_000).step_by(3).collect();
  index.retire(&retired).unwrap();
  assert_eq!(index.active_len(), 5_000 - retired.len());
  for label in [0u32, 3, 300, 4_998] {
    let v = &data[label as usize * dim..(label as usize + 1) * dim];
    let r = index.search(v, 10, 64).unwrap();
    assert_eq!(r.len(), 10);
    assert!(r.labels.iter().all(|l| l % 3 != 0), "{:?}", r.labels);
  }
  assert!(matches!(
    index.retire(&[5_000]),
    Err(HnswError::InvalidArgument(_))
  ));
}

#[test]
fn layer0_edges_are_valid_links() {
  let dim = 16;
  let data = clustered(3_000, dim, ClusterShape::tight(10), 12);
  let index = HnswIndex::build(params(Space::L2, dim), &data).unwrap();
  let (src, dst) = index.layer0_edges();
  assert_eq!(src.len(), dst.len());
  assert!(src.len() >= 3_000);
  assert!(src.windows(2).all(|w| w[0] <= w[1]));
  let mut degree = vec![0usize; 3_000];
  for (s, d) in src.iter().zip(&dst) {
    assert!(*d < 3_000 && s != d);
    degree[*s as usize] += 1;
  }
  assert!(
    degree.iter().all(|&d| (1..=32).contains(&d)),
    "layer 0 keeps 1..=2m links"
  );
}

#[test]
fn invalid_arguments_are_typed_errors() {
  let bad = |r: Result<HnswIndex, HnswError>| matches!(r, Err(HnswError::InvalidArgument(_)));
  assert!(bad(HnswIndex::new(IndexParams {
    space: Space::L2,
    dim: 0,
    m: 16,
    ef_construction: 10
  })));
  assert!(bad(HnswIndex::new(IndexParams {
    space: Space::L2,
    dim: 4,
    m: 1,
    ef_construction: 10
  })));
  assert!(bad(HnswIndex::new(IndexParams {
    space: Space::L2,
    dim: 4,
    m: 257,
    ef_construction: 10
  })));
  assert!(bad(HnswIndex::new(IndexParams {
    space: Space::L2,
    dim: 4,
    m: 8,
    ef_construction: 0
  })));
  assert!(bad(HnswIndex::build(params(Space::L2, 4), &[1.0, 2.0, 3.0])));
  assert!(bad(HnswIndex::build(params(Space::L2, 2), &[1.0, f32::INFINITY])));
  let index = HnswIndex::build(params(Space::L2, 2), &[1.0, 2.0]).unwrap();
  assert!(matches!(
    index.search(&[1.0], 1, 1),
    Err(HnswError::InvalidArgument(_))
  ));
  assert!(matches!(
    index.search(&[1.0, f32::NAN], 1, 1),
    Err(HnswError::InvalidArgument(_))
  ));
}

// ---- persistence ----

fn build_small(n: usize, dim: usize, seed: u64) -> (HnswIndex, Vec<f32>, Vec<f32>) {
  let (data, queries) = data_and_queries(n, 200, dim, 10, seed);
  (
    HnswIndex::build(params(Space::L2, dim), &data).unwrap(),
    data,
    queries,
  )
}

#[test]
fn save_then_load_gives_identical_results_and_accepts_more_vectors() {
  let dim = 32;
  let (index, data, queries) = build_small(5_000, dim, 13);
  let dir = tempfile::tempdir().unwrap();
  let path = dir.path().join("HNSW.bin");
  index.save(&path).unwrap();
  let loaded = HnswIndex::load(&path, dim, Some(5_000)).unwrap();
  assert_eq!(loaded.params(), index.params());
  assert_eq!(loaded.len(), 5_000);
  assert_eq!(loaded.layer0_edges(), index.layer0_edges());
  for q in queries.chunks_exact(dim) {
    assert_eq!(
      loaded.search(q, 10, 50).unwrap(),
      index.search(q, 10, 50).unwrap()
    );
  }
  // Only the index file and nothing else is left in the folder.
  let names: Vec<_> = std::fs::read_dir(dir.path())
    .unwrap()
    .map(|e| e.unwrap().file_name())
    .collect();
  assert_eq!(names, vec![std::ffi::OsString::from("HNSW.bin")]);

  let mut loaded = loaded;
  let more = clustered(500, dim, ClusterShape::tight(10), 15);
  assert_eq!(loaded.add(&more).unwrap(), 5_000);
  let v = &more[..dim];
  assert_eq!(loaded.search(v, 1, 100).unwrap().labels, vec![5_000]);
  let v0 = &data[..dim];
  assert_eq!(loaded.search(v0, 1, 100).unwrap().labels, vec![0]);
  // Saving over an existing file replaces it.
  loaded.save(&path).unwrap();
  assert_eq!(HnswIndex::load(&path, dim, None).unwrap().len(), 5_500);
}

fn expect_corrupt(path: &Path, dim: usize, what: &str) {
  // Both loaders refuse it the same way.
  for (loader, result) in [
    ("load", HnswIndex::load(path, dim, None)),
    ("load_for_search", HnswIndex::load_for_search(path, dim, None)),
  ] {
    match result {
      Err(e @ HnswError::Corrupt { .. }) => {
        assert!(
          e.to_string().contains(&path.display().to_string()),
          "{what} ({loader}): message must name the file: {e}"
        )
      }
      Err(other) => panic!("{what} ({loader}): expected Corrupt, got {other:?}"),
      Ok(_) => panic!("{what} ({loader}): a damaged file loaded"),
    }
  }
}

#[test]
fn loading_for_search_reads_in_place_and_answers_as_the_loaded_index() {
  let dim = 24;
  // Duplicated vectors give equal distances: ties in the neighbour lists must come out in
  // the same order as hnsw_rs's loader puts them.
  let (mut data, queries) = data_and_queries(3_000, 100, dim, 6, 21);
  let dup: Vec<f32> = data[..400 * dim].to_vec();
  data.extend_from_slice(&dup);
  for space in [Space::L2, Space::Cosine] {
    let index = HnswIndex::build(params(space, dim), &data).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("HNSW.bin");
    index.save(&path).unwrap();
    let loaded = HnswIndex::load(&path, dim, Some(3_400)).unwrap();
    let read = HnswIndex::load_for_search(&path, dim, Some(3_400)).unwrap();
    assert!(!read.is_writable());
    assert_eq!(read.params(), index.params());
    assert_eq!(read.len(), 3_400);
    assert_eq!(read.layer0_edges(), loaded.layer0_edges());
    for q in queries
      .chunks_exact(dim)
      .chain(data.chunks_exact(dim).step_by(97))
    {
      assert_eq!(
        read.search_graph(q, 10, 40).unwrap(),
        loaded.search_graph(q, 10, 40).unwrap()
      );
      assert_eq!(read.search(q, 10, 40).unwrap(), loaded.search(q, 10, 40).unwrap());
    }
    for label in [0u32, 17, 3_399] {
      assert_eq!(read.vector(label), loaded.vector(label));
    }
    // It cannot grow or be saved, and says so.
    let mut read = read;
    let e = read.add(&data[..dim]).unwrap_err();
    assert!(e.to_string().contains("for searching only"), "{e}");
    assert!(read.save(&dir.path().join("x.bin")).is_err());
  }
}

#[test]
fn loading_for_search_writes_nothing_and_removes_what_killed_processes_left() {
  let dim = 8;
  let (index, _, _) = build_small(300, dim, 22);
  let dir = tempfile::tempdir().unwrap();
  let path = dir.path().join("HNSW.bin");
  index.save(&path).unwrap();
  // Leftovers: a scratch folder of a process that no longer runs (with a dump in it), one
  // of this process (in use), a temporary file of an older version (no process id, old),
  // and a fresh one of an older version (may be in use).
  let dead = dir.path().join(".hnsw-scratch-4000000000-abc123");
  std::fs::create_dir(&dead).unwrap();
  std::fs::write(dead.join("index.hnsw.data"), vec![0u8; 4096]).unwrap();
  let mine = dir
    .path()
    .join(format!(".hnsw-scratch-{}-def456", std::process::id()));
  std::fs::create_dir(&mine).unwrap();
  let legacy_old = dir.path().join(".HNSW.bin.tmp-Xy12Zq");
  std::fs::write(&legacy_old, b"partial").unwrap();
  let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3_600);
  std::fs::File::options()
    .write(true)
    .open(&legacy_old)
    .unwrap()
    .set_modified(old)
    .unwrap();
  let legacy_new = dir.path().join(".HNSW.bin.tmp-Ab34Cd");
  std::fs::write(&legacy_new, b"partial").unwrap();

  let read = HnswIndex::load_for_search(&path, dim, Some(300)).unwrap();
  assert_eq!(read.len(), 300);
  let mut names: Vec<String> = std::fs::read_dir(dir.path())
    .unwrap()
    .map(|e| e.unwrap().file_name().into_string().unwrap())
    .collect();
  names.sort();
  let mut want = vec![
    ".HNSW.bin.tmp-Ab34Cd".to_string(),
    format!(".hnsw-scratch-{}-def456", std::process::id()),
    "HNSW.bin".to_string(),
  ];
  want.sort();
  assert_eq!(names, want);

  // A read-only folder: loading for search still works (nothing is written).
  #[cfg(unix)]
  {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    let read = HnswIndex::load_for_search(&path, dim, Some(300));
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(read.unwrap().len(), 300);
  }
}

#[test]
fn deferred_adds_build_the_same_graph_as_one_add() {
  let dim = 16;
  let (data, queries) = data_and_queries(2_000, 50, dim, 5, 23);
  let whole = HnswIndex::build(params(Space::L2, dim), &data).unwrap();
  let mut batched = HnswIndex::new(params(Space::L2, dim)).unwrap();
  for (i, chunk) in data.chunks(dim * 137).enumerate() {
    assert_eq!(batched.add_deferred(chunk).unwrap() as usize, i * 137);
  }
  assert!(batched.view_is_stale());
  assert_eq!(batched.len(), 2_000);
  batched.refresh_view().unwrap();
  assert!(!batched.view_is_stale());
  assert_eq!(batched.layer0_edges(), whole.layer0_edges());
  for q in queries.chunks_exact(dim) {
    assert_eq!(
      batched.search_graph(q, 10, 40).unwrap(),
      whole.search_graph(q, 10, 40).unwrap()
    );
  }
  let dir = tempfile::tempdir().unwrap();
  batched.save(&dir.path().join("a.bin")).unwrap();
  whole.save(&dir.path().join("b.bin")).unwrap();
  assert_eq!(
    std::fs::read(dir.path().join("a.bin")).unwrap(),
    std::fs::read(dir.path().join("b.bin")).unwrap()
  );
}

#[test]
fn every_damaged_file_is_a_named_error() {
  let dim = 8;
  let (index, _, _) = build_small(300, dim, 16);
  let dir = tempfile::tempdir().unwrap();
  let good = dir.path().join("HNSW.bin");
  index.save(&good).unwrap();
  let bytes = std::fs::read(&good).unwrap();
  let header_len = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
  let header: serde_json::Value = serde_json::from_slice(&bytes[12..12 + header_len]).unwrap();
  let graph_bytes = header["graph_bytes"].as_u64().unwrap() as usize;
  let graph_start = 12 + header_len;
  let data_start = graph_start + graph_bytes;
  let bad = dir.path().join("bad.bin");

  // Missing.
  let missing = dir.path().join("nope").join("HNSW.bin");
  match HnswIndex::load(&missing, dim, None) {
    Err(e @ HnswError::Missing { .. }) => assert!(e.to_string().contains("nope")),
    other => panic!("missing file: {:?}", other.err()),
  }

  // Truncated at several offsets (inside magic, length, header, graph, data, last byte).
  for cut in [
    0,
    5,
    10,
    12 + header_len / 2,
    graph_start + 3,
    data_start - 1,
    data_start + 10,
    bytes.len() - 1,
  ] {
    std::fs::write(&bad, &bytes[..cut]).unwrap();
    expect_corrupt(&bad, dim, &format!("truncated at {cut}"));
  }
  // Trailing garbage.
  let mut longer = bytes.clone();
  longer.extend_from_slice(b"xyz");
  std::fs::write(&bad, &longer).unwrap();
  expect_corrupt(&bad, dim, "trailing bytes");

  // Wrong magic.
  let mut m = bytes.clone();
  m[..8].copy_from_slice(b"NRHNSW02");
  std::fs::write(&bad, &m).unwrap();
  expect_corrupt(&bad, dim, "wrong magic");
  assert_ne!(&m[..8], MAGIC);

  // Any single flipped byte of the header length or the header is caught.
  for at in 8..graph_start {
    let mut f = bytes.clone();
    f[at] ^= 0x20;
    std::fs::write(&bad, &f).unwrap();
    match HnswIndex::load(&bad, dim, None) {
      Err(HnswError::Corrupt { .. }) => {}
      other => panic!("flip at header byte {at}: {:?}", other.map(|i| i.len())),
    }
  }
  // Flipped bytes in the graph and the data dumps.
  for at in [
    graph_start,
    graph_start + graph_bytes / 2,
    data_start - 1,
    data_start,
    data_start + 17,
    bytes.len() - 1,
  ] {
    let mut f = bytes.clone();
    f[at] ^= 0x01;
    std::fs::write(&bad, &f).unwrap();
    expect_corrupt(&bad, dim, &format!("flip at {at}"));
  }

  // Intact file, wrong expectations.
  match HnswIndex::load(&good, dim + 1, None) {
    Err(
      e @ HnswError::DimensionMismatch {
        expected: 9,
        found: 8,
        ..
      },
    ) => {
      assert!(e.to_string().contains("HNSW.bin"))
    }
    other => panic!("dimension mismatch: {:?}", other.err()),
  }
  match HnswIndex::load(&good, dim, Some(301)) {
    Err(HnswError::Corrupt { reason, .. }) => assert!(reason.contains("301"), "{reason}"),
    other => panic!("count mismatch: {:?}", other.err()),
  }
  // A directory is not a file.
  assert!(HnswIndex::load(dir.path(), dim, None).is_err());
  // And the good file still loads after all that.
  assert_eq!(HnswIndex::load(&good, dim, Some(300)).unwrap().len(), 300);
}

#[test]
fn the_quantised_walk_keeps_recall_and_returns_exact_distances() {
  let dim = 64;
  let (data, queries) = data_and_queries(20_000, 300, dim, 50, 7);
  let mut index = HnswIndex::build(params(Space::L2, dim), &data).unwrap();
  let quantised = recall_at(&index, &data, &queries, dim, 10, 32);
  for q in queries.chunks_exact(dim).take(50) {
    let got = index.search_graph(q, 10, 32).unwrap();
    for (l, d) in got.labels.iter().zip(&got.distances) {
      let v = index.vector(*l).unwrap();
      assert_eq!(
        *d,
        noderag_hnsw::l2_squared(q, v),
        "distance of label {l} is not the exact one"
      );
    }
  }
  index.set_search_quantized(false).unwrap();
  let exact_walk = recall_at(&index, &data, &queries, dim, 10, 32);
  assert!(
    quantised >= exact_walk - 0.01,
    "recall@10 at ef 32: quantised walk {quantised}, f32 walk {exact_walk}"
  );
}
