//! A flat, read-only view of the graph, and the beam search that runs on it.
//!
//! The view keeps the graph (points, neighbour lists, entry point) in arrays indexed by
//! label: layer-0 links in CSR form, a visited set that is a stamp array, and plain binary
//! heaps of (distance, label); the vectors in one flat buffer, and their 8-bit codes
//! (quantized.rs). It gives every search the (distance, label) total order and the
//! `retired` filter of docs/method.md §3.9. (It was first written because hnsw_rs's own
//! search, hash maps of `Arc`s, was 2× slower; the graph is now built by build.rs.)

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Mutex;

use crate::code_dot::{CodeQuery, RowSums};
use crate::distance::{distance, Space};
use crate::error::{HnswError, Result};
#[cfg(target_arch = "x86_64")]
use crate::prefetch::prefetch_bytes;
use crate::quantized::Codes;
use crate::topk::{hit_key, key_hit, Hit, SearchResult, TopK};
use crate::walk_code::WalkQuery;

/// Pointer to the first value of a stored vector (`dim` values follow).
#[derive(Clone, Copy)]
struct VecPtr(*const f32);
// SAFETY: the pointee lives in the flat buffer `GraphView::_storage` owns and never changes.
// Sharing read-only pointers to immutable data across threads is sound.
unsafe impl Send for VecPtr {}
unsafe impl Sync for VecPtr {}

/// Reusable visited set: a stamp per label; a label is visited iff its stamp equals `epoch`.
pub(crate) struct Visited {
  stamps: Vec<u32>,
  epoch: u32,
}

impl Visited {
  pub(crate) fn new(n: usize) -> Visited {
    Visited {
      stamps: vec![0; n],
      epoch: 0,
    }
  }
  /// Forgets every mark; labels 0..n can be marked. (Grows only: a new stamp is 0, never
  /// the current epoch.)
  pub(crate) fn reset(&mut self, n: usize) {
    if self.stamps.len() < n {
      self.stamps.resize(n, 0);
    }
    self.epoch = self.epoch.wrapping_add(1);
    if self.epoch == 0 {
      self.stamps.fill(0);
      self.epoch = 1;
    }
  }
  /// Appends to `out` the labels of `links` not visited before, in order, and marks them.
  /// Branch-free: every label is written and kept only when new, so the "visited?" test,
  /// which goes either way about half the time in a search, never stalls the pipeline.
  #[inline]
  pub(crate) fn mark_new(&mut self, links: &[u32], out: &mut Vec<u32>) {
    out.clear();
    out.reserve(links.len());
    let epoch = self.epoch;
    let stamps = self.stamps.as_mut_slice();
    let buf = out.spare_capacity_mut();
    let mut n = 0usize;
    for &nb in links {
      let s = &mut stamps[nb as usize];
      buf[n].write(nb);
      n += usize::from(*s != epoch);
      *s = epoch;
    }
    // SAFETY: the first `n` slots were written above (each kept slot was written before `n`
    // moved past it), and `n <= links.len() <= capacity`.
    unsafe { out.set_len(n) };
  }

  /// Marks `label`; true if it was not visited before.
  #[inline]
  pub(crate) fn insert(&mut self, label: u32) -> bool {
    let s = &mut self.stamps[label as usize];
    if *s == self.epoch {
      false
    } else {
      *s = self.epoch;
      true
    }
  }
}

pub(crate) struct GraphView {
  space: Space,
  dim: usize,
  /// Owns the vectors the `vectors` pointers address.
  _storage: Storage,
  vectors: Vec<VecPtr>,
  /// Layer-0 links of label i: `l0_links[l0_offsets[i]..l0_offsets[i + 1]]`.
  l0_offsets: Vec<usize>,
  l0_links: Vec<u32>,
  /// Layer-0 adjacency the beam search walks: `l0_*` itself, or with reverse links added
  /// (see `add_reverse_links`).
  search_offsets: Option<Vec<usize>>,
  search_links: Option<Vec<u32>>,
  /// Links of layers 1..=level for the few points above layer 0 (index 0 = layer 1).
  upper: HashMap<u32, Vec<Vec<u32>>>,
  /// (label, level) of the entry point.
  entry: Option<(u32, u8)>,
  visited_pool: Mutex<Vec<Visited>>,
  /// 8-bit codes of the vectors; the beam search walks on them when `quantized`.
  codes: Codes,
  /// Σ a and Σ a² of every code row, for the VNNI code distance (code_dot.rs).
  code_sums: RowSums,
  quantized: bool,
}

