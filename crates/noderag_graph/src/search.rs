//! The search graph (docs/method.md §6.1) and the propagation + typed top-k (§6.4, §6.5).
//!
//! Transition matrix: T[i][j] = w(i, j) / W(j) with W(j) the strength of j; a column with
//! W(j) = 0 (isolated node) is uniform over all other nodes, 1/(N − 1), handled implicitly.
//! It is never stored: (T·p)[i] = Σ_j w(i, j) · p[j] / W(j) runs over the symmetric weight
//! CSR plus the vector 1/W, and the isolated columns add (D − p[i]·[i isolated]) / (N − 1)
//! with D the mass on isolated nodes. (With N = 1 the isolated column has no other node and
//! is zero.)
//!
//! Two exact strategies, chosen per query:
//! - sparse push: while no mass sits on an isolated node (true whenever no seed is isolated:
//!   isolated nodes only receive mass from isolated nodes), the support of p after k steps
//!   is the k-hop ball around the seeds. Each step pushes only from the ball, so a 2-step
//!   walk from a few seeds touches their 2-hop neighbourhood, not the whole graph.
//! - dense pull: a full sparse matrix–vector product per step, used when a seed is isolated
//!   (the uniform column makes p dense) or when the ball's rows cover a large share of the
//!   graph (streaming the whole CSR is then cheaper than scattered pushes).
//!
//! A loaded graph is immutable and `Sync`; queries only borrow it. Per-query scratch
//! vectors (size N) come from a small pool so concurrent queries never share them.

use std::sync::Mutex;

use crate::csr::{EdgeList, Graph};
use crate::error::{invalid, Result};
use crate::select::{rank_order, TopK};

/// The walk's stopping tolerance (docs/method.md §0): stop when ‖Δp‖₂ < 1e-5.
pub const WALK_TOLERANCE: f64 = 1e-5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropagationMode {
  /// p ← α·T·p + (1 − α)·p  (the default `ppr_mode: walk`).
  Walk,
  /// p ← α·T·p + (1 − α)·p₀  (`ppr_mode: restart`, true personalized PageRank).
  Restart,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
  /// Sparse push while it is cheaper, dense pull otherwise (results are the same).
  Auto,
  /// Always the dense pull (tests and benchmarks).
  Dense,
}

#[derive(Clone, Copy, Debug)]
pub struct PropagationParams {
  pub alpha: f64,
  pub max_iter: u32,
  pub mode: PropagationMode,
  pub tolerance: f64,
  pub strategy: Strategy,
}

impl PropagationParams {
  pub fn walk(alpha: f64, max_iter: u32) -> Self {
    Self {
      alpha,
      max_iter,
      mode: PropagationMode::Walk,
      tolerance: WALK_TOLERANCE,
      strategy: Strategy::Auto,
    }
  }

  fn validate(&self) -> Result<()> {
    if !(self.alpha.is_finite() && (0.0..=1.0).contains(&self.alpha)) {
      return Err(invalid(format!(
        "alpha must be within [0, 1], got {}",
        self.alpha
      )));
    }
    if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
      return Err(invalid(format!(
        "tolerance must be finite and >= 0, got {}",
        self.tolerance
      )));
    }
    Ok(())
  }
}

/// Work done by one propagation (for benchmarks: the bandwidth bound is computed from it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkStats {
  pub sparse_steps: u32,
  pub dense_steps: u32,
  /// CSR entries read (each is a u32 neighbour + an f64 weight).
  pub entries_read: u64,
  /// Rows whose entries were read.
  pub rows_read: u64,
  /// A lower bound of the distinct bytes the propagation and selection must move, each
  /// counted once per step (random accesses are counted by their own size, not by the
  /// 64-byte line they pull in, so the bound is optimistic):
  /// sparse step: 12 per entry (neighbour, weight), 24 per pushing row (offset, p, 1/W),
  /// 20 per ball node after the step (next, p, mark); dense step: 12 per entry, 40 per
  /// node (offset, p, 1/W, q, next); selection: 9 per ball node (score, type).
  pub bytes_touched: u64,
  /// The same traffic counted by cache line: sequential bytes (12 per entry) plus 64 per
  /// random access (a scatter, gather or ball-order visit of a node's state). A more
  /// realistic bound for a walk whose nodes are scattered over memory.
  pub line_bytes: u64,
}

