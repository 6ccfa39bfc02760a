//! The vector index: hnsw_rs builds and persists the graph; searches run on a flat
//! [`GraphView`] of it (see view.rs for why).

use std::path::Path;

use hnsw_rs::hnsw::Hnsw;

use crate::container;
use crate::distance::{normalize, Space, SpaceDistance};
use crate::error::{HnswError, Result};
use crate::exact::{check_query, check_vectors};
use crate::topk::SearchResult;
use crate::view::GraphView;

/// Below this many live vectors, `search` answers with exact search: it is then at least
/// as fast as the graph and has perfect recall. Measured with `cargo run --release
/// --example crossover -p noderag_hnsw` (numbers in bench/RESULTS.md, `## hnsw`).
pub const EXACT_SEARCH_BELOW: usize = 1_000;

/// hnsw_rs keeps at most this many layers (its `NB_LAYER_MAX`).
const MAX_LAYERS: usize = 16;

/// hnsw_rs seeds its level generator with this constant (Xoshiro256++ 397 → StdRng) and
/// offers no way to change it; recorded in the file header so the value is visible.
pub const LEVEL_SEED: u64 = 397;

/// Build parameters (docs/method.md §3.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexParams {
  pub space: Space,
  pub dim: usize,
  /// Links per node on layers ≥ 1; layer 0 keeps up to 2·m. 2..=256.
  pub m: usize,
  pub ef_construction: usize,
}

impl IndexParams {
  pub(crate) fn validate(&self) -> Result<()> {
    if self.dim == 0 {
      return Err(HnswError::InvalidArgument("dim must be at least 1".into()));
    }
    // hnsw_rs exits the process when m > 256; m = 1 makes its level scale 1/ln(1).
    if !(2..=256).contains(&self.m) {
      return Err(HnswError::InvalidArgument(format!(
        "m must be in 2..=256, got {}",
        self.m
      )));
    }
    if self.ef_construction == 0 {
      return Err(HnswError::InvalidArgument(
        "ef_construction must be at least 1".into(),
      ));
    }
    Ok(())
  }
}

pub struct HnswIndex {
  params: IndexParams,
  /// hnsw_rs's graph, which insertion needs; `None` for an index read in place for
  /// searching ([`HnswIndex::load_for_search`]), which cannot grow.
  hnsw: Option<Hnsw<'static, f32, SpaceDistance>>,
  view: GraphView,
  /// Vectors inserted since `view` was made (see [`HnswIndex::add_deferred`]).
  view_stale: bool,
  /// `retired[label]`: excluded from every search result (docs/method.md §3.9). Not stored in
  /// the index file: the caller's id map is the source of truth and re-applies it.
  retired: Vec<bool>,
  retired_count: usize,
  /// Search layer 0 with reverse links added (see `GraphView`).
  reverse_links: bool,
  /// Walk on 8-bit codes, re-rank exactly (see quantized.rs).
  quantized: bool,
}

/// Default for `HnswIndex::reverse_links` (see `set_search_reverse_links`).
const REVERSE_LINKS: bool = true;

/// Default for `HnswIndex::quantized` (see `set_search_quantized`).
const QUANTIZED_WALK: bool = true;

fn read_only() -> HnswError {
  HnswError::InvalidArgument(
    "this index was loaded for searching only; load it for update to add vectors or save it".into(),
  )
}

impl HnswIndex {
  /// An empty index.
  pub fn new(params: IndexParams) -> Result<HnswIndex> {
    Self::with_capacity(params, 0)
  }

  fn with_capacity(params: IndexParams, capacity: usize) -> Result<HnswIndex> {
    params.validate()?;
    let mut hnsw = Hnsw::new(
      params.m,
      capacity.max(1),
      MAX_LAYERS,
      params.ef_construction,
      SpaceDistance { space: params.space },
    );
    Self::configure(&mut hnsw);
    let view = GraphView::new(&hnsw, params.space, params.dim, REVERSE_LINKS, QUANTIZED_WALK)?;
    Ok(HnswIndex {
      params,
      hnsw: Some(hnsw),
      view,
      view_stale: false,
      retired: Vec::new(),
      retired_count: 0,
      reverse_links: REVERSE_LINKS,
      quantized: QUANTIZED_WALK,
    })
  }

