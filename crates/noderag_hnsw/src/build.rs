//! HNSW construction: batch-synchronous, parallel, deterministic.
//!
//! Points are linked in batches of [`BATCH`] consecutive labels (batches start at label
//! multiples of `BATCH`; a batch left incomplete by the last `add` is linked when the
//! caller needs the graph, see [`Graph::link_pending`]). For a batch:
//!
//! 1. In parallel, for every new point p: its level is a hash of its label
//!    (graph.rs); its candidates on each layer are a beam search (width ef_construction)
//!    of the graph as it was when the batch started, walking on 8-bit codes of the vectors
//!    (quantized.rs: a quarter of the memory traffic) and measuring its final beam exactly,
//!    plus the exact distances to the earlier points of the same batch; its own neighbours are picked from them with the
//!    HNSW heuristic (hnswlib's `getNeighborsByHeuristic2`: keep a candidate unless it is
//!    closer to an already kept neighbour than to p), m of them on every layer.
//! 2. Each point p picked links back to p. In parallel, for every point that receives links:
//!    its list plus the newcomers (in label order), shrunk with the same heuristic when it
//!    exceeds 2·m on layer 0 or m above.
//!
//! Every step reads only the graph frozen at the start of the step and writes its result
//! to a slot of its own, and ties are broken by (distance, label): the graph, and so the
//! file, is the same on any number of threads. The batch size is a constant, not a
//! function of the thread count.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::code_dot::{CodeQuery, RowSums};
use crate::graph::{level_of, Graph};
#[cfg(target_arch = "x86_64")]
use crate::prefetch::prefetch_bytes;
use crate::quantized::{value_range, Codes};
use crate::topk::{hit_key, key_hit, Hit};
use crate::view::Visited;

/// Points per batch. Larger batches give threads more to share per step; smaller ones
/// let a point see more of its predecessors through the graph (the same batch's are seen
/// exactly anyway). 256 keeps both cores of a small machine busy without measurable recall loss.
pub const BATCH: usize = 256;

/// `f(state, i)` for i in 0..n on up to `threads` threads; results in index order. Each
/// thread makes its own `state` (a visited set). Items are handed out one at a time, so
/// uneven items do not leave a thread idle; which thread runs an item changes nothing.
fn par_map<S, T: Send>(
  n: usize,
  threads: usize,
  init: impl Fn() -> S + Sync,
  f: impl Fn(&mut S, usize) -> T + Sync,
) -> Vec<T> {
  let threads = threads.clamp(1, n.max(1));
  if threads == 1 {
    let mut state = init();
    return (0..n).map(|i| f(&mut state, i)).collect();
  }
  let next = AtomicUsize::new(0);
  let parts: Vec<Vec<(usize, T)>> = std::thread::scope(|scope| {
    let workers: Vec<_> = (0..threads)
      .map(|_| {
        scope.spawn(|| {
          let mut state = init();
          let mut out = Vec::new();
          loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
              break out;
            }
            out.push((i, f(&mut state, i)));
          }
        })
      })
      .collect();
    workers
      .into_iter()
      .map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
      .collect()
  });
  let mut slots: Vec<Option<T>> = (0..n).map(|_| None).collect();
  for (i, value) in parts.into_iter().flatten() {
    slots[i] = Some(value);
  }
  slots
    .into_iter()
    .map(|s| s.expect("every item was computed"))
    .collect()
}

/// The walk's distance: between code rows (a fixed multiple of the squared L2 of the
/// quantised vectors), `code_l2` exactly (code_dot.rs computes it with VNNI where it can).
#[inline]
fn walk(codes: &Codes, sums: &RowSums, q: &CodeQuery<'_>, label: u32) -> f32 {
  q.distance(codes.row(label), sums, label) as f32
}

/// Asks the CPU to start loading the code row of `label` (every cache line).
#[inline]
fn prefetch_code(codes: &Codes, label: u32) {
  #[cfg(target_arch = "x86_64")]
  prefetch_bytes(codes.row_ptr(label) as *const i8, codes.stride());
  #[cfg(not(target_arch = "x86_64"))]
  let _ = (codes, label);
}