/// Full result vectors of a propagation (tests, diagnostics).
#[derive(Clone, Debug)]
pub struct Scores {
  pub scores: Vec<f64>,
  /// Positive score and within `steps` hops of a seed (docs/method.md §6.4).
  pub eligible: Vec<bool>,
  pub steps: u32,
}

/// The typed top-k answer: eligible nodes ranked by (score desc, id asc), at most
/// `quotas[type]` of each type, in one global ranking order.
#[derive(Clone, Debug, Default)]
pub struct TopNodes {
  pub ids: Vec<u32>,
  pub scores: Vec<f64>,
  pub types: Vec<u8>,
  /// Steps performed (t of §6.4: the hop radius of eligibility).
  pub steps: u32,
  /// Number of eligible nodes (of every type, before quotas).
  pub eligible: u32,
  pub work: WorkStats,
}

pub struct SearchGraph {
  /// The graph under the internal numbering `order` (see [`Graph::locality_order`]); every
  /// id that enters or leaves this type is an original id.
  graph: Graph,
  /// internal → original id, and original → internal.
  order: Vec<u32>,
  rank: Vec<u32>,
  /// Node types by original id.
  types: Vec<u8>,
  type_count: usize,
  /// 1 / W(j), or 0 for an isolated node (W(j) = 0); internal ids.
  inv_strength: Vec<f64>,
  isolated: Vec<u32>,
  /// The CSR's weights as indexes into their distinct values, when there are at most 2¹⁶ of
  /// them (see [`WeightCodes`]); None: the push reads the f64 weights.
  weight_codes: Option<WeightCodes>,
  pool: Mutex<Vec<Scratch>>,
}

/// Edge weights of the CSR as u16 codes into a table of the distinct f64 values. A graph has
/// few distinct weights (counts, and 1/degree after `unbalance_adjust`), so the push step
/// reads 2 bytes per entry instead of 8: its largest stall was the first read of each
/// weight row. `table[codes[e]]` is the very f64 of entry e, so scores are bit-identical.
struct WeightCodes {
  codes: Vec<u16>,
  table: Vec<f64>,
}

impl WeightCodes {
  /// None when the weights have more than 2¹⁶ distinct values (bit patterns).
  fn new(weights: &[f64]) -> Option<WeightCodes> {
    let mut index: std::collections::HashMap<u64, u16, BitsHash> = Default::default();
    let mut table = Vec::new();
    let mut codes = Vec::with_capacity(weights.len());
    for &w in weights {
      let next = table.len();
      let code = *index.entry(w.to_bits()).or_insert_with(|| {
        table.push(w);
        next as u16
      });
      if table.len() > 1 << 16 {
        return None;
      }
      codes.push(code);
    }
    Some(WeightCodes { codes, table })
  }
}

/// A multiplicative hash of a weight's bits for [`WeightCodes::new`], which looks up every
/// CSR entry at load (2 M at a million edges): the default SipHash doubled the time of
/// building the search graph. The high half is folded in so that the low bits (the bucket)
/// depend on the whole value (the bits of 0.5, 0.25, … end in zeros).
#[derive(Default)]
struct BitsHasher(u64);

impl std::hash::Hasher for BitsHasher {
  fn finish(&self) -> u64 {
    let h = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^ (h >> 32)
  }
  fn write(&mut self, bytes: &[u8]) {
    for &b in bytes {
      self.0 = self.0.rotate_left(8) ^ u64::from(b);
    }
  }
  fn write_u64(&mut self, x: u64) {
    self.0 = x;
  }
}