  /// Insertion settings, applied on creation and again after loading (hnsw_rs's loader
  /// turns `extend_candidates` on), so added vectors are linked the same way either way.
  fn configure(hnsw: &mut Hnsw<'static, f32, SpaceDistance>) {
    hnsw.set_extend_candidates(false);
    hnsw.set_keeping_pruned(false);
  }

  /// Builds an index from `vectors` (rows of `params.dim`), labels 0..n.
  pub fn build(params: IndexParams, vectors: &[f32]) -> Result<HnswIndex> {
    params.validate()?;
    let n = check_vectors(vectors, params.dim, "vectors")?;
    let mut index = Self::with_capacity(params, n)?;
    index.add(vectors)?;
    Ok(index)
  }

  /// Appends `vectors` (rows of `dim`); they get the next labels in order. Returns the
  /// first new label. Insertion is single-threaded in label order, so the same sequence
  /// of `add` calls always builds the same graph.
  pub fn add(&mut self, vectors: &[f32]) -> Result<u32> {
    let first = self.add_deferred(vectors)?;
    self.refresh_view()?;
    Ok(first)
  }

  /// Like [`HnswIndex::add`], but the search view is not remade: a long insertion split into
  /// batches pays for it once, in [`HnswIndex::refresh_view`], instead of once per batch.
  /// Until then, searches and `layer0_edges` do not see the new vectors (`view_is_stale`).
  pub fn add_deferred(&mut self, vectors: &[f32]) -> Result<u32> {
    let dim = self.params.dim;
    let n = check_vectors(vectors, dim, "vectors")?;
    let first = self.len();
    let Some(hnsw) = self.hnsw.as_ref() else {
      return Err(read_only());
    };
    if first + n > u32::MAX as usize {
      return Err(HnswError::InvalidArgument(format!(
        "{} vectors would exceed the u32 label range",
        first + n
      )));
    }
    let mut row = vec![0f32; dim];
    for (i, v) in vectors.chunks_exact(dim).enumerate() {
      row.copy_from_slice(v);
      if self.params.space == Space::Cosine {
        normalize(&mut row);
      }
      hnsw.insert_slice((&row, first + i));
    }
    if n > 0 {
      self.view_stale = true;
    }
    Ok(first as u32)
  }

  /// Remakes the search view after [`HnswIndex::add_deferred`]; does nothing when it is current.
  pub fn refresh_view(&mut self) -> Result<()> {
    if let (true, Some(hnsw)) = (self.view_stale, self.hnsw.as_ref()) {
      self.view = GraphView::new(
        hnsw,
        self.params.space,
        self.params.dim,
        self.reverse_links,
        self.quantized,
      )?;
    }
    self.view_stale = false;
    Ok(())
  }

  /// True after `add_deferred` until `refresh_view`.
  pub fn view_is_stale(&self) -> bool {
    self.view_stale
  }

  /// False for an index read in place for searching: it cannot grow or be saved.
  pub fn is_writable(&self) -> bool {
    self.hnsw.is_some()
  }

  pub fn params(&self) -> IndexParams {
    self.params
  }
  pub fn dim(&self) -> usize {
    self.params.dim
  }
  /// Number of stored vectors (retired ones included).
  pub fn len(&self) -> usize {
    match &self.hnsw {
      Some(h) => h.get_nb_point(),
      None => self.view.len(),
    }
  }
  pub fn is_empty(&self) -> bool {
    self.len() == 0
  }
  pub fn retired_count(&self) -> usize {
    self.retired_count
  }
  /// Stored vectors that searches can return.
  pub fn active_len(&self) -> usize {
    self.len() - self.retired_count
  }