/// How many hits ahead of an exact distance its vector is prefetched. At dim 1536 a vector
/// is 96 cache lines and the index's vectors do not fit in cache: without the hint, the
/// exact distances of the beam and of the heuristic wait on memory.
const VECTOR_AHEAD: usize = 2;

/// A linking thread's reusable buffers.
struct Scratch {
  visited: Visited,
  pending: Vec<u32>,
}

/// The number of threads a build uses unless told otherwise.
pub fn default_threads() -> usize {
  std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl Graph {
  /// Stores `vectors` (prepared rows) and links every batch they complete.
  pub(crate) fn push(&mut self, vectors: &[f32], threads: usize) {
    self.vectors.extend_from_slice(vectors);
    loop {
      let start = self.linked();
      let end = (start / BATCH + 1) * BATCH;
      if end > self.len() {
        break;
      }
      self.link_batch(start, end, threads);
    }
  }

  /// Links the vectors of an incomplete batch, if any.
  pub(crate) fn link_pending(&mut self, threads: usize) {
    if self.linked() < self.len() {
      self.link_batch(self.linked(), self.len(), threads);
    }
  }

  pub(crate) fn has_pending(&self) -> bool {
    self.linked() < self.len()
  }

  fn cap(&self, layer: usize) -> usize {
    if layer == 0 {
      2 * self.params.m
    } else {
      self.params.m
    }
  }

  /// Makes `codes` those of vectors 0..end: new rows are encoded with the current range,
  /// unless they widen it, when everything is encoded again (rare after the first batches).
  fn encode_until(&mut self, end: usize) {
    let dim = self.params.dim;
    let done = self.codes.as_ref().map_or(0, Codes::len);
    let vector = |i: usize| &self.vectors[i * dim..(i + 1) * dim];
    let fits = self.codes.as_ref().filter(|c| c.len() > 0).is_some_and(|c| {
      let (lo, hi) = value_range(end - done, dim, &|i| vector(done + i));
      let (clo, chi) = c.range();
      lo >= clo && hi <= chi
    });
    if fits {
      let rows = &self.vectors[done * dim..end * dim];
      self.codes.as_mut().expect("checked").push_rows(rows);
    } else {
      self.codes = Some(Codes::build(end, dim, vector));
      self.code_sums.clear();
    }
    let codes = self.codes.as_ref().expect("just made");
    for label in self.code_sums.len()..end {
      self.code_sums.push(codes.row(label as u32));
    }
  }

  fn link_batch(&mut self, start: usize, end: usize, threads: usize) {
    let m = self.params.m;
    self.encode_until(end);
    let levels: Vec<u8> = (start..end).map(|p| level_of(p as u32, m)).collect();
    // 1. Each new point's own neighbours, against the graph as it is now.
    let own: Vec<Vec<Vec<u32>>> = {
      let this = &*self;
      par_map(
        end - start,
        threads,
        || Scratch {
          visited: Visited::new(start),
          pending: Vec::new(),
        },
        |scratch, i| this.neighbours_of(start, start + i, &levels, scratch),
      )
    };
    // 2. The links back, grouped by the point receiving them, in label order.
    let mut incoming: Vec<(u32, usize, Vec<u32>)> = Vec::new();
    {
      let mut at = std::collections::HashMap::new();
      for (i, lists) in own.iter().enumerate() {
        for (layer, list) in lists.iter().enumerate() {
          for &to in list {
            let slot = *at.entry((to, layer)).or_insert_with(|| {
              incoming.push((to, layer, Vec::new()));
              incoming.len() - 1
            });
            incoming[slot].2.push((start + i) as u32);
          }
        }
      }
    }
    self.links.extend(own);
    let merged: Vec<Vec<u32>> = {
      let this = &*self;
      par_map(
        incoming.len(),
        threads,
        || (),
        |_, j| {
          let (to, layer, ref from) = incoming[j];
          this.merge_links(to, layer, from)
        },
      )
    };
    for ((to, layer, _), list) in incoming.into_iter().zip(merged) {
      self.links[to as usize][layer] = list;
    }
    for (i, &level) in levels.iter().enumerate() {
      if self.entry.is_none_or(|(_, top)| level > top) {
        self.entry = Some(((start + i) as u32, level));
      }
    }
  }

  /// The neighbours of new point `p` on each of its layers (step 1 of the module comment).
  fn neighbours_of(&self, start: usize, p: usize, levels: &[u8], scratch: &mut Scratch) -> Vec<Vec<u32>> {
    let q = self.vector(p as u32);
    let codes = self.codes.as_ref().expect("encode_until ran");
    let qc = CodeQuery::new(codes.row(p as u32));
    let sums = &self.code_sums;
    let level = levels[p - start] as usize;
    let ef = self.params.ef_construction;
    let mut candidates: Vec<Vec<Hit>> = vec![Vec::new(); level + 1];
    if let Some((entry, top)) = self.entry {
      // The walk compares codes (a quarter of the memory traffic; see quantized.rs); each
      // layer's beam is then measured exactly, and neighbours are picked on exact distances.
      let top = top as usize;
      let mut cur = Hit {
        dist: walk(codes, sums, &qc, entry),
        label: entry,
      };
      for layer in (level + 1..=top).rev() {
        cur = self.greedy(codes, &qc, cur, layer);
      }
      let mut from = vec![cur];
      for layer in (0..=level.min(top)).rev() {
        from = self.beam(codes, &qc, &from, layer, ef, scratch, start);
        candidates[layer] = self.exact(q, from.iter().map(|h| h.label));
      }
    }
    for o in start..p {
      let shared = level.min(levels[o - start] as usize);
      let hit = Hit {
        dist: self.dist(q, o as u32),
        label: o as u32,
      };
      for list in &mut candidates[..=shared] {
        list.push(hit);
      }
    }
    candidates
      .into_iter()
      .map(|mut c| {
        c.sort_unstable();
        c.truncate(ef.max(self.params.m));
        self.select(&c, self.params.m)
      })
      .collect()
  }

  /// Exact distances from `q` to `labels`, each vector prefetched a few labels ahead.
  fn exact(&self, q: &[f32], labels: impl ExactSizeIterator<Item = u32> + Clone) -> Vec<Hit> {
    for label in labels.clone().take(VECTOR_AHEAD) {
      self.prefetch_vector(label);
    }
    let mut ahead = labels.clone().skip(VECTOR_AHEAD);
    labels
      .map(|label| {
        if let Some(next) = ahead.next() {
          self.prefetch_vector(next);
        }
        Hit {
          dist: self.dist(q, label),
          label,
        }
      })
      .collect()
  }

  /// Asks the CPU to start loading the f32 vector of `label`.
  #[inline]
  fn prefetch_vector(&self, label: u32) {
    #[cfg(target_arch = "x86_64")]
    {
      let v = self.vector(label);
      prefetch_bytes(v.as_ptr() as *const i8, std::mem::size_of_val(v));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = label;
  }

  /// The HNSW neighbour heuristic over `sorted` candidates: at most `keep` of them.
  fn select(&self, sorted: &[Hit], keep: usize) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::with_capacity(keep);
    if let Some(first) = sorted.first() {
      self.prefetch_vector(first.label);
    }
    for (i, c) in sorted.iter().enumerate() {
      if out.len() >= keep {
        break;
      }
      // The next candidate's vector loads while this one is compared with the kept ones
      // (those stay in cache: they are compared with every candidate).
      if let Some(next) = sorted.get(i + 1) {
        self.prefetch_vector(next.label);
      }
      let v = self.vector(c.label);
      if out.iter().all(|&s| self.dist(v, s) >= c.dist) {
        out.push(c.label);
      }
    }
    out
  }

  /// `to`'s list on `layer` with the links from `from` added; shrunk when over capacity.
  fn merge_links(&self, to: u32, layer: usize, from: &[u32]) -> Vec<u32> {
    let mut list = self.links[to as usize][layer].clone();
    for &f in from {
      if f != to && !list.contains(&f) {
        list.push(f);
      }
    }
    let cap = self.cap(layer);
    if list.len() <= cap {
      return list;
    }
    let v = self.vector(to);
    let mut hits = self.exact(v, list.iter().copied());
    hits.sort_unstable();
    self.select(&hits, cap)
  }

  /// `label`'s links on `layer` that lead to points having that layer (all of them in a
  /// graph built here; hnsw_rs's graphs of format 1 may link to points below it).
  fn layer_links(&self, label: u32, layer: usize) -> impl Iterator<Item = u32> + '_ {
    self.links[label as usize][layer]
      .iter()
      .copied()
      .filter(move |&nb| layer == 0 || self.links[nb as usize].len() > layer)
  }

  /// Greedy descent on an upper layer: move to a closer neighbour while there is one.
  fn greedy(&self, codes: &Codes, qc: &CodeQuery<'_>, mut cur: Hit, layer: usize) -> Hit {
    loop {
      let mut moved = false;
      for nb in self.layer_links(cur.label, layer) {
        let h = Hit {
          dist: walk(codes, &self.code_sums, qc, nb),
          label: nb,
        };
        if h < cur {
          cur = h;
          moved = true;
        }
      }
      if !moved {
        return cur;
      }
    }
  }

  /// Beam search of width `ef` on `layer` from `from`, over the first `frozen` labels;
  /// the beam sorted by (distance, label). Both heaps hold hits as u64 keys (topk.rs
  /// `hit_key`): one integer comparison orders them as `Hit` does.
  #[allow(clippy::too_many_arguments)]
  fn beam(
    &self,
    codes: &Codes,
    qc: &CodeQuery<'_>,
    from: &[Hit],
    layer: usize,
    ef: usize,
    scratch: &mut Scratch,
    frozen: usize,
  ) -> Vec<Hit> {
    let Scratch { visited, pending } = scratch;
    visited.reset(frozen);
    let mut candidates: BinaryHeap<Reverse<u64>> = BinaryHeap::with_capacity(ef * 2);
    let mut results: BinaryHeap<u64> = BinaryHeap::with_capacity(ef + 1);
    for &h in from {
      if visited.insert(h.label) {
        candidates.push(Reverse(hit_key(h)));
        results.push(hit_key(h));
      }
    }
    while results.len() > ef {
      results.pop();
    }
    while let Some(Reverse(c)) = candidates.pop() {
      if results.len() >= ef && results.peek().is_some_and(|&w| c > w) {
        break;
      }
      let c = key_hit(c);
      // The unvisited neighbours first, then their distances while the next code row is
      // fetched (at dim 1536 a row is 24 cache lines; memory latency dominates otherwise).
      if layer == 0 {
        visited.mark_new(&self.links[c.label as usize][0], pending);
      } else {
        pending.clear();
        pending.extend(self.layer_links(c.label, layer).filter(|&nb| visited.insert(nb)));
      }
      if let Some(&first) = pending.first() {
        prefetch_code(codes, first);
      }
      for (i, &nb) in pending.iter().enumerate() {
        if let Some(&next) = pending.get(i + 1) {
          prefetch_code(codes, next);
        }
        let h = hit_key(Hit {
          dist: walk(codes, &self.code_sums, qc, nb),
          label: nb,
        });
        if results.len() < ef || results.peek().is_some_and(|&w| h < w) {
          candidates.push(Reverse(h));
          results.push(h);
          if results.len() > ef {
            results.pop();
          }
        }
      }
    }
    let mut beam: Vec<Hit> = results.into_iter().map(key_hit).collect();
    beam.sort_unstable();
    beam
  }
}

#[cfg(test)]
mod tests {
  use super::par_map;

  #[test]
  fn par_map_returns_results_in_index_order_on_any_thread_count() {
    for threads in [1, 2, 5] {
      let out = par_map(
        1000,
        threads,
        || 0usize,
        |calls, i| {
          *calls += 1;
          i * 3
        },
      );
      assert_eq!(out, (0..1000).map(|i| i * 3).collect::<Vec<_>>());
    }
  }
}