type BitsHash = std::hash::BuildHasherDefault<BitsHasher>;

/// How the push step reads the weight of CSR entry `e` and where a row of weights starts.
trait WeightRead {
  /// Whether entries `..end` have a weight.
  fn covers(&self, end: usize) -> bool;
  /// The weight of entry `e`, without bounds checks.
  ///
  /// # Safety
  /// `covers(e + 1)`.
  unsafe fn at_unchecked(&self, e: usize) -> f64;
  fn row_ptr(&self, a: usize) -> *const i8;
}

impl WeightRead for &[f64] {
  #[inline]
  fn covers(&self, end: usize) -> bool {
    end <= self.len()
  }
  #[inline]
  unsafe fn at_unchecked(&self, e: usize) -> f64 {
    // SAFETY: the caller checked `covers(e + 1)`.
    unsafe { *self.get_unchecked(e) }
  }
  #[inline]
  fn row_ptr(&self, a: usize) -> *const i8 {
    self.as_ptr().wrapping_add(a) as *const i8
  }
}

impl WeightRead for &WeightCodes {
  #[inline]
  fn covers(&self, end: usize) -> bool {
    end <= self.codes.len()
  }
  #[inline]
  unsafe fn at_unchecked(&self, e: usize) -> f64 {
    // SAFETY: the caller checked `covers(e + 1)`; every code indexes `table` (made so in
    // `WeightCodes::new`).
    unsafe { *self.table.get_unchecked(*self.codes.get_unchecked(e) as usize) }
  }
  #[inline]
  fn row_ptr(&self, a: usize) -> *const i8 {
    self.codes.as_ptr().wrapping_add(a) as *const i8
  }
}

impl SearchGraph {
  /// Builds the search graph of §6.1: base edges (summed on duplicates), plus similarity
  /// edges (each pair +1 on an existing edge, else a new edge of weight 1; repeated pairs
  /// keep adding 1), then optionally `unbalance_adjust`. `node_types[i]` is the type of node
  /// i; its length is the node count.
  pub fn build(
    node_types: Vec<u8>,
    base: EdgeList<'_>,
    similarity_src: &[u32],
    similarity_dst: &[u32],
    unbalance_adjust: bool,
  ) -> Result<SearchGraph> {
    let sim = EdgeList::constant(similarity_src, similarity_dst, 1.0);
    let mut graph = Graph::from_edge_lists(node_types.len(), &[base, sim])?;
    if unbalance_adjust {
      graph.unbalance_adjust();
    }
    Self::from_graph(graph, node_types)
  }

  /// Wraps a graph. Internally the nodes are renumbered for memory locality (neighbourhoods
  /// of hubs become contiguous); the mathematics is unchanged and all ids in and out are
  /// the original ones, ties still broken by original id.
  pub fn from_graph(graph: Graph, node_types: Vec<u8>) -> Result<SearchGraph> {
    if node_types.len() != graph.node_count() {
      return Err(invalid(format!(
        "nodeTypes has {} entries but the graph has {} nodes",
        node_types.len(),
        graph.node_count()
      )));
    }
    let n = graph.node_count();
    let order = graph.locality_order();
    let graph = graph.permuted(&order);
    let mut rank = vec![0u32; n];
    for (r, &u) in order.iter().enumerate() {
      rank[u as usize] = r as u32;
    }
    let mut inv_strength = vec![0.0; n];
    let mut isolated = Vec::new();
    for u in 0..n as u32 {
      let w = graph.strength(u);
      if w > 0.0 {
        inv_strength[u as usize] = 1.0 / w;
      } else {
        isolated.push(u);
      }
    }
    let type_count = node_types.iter().map(|&t| t as usize + 1).max().unwrap_or(0);
    // The push step indexes node cells by neighbour without bounds checks: every neighbour
    // must be a node (the CSR is built so; this makes it a checked fact).
    if let Some(&bad) = graph.raw().1.iter().find(|&&v| v as usize >= n) {
      return Err(invalid(format!("neighbour {bad} is out of range for {n} nodes")));
    }
    let weight_codes = WeightCodes::new(graph.raw().2);
    Ok(SearchGraph {
      weight_codes,
      graph,
      order,
      rank,
      types: node_types,
      type_count,
      inv_strength,
      isolated,
      pool: Mutex::new(Vec::new()),
    })
  }