  /// Marks labels as retired: searches walk through them but never return them.
  pub fn retire(&mut self, labels: &[u32]) -> Result<()> {
    let n = self.len();
    if let Some(bad) = labels.iter().find(|&&l| l as usize >= n) {
      return Err(HnswError::InvalidArgument(format!(
        "cannot retire label {bad}: the index holds labels 0..{n}"
      )));
    }
    if self.retired.len() < n {
      self.retired.resize(n, false);
    }
    for &l in labels {
      if !self.retired[l as usize] {
        self.retired[l as usize] = true;
        self.retired_count += 1;
      }
    }
    Ok(())
  }

  fn prepare_query(&self, query: &[f32]) -> Result<Vec<f32>> {
    check_query(query, self.params.dim)?;
    let mut q = query.to_vec();
    if self.params.space == Space::Cosine {
      normalize(&mut q);
    }
    Ok(q)
  }

  /// The `k` nearest live vectors, sorted by (distance, label). `k` is clamped to the
  /// number of live vectors; the beam is max(`ef_search`, k). Small indexes (fewer than
  /// [`EXACT_SEARCH_BELOW`] live vectors) are searched exactly.
  pub fn search(&self, query: &[f32], k: usize, ef_search: usize) -> Result<SearchResult> {
    let q = self.prepare_query(query)?;
    let k = k.min(self.active_len());
    if k == 0 {
      return Ok(SearchResult::default());
    }
    if self.active_len() < EXACT_SEARCH_BELOW {
      return Ok(self.view.exact(&q, k, &self.retired));
    }
    Ok(self.view.search(&q, k, ef_search, &self.retired))
  }

  /// Graph search regardless of size (tests and benchmarks).
  pub fn search_graph(&self, query: &[f32], k: usize, ef_search: usize) -> Result<SearchResult> {
    let q = self.prepare_query(query)?;
    let k = k.min(self.active_len());
    Ok(self.view.search(&q, k, ef_search, &self.retired))
  }

  /// Exact search over the stored vectors regardless of size.
  pub fn search_exact(&self, query: &[f32], k: usize) -> Result<SearchResult> {
    let q = self.prepare_query(query)?;
    let k = k.min(self.active_len());
    Ok(self.view.exact(&q, k, &self.retired))
  }

  /// hnsw_rs's own search, for comparison in benchmarks (ignores `retired`).
  pub fn search_hnsw_rs(&self, query: &[f32], k: usize, ef_search: usize) -> Result<SearchResult> {
    let q = self.prepare_query(query)?;
    let k = k.min(self.len());
    let Some(hnsw) = self.hnsw.as_ref() else {
      return Err(read_only());
    };
    let mut hits: Vec<(f32, u32)> = hnsw
      .search(&q, k, ef_search.max(k))
      .into_iter()
      .map(|nb| (nb.distance, nb.d_id as u32))
      .collect();
    hits.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    Ok(SearchResult {
      labels: hits.iter().map(|h| h.1).collect(),
      distances: hits.iter().map(|h| h.0).collect(),
    })
  }

  /// The stored (normalised, for cosine) vector of `label`.
  pub fn vector(&self, label: u32) -> Option<&[f32]> {
    ((label as usize) < self.view.len()).then(|| self.view.vector(label))
  }

  /// Layer-0 neighbour lists as parallel (src, dst) label arrays, in src order; these
  /// become the graph's similarity edges. Directed: a link may exist one way only.
  pub fn layer0_edges(&self) -> (Vec<u32>, Vec<u32>) {
    self.view.layer0_edges()
  }

  /// Whether layer-0 searches also follow reverse links (on by default). For measurements.
  #[doc(hidden)]
  pub fn set_search_reverse_links(&mut self, on: bool) -> Result<()> {
    self.reverse_links = on;
    self.remake_view()
  }