/// The vectors (`n × dim` values, row = label), which `vectors` points into.
struct Storage(#[allow(dead_code)] Vec<f32>);

/// A graph as plain lists, whatever it was read from: `l0[label]` are the layer-0 links of
/// a label, `upper[label]` its links on layers 1..=level (absent for level 0).
pub(crate) struct GraphParts {
  pub(crate) l0: Vec<Vec<u32>>,
  pub(crate) upper: HashMap<u32, Vec<Vec<u32>>>,
  pub(crate) entry: Option<(u32, u8)>,
}

impl GraphView {
  /// A view over vectors held in one flat buffer (`n × dim`, row = label) and a graph read
  /// from an index file. `parts.l0` must have one list per label.
  pub(crate) fn from_flat(
    space: Space,
    dim: usize,
    flat: Vec<f32>,
    parts: GraphParts,
    reverse_links: bool,
    quantized: bool,
  ) -> Result<GraphView> {
    let n = parts.l0.len();
    if flat.len() != n * dim {
      return Err(HnswError::Library(format!(
        "{} stored values for {n} vectors of dimension {dim}",
        flat.len()
      )));
    }
    let vectors: Vec<VecPtr> = (0..n).map(|i| VecPtr(flat[i * dim..].as_ptr())).collect();
    Ok(Self::assemble(
      space,
      dim,
      Storage(flat),
      vectors,
      parts,
      reverse_links,
      quantized,
    ))
  }

  fn assemble(
    space: Space,
    dim: usize,
    storage: Storage,
    vectors: Vec<VecPtr>,
    parts: GraphParts,
    reverse_links: bool,
    quantized: bool,
  ) -> GraphView {
    let n = vectors.len();
    let mut l0_offsets = Vec::with_capacity(n + 1);
    let mut l0_links = Vec::with_capacity(parts.l0.iter().map(Vec::len).sum());
    l0_offsets.push(0);
    for list in &parts.l0 {
      l0_links.extend_from_slice(list);
      l0_offsets.push(l0_links.len());
    }
    // SAFETY: see `VecPtr`; every pointer addresses `dim` values of `storage`.
    let row = |i: usize| unsafe { std::slice::from_raw_parts(vectors[i].0, dim) };
    let codes = Codes::build(n, dim, row);
    let mut code_sums = RowSums::default();
    for label in 0..n as u32 {
      code_sums.push(codes.row(label));
    }
    let (search_offsets, search_links) = if reverse_links {
      let (o, l) = add_reverse_links(&l0_offsets, &l0_links);
      (Some(o), Some(l))
    } else {
      (None, None)
    };
    GraphView {
      search_offsets,
      search_links,
      space,
      dim,
      _storage: storage,
      vectors,
      l0_offsets,
      l0_links,
      upper: parts.upper,
      entry: parts.entry,
      visited_pool: Mutex::new(Vec::new()),
      codes,
      code_sums,
      quantized,
    }
  }

  /// The same view with other search settings (links and vectors are kept).
  pub(crate) fn with_settings(self, reverse_links: bool, quantized: bool) -> GraphView {
    let (search_offsets, search_links) = if reverse_links {
      let (o, l) = add_reverse_links(&self.l0_offsets, &self.l0_links);
      (Some(o), Some(l))
    } else {
      (None, None)
    };
    GraphView {
      search_offsets,
      search_links,
      quantized,
      ..self
    }
  }

  pub(crate) fn len(&self) -> usize {
    self.vectors.len()
  }

  #[inline]
  pub(crate) fn vector(&self, label: u32) -> &[f32] {
    // SAFETY: see `VecPtr`; every pointer addresses `dim` values (checked in `new`).
    unsafe { std::slice::from_raw_parts(self.vectors[label as usize].0, self.dim) }
  }

  #[inline]
  fn dist(&self, query: &[f32], label: u32) -> f32 {
    distance(self.space, query, self.vector(label))
  }

  /// The links the beam search follows from `label` on layer 0.
  #[inline]
  fn search_links(&self, label: u32) -> &[u32] {
    match (&self.search_offsets, &self.search_links) {
      (Some(o), Some(l)) => &l[o[label as usize]..o[label as usize + 1]],
      _ => self.layer0(label),
    }
  }

  #[inline]
  pub(crate) fn layer0(&self, label: u32) -> &[u32] {
    let i = label as usize;
    &self.l0_links[self.l0_offsets[i]..self.l0_offsets[i + 1]]
  }

  /// Layer-0 links as parallel (src, dst) arrays, in label order.
  pub(crate) fn layer0_edges(&self) -> (Vec<u32>, Vec<u32>) {
    let mut src = Vec::with_capacity(self.l0_links.len());
    for label in 0..self.len() {
      let deg = self.l0_offsets[label + 1] - self.l0_offsets[label];
      src.extend(std::iter::repeat_n(label as u32, deg));
    }
    (src, self.l0_links.clone())
  }

  /// Exact search over the stored vectors. `query` is prepared (normalised for cosine).
  pub(crate) fn exact(&self, query: &[f32], k: usize, retired: &[bool]) -> SearchResult {
    let mut top = TopK::new(k);
    for label in 0..self.len() as u32 {
      if !is_retired(retired, label) {
        top.push(Hit {
          dist: self.dist(query, label),
          label,
        });
      }
    }
    top.into_result()
  }

  /// HNSW search: greedy descent through the upper layers, then a beam of width `ef`
  /// on layer 0. Retired labels are walked through but never returned.
  pub(crate) fn search(&self, query: &[f32], k: usize, ef: usize, retired: &[bool]) -> SearchResult {
    let Some((entry, top)) = self.entry else {
      return SearchResult::default();
    };
    let ef = ef.max(k);
    // The walk compares codes when quantised (see quantized.rs), exact distances otherwise.
    // Two exact forms of the same code distance: through VNNI's byte dot product where the
    // CPU has it (a few instructions per 128 bytes), else the query widened once (AVX2).
    let code = self.quantized.then(|| self.codes.encode_query(query));
    let vnni_query = code.as_deref().map(CodeQuery::new).filter(CodeQuery::uses_vnni);
    let query_code = match (&code, &vnni_query) {
      (Some(c), None) => Some(WalkQuery::new(c.clone())),
      _ => None,
    };
    let walk_dist = |label: u32| match (&vnni_query, &query_code) {
      (Some(q), _) => q.distance(self.codes.row(label), &self.code_sums, label) as f32,
      (None, Some(qc)) => qc.distance(self.codes.row(label)) as f32,
      (None, None) => self.dist(query, label),
    };
    let mut cur = Hit {
      dist: walk_dist(entry),
      label: entry,
    };
    for layer in (1..=top as usize).rev() {
      loop {
        let mut moved = false;
        if let Some(links) = self.upper.get(&cur.label).and_then(|l| l.get(layer - 1)) {
          for &nb in links {
            let h = Hit {
              dist: walk_dist(nb),
              label: nb,
            };
            if h < cur {
              cur = h;
              moved = true;
            }
          }
        }
        if !moved {
          break;
        }
      }
    }

    let mut visited = self
      .visited_pool
      .lock()
      .map(|mut p| p.pop())
      .unwrap_or(None)
      .unwrap_or_else(|| Visited::new(self.len()));
    visited.reset(self.len());
    // Both heaps hold hits as u64 keys (hit_key): one integer comparison orders them as
    // `Hit` does, by (distance, label).
    let mut candidates: BinaryHeap<Reverse<u64>> = BinaryHeap::with_capacity(ef * 4);
    let mut results: BinaryHeap<u64> = BinaryHeap::with_capacity(ef + 1);
    visited.insert(cur.label);
    candidates.push(Reverse(hit_key(cur)));
    if !is_retired(retired, cur.label) {
      results.push(hit_key(cur));
    }
    let filtering = !retired.is_empty();
    let mut pending: Vec<u32> = Vec::with_capacity(64);
    while let Some(Reverse(c)) = candidates.pop() {
      if let Some(&worst) = results.peek() {
        // With retired labels about, keep walking until the beam holds ef live hits.
        if c > worst && (results.len() >= ef || !filtering) {
          break;
        }
      }
      let c = key_hit(c);
      // The link list of the candidate likely to be expanded next starts loading now, while
      // this one's neighbours are measured: a profile of the server's searches showed the
      // read of each expanded node's links, a cache miss, as the largest single stall.
      // (Only a hint: the walk and its result are the same whichever node comes next.)
      #[cfg(target_arch = "x86_64")]
      if let Some(&Reverse(next)) = candidates.peek() {
        self.prefetch_links(key_hit(next).label);
      }
      // Mark the unvisited neighbours first, then walk them while the next one's vector
      // is being fetched: a vector of a few hundred floats spans many cache lines, and a
      // 100k-vector index does not fit in cache, so memory latency dominates otherwise.
      visited.mark_new(self.search_links(c.label), &mut pending);
      #[cfg(target_arch = "x86_64")]
      for &nb in pending.iter().take(PREFETCH_AHEAD) {
        self.prefetch(nb);
      }
      for (i, &nb) in pending.iter().enumerate() {
        #[cfg(target_arch = "x86_64")]
        if let Some(&next) = pending.get(i + PREFETCH_AHEAD) {
          self.prefetch(next);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
        let h = hit_key(Hit {
          dist: walk_dist(nb),
          label: nb,
        });
        let admit = results.len() < ef || results.peek().is_some_and(|&w| h < w);
        if admit {
          candidates.push(Reverse(h));
          if !is_retired(retired, nb) {
            results.push(h);
            if results.len() > ef {
              results.pop();
            }
          }
        }
      }
    }
    if let Ok(mut pool) = self.visited_pool.lock() {
      pool.push(visited);
    }
    let mut sorted: Vec<Hit> = results.into_iter().map(key_hit).collect();
    if code.is_some() {
      // Re-rank the beam with exact distances: returned distances are always exact. The
      // beam's vectors are scattered over the whole index, so each is prefetched a few
      // hits ahead of its distance.
      #[cfg(target_arch = "x86_64")]
      for h in sorted.iter().take(RERANK_AHEAD) {
        self.prefetch_vector(h.label);
      }
      for i in 0..sorted.len() {
        #[cfg(target_arch = "x86_64")]
        if let Some(ahead) = sorted.get(i + RERANK_AHEAD) {
          self.prefetch_vector(ahead.label);
        }
        sorted[i].dist = self.dist(query, sorted[i].label);
      }
    }
    sorted.sort_unstable();
    sorted.truncate(k);
    SearchResult {
      labels: sorted.iter().map(|h| h.label).collect(),
      distances: sorted.iter().map(|h| h.dist).collect(),
    }
  }

  /// Asks the CPU to start loading what the walk compares for `label` (its code row when
  /// quantised, else its vector), every cache line.
  #[cfg(target_arch = "x86_64")]
  #[inline]
  fn prefetch(&self, label: u32) {
    if self.quantized {
      prefetch_bytes(self.codes.row_ptr(label) as *const i8, self.codes.stride());
    } else {
      self.prefetch_vector(label);
    }
  }

  /// Asks the CPU to start loading the f32 vector of `label`.
  #[cfg(target_arch = "x86_64")]
  #[inline]
  fn prefetch_vector(&self, label: u32) {
    prefetch_bytes(
      self.vectors[label as usize].0 as *const i8,
      self.dim * std::mem::size_of::<f32>(),
    );
  }

  /// Asks the CPU to start loading the layer-0 links the walk follows from `label`.
  #[cfg(target_arch = "x86_64")]
  #[inline]
  fn prefetch_links(&self, label: u32) {
    let links = self.search_links(label);
    prefetch_bytes(links.as_ptr() as *const i8, std::mem::size_of_val(links));
  }
}

/// How many beam hits ahead of the exact re-rank their vectors are prefetched.
const RERANK_AHEAD: usize = 2;

/// How many neighbours ahead of the distance computation their vectors are prefetched.
const PREFETCH_AHEAD: usize = 2;

/// Layer-0 lists extended with the links that point at each node and are missing from
/// its own list (u → v without v → u adds v → u).
fn add_reverse_links(offsets: &[usize], links: &[u32]) -> (Vec<usize>, Vec<u32>) {
  let n = offsets.len() - 1;
  let list = |u: usize| &links[offsets[u]..offsets[u + 1]];
  let mut extra: Vec<Vec<u32>> = vec![Vec::new(); n];
  for u in 0..n {
    for &v in list(u) {
      if !list(v as usize).contains(&(u as u32)) {
        extra[v as usize].push(u as u32);
      }
    }
  }
  let mut out_offsets = Vec::with_capacity(n + 1);
  let mut out = Vec::with_capacity(links.len() + extra.iter().map(Vec::len).sum::<usize>());
  out_offsets.push(0);
  for (u, more) in extra.iter().enumerate() {
    out.extend_from_slice(list(u));
    out.extend_from_slice(more);
    out_offsets.push(out.len());
  }
  (out_offsets, out)
}

#[inline]
fn is_retired(retired: &[bool], label: u32) -> bool {
  retired.get(label as usize).copied().unwrap_or(false)
}