  pub fn node_count(&self) -> usize {
    self.graph.node_count()
  }

  /// Distinct undirected edges (self-loops included).
  pub fn edge_count(&self) -> usize {
    self.graph.edge_count()
  }

  /// Bytes of the CSR arrays, the coded weights included.
  pub fn heap_bytes(&self) -> usize {
    let codes = self.weight_codes.as_ref().map_or(0, |c| {
      c.codes.len() * std::mem::size_of::<u16>() + c.table.len() * std::mem::size_of::<f64>()
    });
    self.graph.heap_bytes() + codes
  }

  /// Weight of edge {u, v} (original ids), if present. Ids must be < node count.
  pub fn edge_weight(&self, u: u32, v: u32) -> Option<f64> {
    self
      .graph
      .edge_weight(self.rank[u as usize], self.rank[v as usize])
  }

  /// Node types by original id.
  pub fn node_types(&self) -> &[u8] {
    &self.types
  }

  /// 1 + the largest node type.
  pub fn type_count(&self) -> usize {
    self.type_count
  }

  /// Runs the propagation and returns the full score and eligibility vectors.
  pub fn scores(&self, seed_ids: &[u32], seed_weights: &[f64], params: &PropagationParams) -> Result<Scores> {
    let seeds = self.normalise_seeds(seed_ids, seed_weights)?;
    params.validate()?;
    let n = self.node_count();
    let mut s = self.take_scratch();
    let (steps, _, _) = self.run(&seeds, params, &mut s, None);
    let mut scores = vec![0.0; n];
    let mut eligible = vec![false; n];
    if s.dense {
      for cell in &s.cells {
        scores[cell.id as usize] = cell.v[s.cur];
      }
    } else {
      for &i in &s.ball {
        let cell = &s.cells[i as usize];
        scores[cell.id as usize] = cell.v[s.cur];
      }
    }
    for &i in &s.ball {
      let id = s.cells[i as usize].id as usize;
      eligible[id] = scores[id] > 0.0;
    }
    self.return_scratch(s);
    Ok(Scores {
      scores,
      eligible,
      steps,
    })
  }

  /// Runs the propagation and returns, in ranking order (score desc, id asc), the best
  /// eligible nodes of each type, at most `quotas[t]` of type t (types beyond
  /// `quotas.len()` get none). Only the eligible nodes are scanned, and only the winners
  /// are sorted.
  pub fn top_nodes(
    &self,
    seed_ids: &[u32],
    seed_weights: &[f64],
    params: &PropagationParams,
    quotas: &[u32],
  ) -> Result<TopNodes> {
    let seeds = self.normalise_seeds(seed_ids, seed_weights)?;
    params.validate()?;
    if seeds.is_empty() {
      return Ok(TopNodes::default());
    }
    let mut s = self.take_scratch();
    let mut sel = Selector {
      best: quotas.iter().map(|&q| TopK::new(q as usize)).collect(),
      eligible: 0,
    };
    let (steps, mut work, fused) = self.run(&seeds, params, &mut s, Some(&mut sel));
    if !fused {
      // One pass over the ball reads each score and its type from the same cell, offers it
      // to its type's top-k and clears the cell.
      let cur = s.cur;
      for &i in &s.ball {
        let cell = &mut s.cells[i as usize];
        let score = cell.v[cur];
        cell.v[cur] = 0.0;
        sel.offer(cell.id, score, cell.ty);
      }
      work.line_bytes += s.ball.len() as u64 * 64;
    }
    if !s.dense {
      s.ball.clear(); // every cell the walk touched is clean again
    }
    self.return_scratch(s);
    let Selector { best, eligible } = sel;
    let mut winners: Vec<(f64, u32)> = best.into_iter().flat_map(TopK::into_sorted).collect();
    winners.sort_unstable_by(rank_order);
    Ok(TopNodes {
      ids: winners.iter().map(|w| w.1).collect(),
      scores: winners.iter().map(|w| w.0).collect(),
      types: winners.iter().map(|w| self.types[w.1 as usize]).collect(),
      steps,
      eligible,
      work,
    })
  }

