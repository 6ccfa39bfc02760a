//! The vector index: a [`Graph`] built by build.rs (parallel, deterministic) and persisted
//! by container.rs; searches run on a flat [`GraphView`] of it (view.rs).

use std::path::Path;
use std::sync::OnceLock;

use crate::build::default_threads;
use crate::container;
use crate::distance::{normalize, Space};
use crate::error::{HnswError, Result};
use crate::exact::{check_query, check_vectors};
use crate::graph::Graph;
use crate::topk::SearchResult;
use crate::view::GraphView;

/// Below this many live vectors, `search` answers with exact search: it is then at least
/// as fast as the graph and has perfect recall. Measured with `cargo run --release
/// --example crossover -p noderag_hnsw` (numbers in bench/RESULTS.md, `## hnsw`).
pub const EXACT_SEARCH_BELOW: usize = 1_000;

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
    // m = 1 makes the level scale 1/ln(1); the file stores levels and counts compactly.
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
  /// The graph insertion grows; `None` for an index read for searching
  /// ([`HnswIndex::load_for_search`]), which cannot grow.
  graph: Option<Graph>,
  /// Made on first use for an index loaded for update (a sync adds vectors before it
  /// needs one, and `refresh_view` makes it then), at once otherwise. Use `view()`.
  view: OnceLock<GraphView>,
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
  /// Threads that link a batch (build.rs); the graph does not depend on it.
  threads: usize,
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
    params.validate()?;
    Self::from_graph(Graph::new(params), true)
  }

  /// An index over `graph` (every point linked); `writable` keeps the graph for `add`/`save`
  /// and leaves the search view to be made when first needed.
  fn from_graph(graph: Graph, writable: bool) -> Result<HnswIndex> {
    let view = if writable {
      OnceLock::new()
    } else {
      OnceLock::from(Self::make_view(&graph, REVERSE_LINKS, QUANTIZED_WALK)?)
    };
    Ok(HnswIndex {
      params: graph.params,
      graph: writable.then_some(graph),
      view,
      view_stale: false,
      retired: Vec::new(),
      retired_count: 0,
      reverse_links: REVERSE_LINKS,
      quantized: QUANTIZED_WALK,
      threads: default_threads(),
    })
  }

  fn make_view(graph: &Graph, reverse_links: bool, quantized: bool) -> Result<GraphView> {
    GraphView::from_flat(
      graph.space(),
      graph.params.dim,
      graph.vectors[..graph.linked() * graph.params.dim].to_vec(),
      graph.parts(),
      reverse_links,
      quantized,
    )
  }

  /// The search view; made from the graph on first use after a load for update.
  fn view(&self) -> &GraphView {
    self.view.get_or_init(|| {
      let graph = self
        .graph
        .as_ref()
        .expect("an index without a graph has its view");
      Self::make_view(graph, self.reverse_links, self.quantized)
        .expect("a graph's own vectors always fit its view")
    })
  }

  /// Builds an index from `vectors` (rows of `params.dim`), labels 0..n.
  pub fn build(params: IndexParams, vectors: &[f32]) -> Result<HnswIndex> {
    let mut index = Self::new(params)?;
    index.add(vectors)?;
    Ok(index)
  }

  /// How many threads link a batch (default: the available parallelism). The graph is
  /// the same for any value.
  pub fn set_build_threads(&mut self, threads: usize) {
    self.threads = threads.max(1);
  }

  /// Appends `vectors` (rows of `dim`); they get the next labels in order. Returns the
  /// first new label. The graph depends only on the vectors and on where `save`,
  /// `refresh_view` or `link_pending` were called (build.rs), never on the thread count.
  pub fn add(&mut self, vectors: &[f32]) -> Result<u32> {
    let first = self.add_deferred(vectors)?;
    self.refresh_view()?;
    Ok(first)
  }

  /// Like [`HnswIndex::add`], but the search view is not remade, and vectors of an
  /// incomplete batch (build.rs) wait to be linked: a long insertion split into many calls
  /// pays for the view once, in [`HnswIndex::refresh_view`], and its batches are the same
  /// however the calls split it. Until then, searches and `layer0_edges` do not see the new
  /// vectors (`view_is_stale`).
  pub fn add_deferred(&mut self, vectors: &[f32]) -> Result<u32> {
    let dim = self.params.dim;
    let n = check_vectors(vectors, dim, "vectors")?;
    let first = self.len();
    let threads = self.threads;
    let space = self.params.space;
    let Some(graph) = self.graph.as_mut() else {
      return Err(read_only());
    };
    if first + n > u32::MAX as usize {
      return Err(HnswError::InvalidArgument(format!(
        "{} vectors would exceed the u32 label range",
        first + n
      )));
    }
    if space == Space::Cosine {
      let mut rows = vectors.to_vec();
      rows.chunks_exact_mut(dim).for_each(normalize);
      graph.push(&rows, threads);
    } else {
      graph.push(vectors, threads);
    }
    if n > 0 {
      self.view_stale = true;
    }
    Ok(first as u32)
  }

  /// Links the vectors still waiting for a complete batch (see `add_deferred`).
  pub fn link_pending(&mut self) {
    let threads = self.threads;
    if let Some(graph) = self.graph.as_mut() {
      graph.link_pending(threads);
    }
  }

  /// Whether vectors wait to be linked (`save` needs `link_pending` first).
  pub fn has_pending(&self) -> bool {
    self.graph.as_ref().is_some_and(Graph::has_pending)
  }

  /// Links pending vectors and remakes the search view after [`HnswIndex::add_deferred`];
  /// does nothing when it is current.
  pub fn refresh_view(&mut self) -> Result<()> {
    if self.view_stale {
      self.link_pending();
      if let Some(graph) = self.graph.as_ref() {
        self.view = OnceLock::from(Self::make_view(graph, self.reverse_links, self.quantized)?);
      }
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
    self.graph.is_some()
  }

  pub fn params(&self) -> IndexParams {
    self.params
  }
  pub fn dim(&self) -> usize {
    self.params.dim
  }
  /// Number of stored vectors (retired and pending ones included).
  pub fn len(&self) -> usize {
    match &self.graph {
      Some(g) => g.len(),
      None => self.view().len(),
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
      return Ok(self.view().exact(&q, k, &self.retired));
    }
    Ok(self.view().search(&q, k, ef_search, &self.retired))
  }

  /// Graph search regardless of size (tests and benchmarks).
  pub fn search_graph(&self, query: &[f32], k: usize, ef_search: usize) -> Result<SearchResult> {
    let q = self.prepare_query(query)?;
    let k = k.min(self.active_len());
    Ok(self.view().search(&q, k, ef_search, &self.retired))
  }

  /// Exact search over the stored vectors regardless of size.
  pub fn search_exact(&self, query: &[f32], k: usize) -> Result<SearchResult> {
    let q = self.prepare_query(query)?;
    let k = k.min(self.active_len());
    Ok(self.view().exact(&q, k, &self.retired))
  }

  /// The stored (normalised, for cosine) vector of `label`.
  pub fn vector(&self, label: u32) -> Option<&[f32]> {
    let view = self.view();
    ((label as usize) < view.len()).then(|| view.vector(label))
  }

  /// Layer-0 neighbour lists as parallel (src, dst) label arrays, in src order; these
  /// become the graph's similarity edges. Directed: a link may exist one way only. Of an
  /// index that can grow, the lists of its linked points, read from the graph itself, so a
  /// build that only saves and exports never makes a search view (vectors still pending have
  /// no links yet: `link_pending`, `save` or `refresh_view` link them).
  pub fn layer0_edges(&self) -> (Vec<u32>, Vec<u32>) {
    match &self.graph {
      Some(graph) => graph.layer0_edges(),
      None => self.view().layer0_edges(),
    }
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
    self.view();
    let old = std::mem::replace(&mut self.view, OnceLock::from(placeholder));
    let old = old.into_inner().expect("made just above");
    self.view = OnceLock::from(old.with_settings(self.reverse_links, self.quantized));
    Ok(())
  }

  /// Whether the beam search walks on 8-bit codes and re-ranks the beam exactly (on by
  /// default; see quantized.rs). For measurements.
  #[doc(hidden)]
  pub fn set_search_quantized(&mut self, on: bool) -> Result<()> {
    self.quantized = on;
    self.remake_view()
  }

  /// Writes the index to `path` atomically (see container.rs for the format). Vectors
  /// still pending must be linked first ([`HnswIndex::link_pending`]; `refresh_view` and
  /// `add` do it).
  pub fn save(&self, path: &Path) -> Result<()> {
    let Some(graph) = self.graph.as_ref() else {
      return Err(read_only());
    };
    if graph.has_pending() {
      return Err(HnswError::InvalidArgument(
        "vectors added with add_deferred are not linked yet; call link_pending before save".into(),
      ));
    }
    container::save(graph, path)
  }

  /// Reads an index written by [`HnswIndex::save`] (this version's format or the hnsw_rs
  /// one) for searching: the file is validated as by [`HnswIndex::load`] (checksums
  /// included) and nothing is written, so no free space is needed. The index answers every
  /// search exactly as the loaded one would (same lists, same order), but cannot `add` or
  /// `save`.
  pub fn load_for_search(
    path: &Path,
    expected_dim: usize,
    expected_count: Option<usize>,
  ) -> Result<HnswIndex> {
    let graph = container::read(path, expected_dim, expected_count)?;
    Self::from_graph(graph, false).map_err(|e| HnswError::corrupt(path, e.to_string()))
  }

  /// Loads an index written by [`HnswIndex::save`] so that vectors can be added. The whole
  /// file is validated (magic, header, sizes, checksums, every link) before it is used;
  /// then `expected_dim` (and `expected_count`, when given) are checked.
  pub fn load(path: &Path, expected_dim: usize, expected_count: Option<usize>) -> Result<HnswIndex> {
    let graph = container::read(path, expected_dim, expected_count)?;
    Self::from_graph(graph, true).map_err(|e| HnswError::corrupt(path, e.to_string()))
  }
}