  fn remake_view(&mut self) -> Result<()> {
    let placeholder = GraphView::from_flat(
      self.params.space,
      self.params.dim,
      Vec::new(),
      crate::view::GraphParts {
        l0: Vec::new(),
        upper: Default::default(),
        entry: None,
      },
      false,
      false,
    )?;
    let old = std::mem::replace(&mut self.view, placeholder);
    self.view = old.with_settings(self.reverse_links, self.quantized);
    Ok(())
  }

  /// Whether the beam search walks on 8-bit codes and re-ranks the beam exactly (on by
  /// default; see quantized.rs). For measurements.
  #[doc(hidden)]
  pub fn set_search_quantized(&mut self, on: bool) -> Result<()> {
    self.quantized = on;
    self.remake_view()
  }

  /// Builds with hnsw_rs's optional insertion settings changed. For measurements.
  #[doc(hidden)]
  pub fn build_tuned(
    params: IndexParams,
    vectors: &[f32],
    extend_candidates: bool,
    keep_pruned: bool,
  ) -> Result<HnswIndex> {
    params.validate()?;
    let n = check_vectors(vectors, params.dim, "vectors")?;
    let mut index = Self::with_capacity(params, n)?;
    if let Some(hnsw) = index.hnsw.as_mut() {
      hnsw.set_extend_candidates(extend_candidates);
      hnsw.set_keeping_pruned(keep_pruned);
    }
    index.add(vectors)?;
    Ok(index)
  }

  /// Writes the index to `path` atomically (see container.rs for the format).
  pub fn save(&self, path: &Path) -> Result<()> {
    let Some(hnsw) = self.hnsw.as_ref() else {
      return Err(read_only());
    };
    container::save(hnsw, &self.params, self.len(), path)
  }

  /// Reads an index written by [`HnswIndex::save`] in place, for searching: the file is
  /// validated as by [`HnswIndex::load`] (checksums included), but nothing is copied to
  /// disk and hnsw_rs is not involved, so no free space is needed and nothing is left
  /// behind if the process dies meanwhile. The index answers every search exactly as the
  /// loaded one would (same lists, same order), but cannot `add` or `save`.
  pub fn load_for_search(
    path: &Path,
    expected_dim: usize,
    expected_count: Option<usize>,
  ) -> Result<HnswIndex> {
    let flat = container::load_view(path, expected_dim, expected_count)?;
    let params = flat.params;
    let view = GraphView::from_flat(
      params.space,
      params.dim,
      flat.vectors,
      flat.parts,
      REVERSE_LINKS,
      QUANTIZED_WALK,
    )
    .map_err(|e| HnswError::corrupt(path, e.to_string()))?;
    debug_assert_eq!(view.len(), flat.count);
    Ok(HnswIndex {
      params,
      hnsw: None,
      view,
      view_stale: false,
      retired: Vec::new(),
      retired_count: 0,
      reverse_links: REVERSE_LINKS,
      quantized: QUANTIZED_WALK,
    })
  }

  /// Loads an index written by [`HnswIndex::save`] so that vectors can be added. The whole
  /// file is validated (magic, header, sizes, checksums, consistency with the crate's own
  /// header) before hnsw_rs reads a byte; then `expected_dim` (and `expected_count`, when
  /// given) are checked. hnsw_rs reads two files by name, so the dumps are copied to a
  /// scratch folder beside the file for the duration of the load (see container.rs).
  pub fn load(path: &Path, expected_dim: usize, expected_count: Option<usize>) -> Result<HnswIndex> {
    let (mut hnsw, params) = container::load(path, expected_dim, expected_count)?;
    Self::configure(&mut hnsw);
    let view = GraphView::new(&hnsw, params.space, params.dim, REVERSE_LINKS, QUANTIZED_WALK)
      .map_err(|e| HnswError::corrupt(path, e.to_string()))?;
    Ok(HnswIndex {
      params,
      hnsw: Some(hnsw),
      view,
      view_stale: false,
      retired: Vec::new(),
      retired_count: 0,
      reverse_links: REVERSE_LINKS,
      quantized: QUANTIZED_WALK,
    })
  }
}