  /// Seeds → (internal id, weight / total) sorted by internal id, duplicates summed, zero
  /// weights dropped.
  fn normalise_seeds(&self, ids: &[u32], weights: &[f64]) -> Result<Vec<(u32, f64)>> {
    if ids.len() != weights.len() {
      return Err(invalid(format!(
        "seed ids has {} entries but seed weights has {}",
        ids.len(),
        weights.len()
      )));
    }
    let n = self.node_count();
    let mut seeds = Vec::with_capacity(ids.len());
    for (k, (&i, &w)) in ids.iter().zip(weights).enumerate() {
      if i as usize >= n {
        return Err(invalid(format!(
          "seed ids[{k}] = {i} is out of range for {n} nodes"
        )));
      }
      if !(w.is_finite() && w >= 0.0) {
        return Err(invalid(format!(
          "seed weights[{k}] = {w} (must be finite and >= 0)"
        )));
      }
      if w > 0.0 {
        seeds.push((self.rank[i as usize], w));
      }
    }
    seeds.sort_by_key(|s| s.0);
    seeds.dedup_by(|b, a| {
      if a.0 == b.0 {
        a.1 += b.1;
        true
      } else {
        false
      }
    });
    let total: f64 = seeds.iter().map(|s| s.1).sum();
    for s in &mut seeds {
      s.1 /= total;
    }
    Ok(seeds)
  }

  fn take_scratch(&self) -> Scratch {
    let popped = self.pool.lock().map(|mut p| p.pop()).unwrap_or(None);
    popped.unwrap_or_else(|| Scratch::new(&self.types, &self.order))
  }

  fn return_scratch(&self, mut s: Scratch) {
    s.clear();
    if let Ok(mut pool) = self.pool.lock() {
      // Keep at most a few: one per concurrent query is enough.
      if pool.len() < 8 {
        pool.push(s);
      }
    }
  }

  /// The walk itself. On return `s.ball` lists the nodes within `steps` hops of a seed
  /// (marked), and slot `s.cur` of the cells holds the scores (only on the ball unless `s.dense`).
  /// With `sel`, the last step (when it is the `max_iter`-th and sparse) hands each score
  /// straight to the selector and clears the cell in the same visit; the third value tells
  /// whether that happened.
  fn run(
    &self,
    seeds: &[(u32, f64)],
    params: &PropagationParams,
    s: &mut Scratch,
    mut sel: Option<&mut Selector>,
  ) -> (u32, WorkStats, bool) {
    let mut fused = false;
    let mut work = WorkStats::default();
    s.start_epoch();
    for &(i, w) in seeds {
      let cell = &mut s.cells[i as usize];
      cell.v[s.cur] = w;
      cell.mark = s.epoch;
      s.ball.push(i);
    }
    let any_isolated_seed = seeds.iter().any(|&(i, _)| self.inv_strength[i as usize] == 0.0);
    s.dense = params.strategy == Strategy::Dense || (any_isolated_seed && self.node_count() > 1);
    let entries = self.graph.entry_count() as u64;
    let mut ball_entries: u64 = seeds.iter().map(|&(i, _)| self.graph.degree(i) as u64).sum();
    let mut level_start = 0usize;
    let mut steps = 0u32;
    while steps < params.max_iter {
      if !s.dense && ball_entries * 3 > entries {
        s.dense = true;
      }
      let diff2 = if s.dense {
        let d = self.dense_step(seeds, params, s);
        work.dense_steps += 1;
        work.entries_read += entries;
        work.rows_read += self.node_count() as u64;
        work.bytes_touched += entries * 12 + self.node_count() as u64 * 40;
        work.line_bytes += entries * (12 + 64) + self.node_count() as u64 * 40;
        // Grow the ball by one level (BFS over the newest level only).
        let level_end = s.ball.len();
        for idx in level_start..level_end {
          let j = s.ball[idx];
          for &i in self.graph.neighbours(j) {
            if s.cells[i as usize].mark != s.epoch {
              s.cells[i as usize].mark = s.epoch;
              s.ball.push(i);
              ball_entries += self.graph.degree(i) as u64;
            }
          }
        }
        level_start = level_end;
        d
      } else {
        let before = s.ball.len();
        let last = if steps + 1 == params.max_iter {
          sel.as_deref_mut()
        } else {
          None
        };
        fused = last.is_some();
        let (d, read) = self.sparse_step(seeds, params, s, last);
        work.sparse_steps += 1;
        work.entries_read += read;
        work.rows_read += before as u64;
        work.bytes_touched += read * 12 + before as u64 * 24 + s.ball.len() as u64 * 20;
        work.line_bytes += read * (12 + 64) + (before + s.ball.len()) as u64 * 64;
        if steps + 1 < params.max_iter {
          // Only the next step's choice of strategy reads it.
          for &i in &s.ball[before..] {
            ball_entries += self.graph.degree(i) as u64;
          }
        }
        level_start = before;
        d
      };
      steps += 1;
      if diff2.sqrt() < params.tolerance {
        break;
      }
    }
    work.bytes_touched += s.ball.len() as u64 * 9;
    (steps, work, fused)
  }

  /// One push step from the ball. Requires: scores zero outside the ball, the `next` slot
  /// zero everywhere. Returns ‖Δp‖₂² and the number of CSR entries read.
  fn sparse_step(
    &self,
    seeds: &[(u32, f64)],
    params: &PropagationParams,
    s: &mut Scratch,
    sel: Option<&mut Selector>,
  ) -> (f64, u64) {
    let wt = self.graph.raw().2;
    let alpha = params.alpha;
    let (c, x) = (s.cur, 1 - s.cur);
    let Scratch {
      cells,
      ball,
      grow,
      epoch,
      ..
    } = s;
    let epoch = *epoch;
    if grow.len() <= cells.len() {
      grow.resize(cells.len() + 1, 0);
    }
    let cells = cells.as_mut_slice();
    let grow = grow.as_mut_slice();
    let (added, read) = match &self.weight_codes {
      Some(codes) => self.push_ball(ball, cells, grow, epoch, alpha, (c, x), codes),
      None => self.push_ball(ball, cells, grow, epoch, alpha, (c, x), wt),
    };
    ball.extend_from_slice(&grow[..added]);
    let lazy = match params.mode {
      PropagationMode::Walk => 1.0 - alpha,
      PropagationMode::Restart => {
        for &(i, w) in seeds {
          cells[i as usize].v[x] += (1.0 - alpha) * w;
        }
        0.0
      }
    };
    let mut diff2 = 0.0;
    match sel {
      None => {
        for &i in ball.iter() {
          let cell = &mut cells[i as usize];
          let old = cell.v[c];
          let new = cell.v[x] + lazy * old;
          let d = new - old;
          diff2 += d * d;
          cell.v[x] = new;
          cell.v[c] = 0.0;
        }
      }
      Some(sel) => {
        // Final step: select in the same visit and leave the cell clean.
        for &i in ball.iter() {
          let cell = &mut cells[i as usize];
          let old = cell.v[c];
          let new = cell.v[x] + lazy * old;
          let d = new - old;
          diff2 += d * d;
          cell.v = [0.0; 2];
          sel.offer(cell.id, new, cell.ty);
        }
      }
    }
    s.cur = x;
    (diff2, read)
  }

  /// The pushes of one sparse step from every ball node; returns the number of nodes newly
  /// reached (written to `grow`) and the CSR entries read.
  #[allow(clippy::too_many_arguments)]
  #[inline]
  fn push_ball<W: WeightRead>(
    &self,
    ball: &[u32],
    cells: &mut [Cell],
    grow: &mut [u32],
    epoch: u32,
    alpha: f64,
    (c, x): (usize, usize),
    wt: W,
  ) -> (usize, u64) {
    let (offsets, nb, _) = self.graph.raw();
    // Local slices, and new nodes written to `grow` by index instead of `ball.push`: the
    // loop keeps every pointer and length in registers (a push may reallocate, which made
    // the compiler reload them from `s` for every entry).
    let inv = self.inv_strength.as_slice();
    let mut added = 0usize;
    let mut read = 0u64;
    for (at, &j) in ball.iter().enumerate() {
      // The row a few ball nodes ahead starts loading now: ball nodes are scattered over
      // the CSR, so each row's first read is a cache miss (a hint only; nothing changes).
      #[cfg(target_arch = "x86_64")]
      if let Some(&ahead) = ball.get(at + ROW_AHEAD) {
        let a = offsets[ahead as usize];
        prefetch_row(nb.as_ptr().wrapping_add(a) as *const i8, wt.row_ptr(a));
      }
      #[cfg(not(target_arch = "x86_64"))]
      let _ = at;
      let j = j as usize;
      // Every ball node pushes (even with p = 0) so that the ball stays the exact k-hop ball.
      let push = alpha * cells[j].v[c] * inv[j];
      let (a, b) = (offsets[j], offsets[j + 1]);
      read += (b - a) as u64;
      let row = &nb[a..b];
      assert!(wt.covers(b) && grow.len() > cells.len() && cells.len() == self.types.len());
      for (k, &i) in row.iter().enumerate() {
        // SAFETY: `i` < node count = cells.len() (every CSR neighbour is a node: checked once
        // in `from_graph`), `added` <= the nodes reached so far < grow.len(), and `a + k` < b,
        // which the weights cover (asserted above).
        let cell = unsafe { cells.get_unchecked_mut(i as usize) };
        // Branch-free: the node is written past the new ones and kept only when it is new
        // (`grow` has room for every node plus one), so an unpredictable "new node?" test
        // never flushes the loads in flight. Ball order is the order of first visits, as before.
        unsafe { *grow.get_unchecked_mut(added) = i };
        added += usize::from(cell.mark != epoch);
        cell.mark = epoch;
        cell.v[x] += unsafe { wt.at_unchecked(a + k) } * push;
      }
    }
    (added, read)
  }

  /// One full pull step over every node, with the implicit uniform isolated columns.
  fn dense_step(&self, seeds: &[(u32, f64)], params: &PropagationParams, s: &mut Scratch) -> f64 {
    let n = self.node_count();
    let (offsets, nb, wt) = self.graph.raw();
    let alpha = params.alpha;
    let lazy = match params.mode {
      PropagationMode::Walk => 1.0 - alpha,
      PropagationMode::Restart => 0.0,
    };
    let (c, x) = (s.cur, 1 - s.cur);
    if s.q.len() != n {
      s.q = vec![0.0; n];
    }
    let Scratch { cells, q, .. } = s;
    let dangling: f64 = self.isolated.iter().map(|&j| cells[j as usize].v[c]).sum();
    let seed_before: Vec<f64> = seeds.iter().map(|&(i, _)| cells[i as usize].v[c]).collect();
    let share = if n > 1 { 1.0 / (n - 1) as f64 } else { 0.0 };
    for j in 0..n {
      q[j] = cells[j].v[c] * self.inv_strength[j];
    }
    let mut diff2 = 0.0;
    for i in 0..n {
      let mut acc = 0.0;
      for e in offsets[i]..offsets[i + 1] {
        acc += wt[e] * q[nb[e] as usize];
      }
      let cell = &mut cells[i];
      let old = cell.v[c];
      let own_dangling = if self.inv_strength[i] == 0.0 { old } else { 0.0 };
      let new = alpha * (acc + (dangling - own_dangling) * share) + lazy * old;
      let d = new - old;
      diff2 += d * d;
      cell.v[x] = new;
      cell.v[c] = 0.0;
    }
    if params.mode == PropagationMode::Restart {
      // Add (1 − α)·p₀ on the seeds and correct their share of the change.
      for (&(i, w), &old) in seeds.iter().zip(&seed_before) {
        let cell = &mut cells[i as usize];
        let before = cell.v[x] - old;
        cell.v[x] += (1.0 - alpha) * w;
        let after = cell.v[x] - old;
        diff2 += after * after - before * before;
      }
      diff2 = diff2.max(0.0);
    }
    s.cur = x;
    diff2
  }
}

/// How many ball nodes ahead of its push a row is prefetched.
const ROW_AHEAD: usize = 4;

/// Prefetch hints for the first lines of a row: its neighbours and its weights.
#[cfg(target_arch = "x86_64")]
#[inline]
fn prefetch_row(neighbours: *const i8, weights: *const i8) {
  use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
  // SAFETY: prefetch is a hint and never faults, whatever the address.
  unsafe {
    _mm_prefetch(neighbours, _MM_HINT_T0);
    _mm_prefetch(weights, _MM_HINT_T0);
    _mm_prefetch(weights.wrapping_add(64), _MM_HINT_T0);
  }
}

/// Per-type streaming top-k plus the count of eligible nodes.
struct Selector {
  best: Vec<TopK>,
  eligible: u32,
}

impl Selector {
  #[inline]
  fn offer(&mut self, id: u32, score: f64, ty: u8) {
    if score > 0.0 {
      self.eligible += 1;
      if let Some(top) = self.best.get_mut(ty as usize) {
        top.offer(score, id);
      }
    }
  }
}

/// Per-node scratch state, half a cache line: the score and the next score (slots
/// `cur` and `1 − cur` alternate each step), the ball stamp, the original id and the node
/// type, so the push,
/// update and selection passes each touch one line per node instead of one per array.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Cell {
  v: [f64; 2],
  mark: u32,
  /// Original id (rankings break ties by it).
  id: u32,
  ty: u8,
}

/// Per-query buffers. Invariant between queries: every `v` is zero. Ball membership uses
/// an epoch stamp so it never needs clearing.
struct Scratch {
  cells: Vec<Cell>,
  cur: usize,
  /// p / W for the dense step (allocated on first use).
  q: Vec<f64>,
  epoch: u32,
  ball: Vec<u32>,
  /// Scratch of the sparse step: the nodes it reaches first (node count + 1 entries).
  grow: Vec<u32>,
  dense: bool,
}

impl Scratch {
  /// `types` by original id; `order` maps internal → original ids.
  fn new(types: &[u8], order: &[u32]) -> Scratch {
    Scratch {
      cells: order
        .iter()
        .map(|&id| Cell {
          id,
          ty: types[id as usize],
          ..Cell::default()
        })
        .collect(),
      cur: 0,
      q: Vec::new(),
      epoch: 0,
      ball: Vec::new(),
      grow: Vec::new(),
      dense: false,
    }
  }

  fn start_epoch(&mut self) {
    self.epoch = self.epoch.wrapping_add(1);
    if self.epoch == 0 {
      for c in &mut self.cells {
        c.mark = 0;
      }
      self.epoch = 1;
    }
    self.ball.clear();
  }

  /// Restores the invariant (selection may already have cleared the ball's cells).
  fn clear(&mut self) {
    if self.dense {
      for c in &mut self.cells {
        c.v = [0.0; 2];
      }
    } else {
      for &i in &self.ball {
        self.cells[i as usize].v = [0.0; 2];
      }
    }
    self.ball.clear();
    self.dense = false;
  }
}

#[cfg(test)]
mod tests;
