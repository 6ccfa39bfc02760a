//! Compact undirected weighted graph in CSR form.
//!
//! Nodes are dense `u32` indexes `0..n` (the TypeScript side keeps the hash-id ↔ index
//! map). Each undirected edge {u, v} is stored twice, as (u → v) in row u and (v → u) in
//! row v; rows are sorted by neighbour. Duplicate edges are merged by summing their weights.
//!
//! Self-loops: the NodeRAG index has none (docs/method.md §1), but the graph accepts them so
//! that algorithms are total. A self-loop {u, u} is stored ONCE, as the entry (u → u), so
//! it adds its weight once to the strength W(u) and counts once in the neighbour count
//! deg(u) (the adjacency-matrix convention: A[u][u] = w).

use crate::error::{invalid, Result};

/// One list of edges to add: parallel `src`/`dst` arrays and either per-edge weights or a
/// constant weight for all of them (similarity edges weigh 1).
#[derive(Clone, Copy, Debug)]
pub struct EdgeList<'a> {
  pub src: &'a [u32],
  pub dst: &'a [u32],
  pub weights: Weights<'a>,
}

#[derive(Clone, Copy, Debug)]
pub enum Weights<'a> {
  PerEdge(&'a [f64]),
  Constant(f64),
}

impl<'a> EdgeList<'a> {
  pub fn weighted(src: &'a [u32], dst: &'a [u32], weights: &'a [f64]) -> Self {
    Self {
      src,
      dst,
      weights: Weights::PerEdge(weights),
    }
  }

  pub fn constant(src: &'a [u32], dst: &'a [u32], weight: f64) -> Self {
    Self {
      src,
      dst,
      weights: Weights::Constant(weight),
    }
  }

  fn weight(&self, e: usize) -> f64 {
    match self.weights {
      Weights::PerEdge(w) => w[e],
      Weights::Constant(w) => w,
    }
  }
}

#[derive(Clone, Debug)]
pub struct Graph {
  /// Row `u` is `neighbours[offsets[u]..offsets[u + 1]]`.
  offsets: Vec<usize>,
  neighbours: Vec<u32>,
  weights: Vec<f64>,
}

impl Graph {
  /// Builds the graph on `n` nodes from one or more edge lists. Duplicates (in any list,
  /// in either direction) are merged by summing weights. Weights must be finite and > 0.
  pub fn from_edge_lists(n: usize, lists: &[EdgeList<'_>]) -> Result<Graph> {
    if n > u32::MAX as usize {
      return Err(invalid(format!("nodeCount {n} exceeds the u32 id range")));
    }
    for (k, list) in lists.iter().enumerate() {
      validate_list(n, k, list)?;
    }
    // Count entries per row (a self-loop is one entry), then scatter in edge order so that
    // duplicates sit in the same order in row u and in row v: both rows then sum them in the
    // same order and the stored weights of (u, v) and (v, u) are bit-identical.
    let mut counts = vec![0usize; n + 1];
    for list in lists {
      for (&u, &v) in list.src.iter().zip(list.dst) {
        counts[u as usize] += 1;
        if u != v {
          counts[v as usize] += 1;
        }
      }
    }
    let mut starts = vec![0usize; n + 1];
    for u in 0..n {
      starts[u + 1] = starts[u] + counts[u];
    }
    let total = starts[n];
    let mut raw_nb = vec![0u32; total];
    let mut raw_w = vec![0f64; total];
    let mut fill = starts.clone();
    for list in lists {
      for e in 0..list.src.len() {
        let (u, v, w) = (list.src[e], list.dst[e], list.weight(e));
        let i = fill[u as usize];
        raw_nb[i] = v;
        raw_w[i] = w;
        fill[u as usize] += 1;
        if u != v {
          let j = fill[v as usize];
          raw_nb[j] = u;
          raw_w[j] = w;
          fill[v as usize] += 1;
        }
      }
    }
    drop(fill);
    // Sort each row by neighbour (stable: keeps edge order among duplicates), merge, compact.
    let mut offsets = vec![0usize; n + 1];
    let mut neighbours = Vec::with_capacity(total);
    let mut weights = Vec::with_capacity(total);
    let mut row: Vec<(u32, f64)> = Vec::new();
    for u in 0..n {
      row.clear();
      row.extend((starts[u]..starts[u + 1]).map(|i| (raw_nb[i], raw_w[i])));
      if !row.windows(2).all(|p| p[0].0 < p[1].0) {
        row.sort_by_key(|&(v, _)| v);
      }
      let mut iter = row.iter();
      if let Some(&(mut cur, mut acc)) = iter.next() {
        for &(v, w) in iter {
          if v == cur {
            acc += w;
          } else {
            neighbours.push(cur);
            weights.push(acc);
            cur = v;
            acc = w;
          }
        }
        neighbours.push(cur);
        weights.push(acc);
      }
      offsets[u + 1] = neighbours.len();
    }
    neighbours.shrink_to_fit();
    weights.shrink_to_fit();
    Ok(Graph {
      offsets,
      neighbours,
      weights,
    })
  }

  /// Shorthand for one weighted edge list.
  pub fn from_edges(n: usize, src: &[u32], dst: &[u32], weights: &[f64]) -> Result<Graph> {
    Self::from_edge_lists(n, &[EdgeList::weighted(src, dst, weights)])
  }

  /// Shorthand for an unweighted graph (every edge weighs 1; duplicates still sum).
  pub fn from_unweighted(n: usize, src: &[u32], dst: &[u32]) -> Result<Graph> {
    Self::from_edge_lists(n, &[EdgeList::constant(src, dst, 1.0)])
  }

  pub fn node_count(&self) -> usize {
    self.offsets.len() - 1
  }

  /// Number of stored entries (2 per edge, 1 per self-loop).
  pub fn entry_count(&self) -> usize {
    self.neighbours.len()
  }

  /// Number of distinct undirected edges, self-loops included.
  pub fn edge_count(&self) -> usize {
    let loops = (0..self.node_count())
      .filter(|&u| self.has_self_loop(u as u32))
      .count();
    (self.entry_count() - loops) / 2 + loops
  }

  /// Number of neighbours of `u` (a self-loop makes u its own neighbour).
  #[inline]
  pub fn degree(&self, u: u32) -> usize {
    self.offsets[u as usize + 1] - self.offsets[u as usize]
  }

  #[inline]
  pub fn neighbours(&self, u: u32) -> &[u32] {
    &self.neighbours[self.offsets[u as usize]..self.offsets[u as usize + 1]]
  }

  #[inline]
  pub fn weights(&self, u: u32) -> &[f64] {
    &self.weights[self.offsets[u as usize]..self.offsets[u as usize + 1]]
  }

  /// `(neighbour, weight)` pairs of row `u`, sorted by neighbour.
  #[inline]
  pub fn row(&self, u: u32) -> impl Iterator<Item = (u32, f64)> + '_ {
    self
      .neighbours(u)
      .iter()
      .copied()
      .zip(self.weights(u).iter().copied())
  }

  /// Weight of edge {u, v}, if present (binary search in the sorted row).
  pub fn edge_weight(&self, u: u32, v: u32) -> Option<f64> {
    let nb = self.neighbours(u);
    nb.binary_search(&v).ok().map(|i| self.weights(u)[i])
  }

  pub fn has_self_loop(&self, u: u32) -> bool {
    self.neighbours(u).binary_search(&u).is_ok()
  }

  /// Strength W(u) = Σ_v w(u, v) (a self-loop counted once).
  pub fn strength(&self, u: u32) -> f64 {
    self.weights(u).iter().sum()
  }

  /// The raw CSR arrays (offsets, neighbours, weights), for algorithms that stream them.
  pub fn raw(&self) -> (&[usize], &[u32], &[f64]) {
    (&self.offsets, &self.neighbours, &self.weights)
  }

  /// docs/method.md §6.1 `unbalance_adjust`: every edge weight becomes
  /// min(w, 1/deg(u), 1/deg(v)), deg = number of neighbours in this graph. Symmetric, so
  /// rows u and v stay consistent.
  pub fn unbalance_adjust(&mut self) {
    let n = self.node_count();
    let inv_deg: Vec<f64> = (0..n)
      .map(|u| 1.0 / self.degree(u as u32).max(1) as f64)
      .collect();
    for u in 0..n {
      let (a, b) = (self.offsets[u], self.offsets[u + 1]);
      for i in a..b {
        let v = self.neighbours[i] as usize;
        let w = self.weights[i].min(inv_deg[u]).min(inv_deg[v]);
        self.weights[i] = w;
      }
    }
  }

  /// A cache-friendly numbering (new → old): breadth-first from the highest-degree node,
  /// neighbours in row order, restarting from the next unvisited node by degree (desc, id
  /// asc). Neighbourhoods of hubs become runs of consecutive ids, so a walk around them
  /// touches fewer cache lines.
  pub fn locality_order(&self) -> Vec<u32> {
    let n = self.node_count();
    let mut by_degree: Vec<u32> = (0..n as u32).collect();
    by_degree.sort_by_key(|&u| (std::cmp::Reverse(self.degree(u)), u));
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for &start in &by_degree {
      if seen[start as usize] {
        continue;
      }
      seen[start as usize] = true;
      let mut head = order.len();
      order.push(start);
      while head < order.len() {
        let u = order[head];
        head += 1;
        for &v in self.neighbours(u) {
          if !seen[v as usize] {
            seen[v as usize] = true;
            order.push(v);
          }
        }
      }
    }
    order
  }

  /// The same graph renumbered: new node r is old node `order[r]` (a permutation).
  pub fn permuted(&self, order: &[u32]) -> Graph {
    let n = self.node_count();
    assert_eq!(order.len(), n, "permutation length");
    let mut rank = vec![0u32; n];
    for (r, &u) in order.iter().enumerate() {
      rank[u as usize] = r as u32;
    }
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0);
    let mut neighbours = Vec::with_capacity(self.entry_count());
    let mut weights = Vec::with_capacity(self.entry_count());
    let mut row: Vec<(u32, f64)> = Vec::new();
    for &u in order {
      row.clear();
      row.extend(self.row(u).map(|(v, w)| (rank[v as usize], w)));
      row.sort_unstable_by_key(|e| e.0); // rows hold no duplicates: order is fully determined
      for &(v, w) in &row {
        neighbours.push(v);
        weights.push(w);
      }
      offsets.push(neighbours.len());
    }
    Graph {
      offsets,
      neighbours,
      weights,
    }
  }

  /// Bytes held by the CSR arrays (for memory reporting and bandwidth estimates).
  pub fn heap_bytes(&self) -> usize {
    self.offsets.len() * std::mem::size_of::<usize>()
      + self.neighbours.len() * std::mem::size_of::<u32>()
      + self.weights.len() * std::mem::size_of::<f64>()
  }
}

fn validate_list(n: usize, k: usize, list: &EdgeList<'_>) -> Result<()> {
  if list.src.len() != list.dst.len() {
    return Err(invalid(format!(
      "edge list {k}: src has {} entries but dst has {}",
      list.src.len(),
      list.dst.len()
    )));
  }
  match list.weights {
    Weights::PerEdge(w) => {
      if w.len() != list.src.len() {
        return Err(invalid(format!(
          "edge list {k}: weight has {} entries but src has {}",
          w.len(),
          list.src.len()
        )));
      }
      if let Some(e) = w.iter().position(|x| !(x.is_finite() && *x > 0.0)) {
        return Err(invalid(format!(
          "edge list {k}: weight[{e}] = {} (weights must be finite and > 0)",
          w[e]
        )));
      }
    }
    Weights::Constant(w) => {
      if !(w.is_finite() && w > 0.0) {
        return Err(invalid(format!(
          "edge list {k}: constant weight {w} must be finite and > 0"
        )));
      }
    }
  }
  for (name, ids) in [("src", list.src), ("dst", list.dst)] {
    if let Some(e) = ids.iter().position(|&x| x as usize >= n) {
      return Err(invalid(format!(
        "edge list {k}: {name}[{e}] = {} is out of range for nodeCount {n}",
        ids[e]
      )));
    }
  }
  Ok(())
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn merges_duplicates_both_directions_and_keeps_self_loops_once() {
    let g = Graph::from_edges(4, &[0, 1, 0, 2, 3], &[1, 0, 1, 2, 0], &[1.0, 2.0, 0.5, 4.0, 1.0]).unwrap();
    assert_eq!(g.neighbours(0), &[1, 3]);
    assert_eq!(g.weights(0), &[3.5, 1.0]);
    assert_eq!(g.edge_weight(1, 0), Some(3.5));
    assert_eq!(g.neighbours(2), &[2]);
    assert_eq!(g.strength(2), 4.0);
    assert_eq!(g.degree(2), 1);
    assert_eq!(g.edge_count(), 3);
    assert_eq!(g.entry_count(), 5);
  }

  #[test]
  fn similarity_edges_add_one_or_create_weight_one() {
    let base = EdgeList::weighted(&[0, 1], &[1, 2], &[3.0, 2.0]);
    let sim = EdgeList::constant(&[1, 3, 0], &[0, 0, 3], 1.0);
    let g = Graph::from_edge_lists(4, &[base, sim]).unwrap();
    assert_eq!(g.edge_weight(0, 1), Some(4.0));
    // (3,0) and (0,3) are the same undirected pair: created with 1, then +1.
    assert_eq!(g.edge_weight(0, 3), Some(2.0));
    assert_eq!(g.edge_weight(1, 2), Some(2.0));
  }

  #[test]
  fn unbalance_adjust_clamps_by_both_degrees() {
    // star: 0 is the hub of 1,2,3; edge 3-4 as well.
    let mut g = Graph::from_edges(5, &[0, 0, 0, 3], &[1, 2, 3, 4], &[5.0, 0.1, 5.0, 5.0]).unwrap();
    g.unbalance_adjust();
    assert_eq!(g.edge_weight(0, 1), Some(1.0 / 3.0));
    assert_eq!(g.edge_weight(2, 0), Some(0.1));
    assert_eq!(g.edge_weight(3, 4), Some(0.5));
    assert_eq!(g.edge_weight(4, 3), Some(0.5));
  }

  #[test]
  fn rejects_bad_input_with_named_field() {
    let e = Graph::from_edges(2, &[0], &[2], &[1.0]).unwrap_err();
    assert!(
      e.to_string()
        .contains("dst[0] = 2 is out of range for nodeCount 2"),
      "{e}"
    );
    let e = Graph::from_edges(2, &[0], &[1], &[0.0]).unwrap_err();
    assert!(e.to_string().contains("weight[0]"), "{e}");
    let e = Graph::from_edges(2, &[0, 1], &[1], &[1.0]).unwrap_err();
    assert!(e.to_string().contains("src has 2 entries but dst has 1"), "{e}");
    let e = Graph::from_edges(2, &[0], &[1], &[f64::NAN]).unwrap_err();
    assert!(e.to_string().contains("finite"), "{e}");
  }

  #[test]
  fn rows_are_sorted_and_symmetric_bit_for_bit() {
    let mut rng = crate::rng::SplitMix64::new(31);
    let n = 50;
    let (mut s, mut d, mut w) = (vec![], vec![], vec![]);
    for _ in 0..2000 {
      // many duplicates in both directions, weights whose sum depends on the order
      s.push(rng.below(n) as u32);
      d.push(rng.below(n) as u32);
      w.push(rng.next_f64() * 1e3 + 1e-7);
    }
    let g = Graph::from_edges(n as usize, &s, &d, &w).unwrap();
    for u in 0..n as u32 {
      assert!(g.neighbours(u).windows(2).all(|p| p[0] < p[1]));
      for (v, wt) in g.row(u) {
        assert_eq!(g.edge_weight(v, u).unwrap().to_bits(), wt.to_bits());
      }
    }
    // every input edge is present and the total weight is preserved
    let total: f64 = w.iter().sum();
    let stored: f64 = (0..n as u32)
      .flat_map(|u| g.row(u).filter(move |&(v, _)| v >= u).map(|x| x.1))
      .sum();
    assert!((total - stored).abs() < 1e-6 * total);
  }

  #[test]
  fn permutation_keeps_the_graph() {
    let g = Graph::from_edges(5, &[0, 0, 1, 3, 4], &[1, 2, 2, 4, 4], &[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let order = g.locality_order();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(sorted, vec![0, 1, 2, 3, 4]);
    let p = g.permuted(&order);
    for a in 0..5u32 {
      for b in 0..5u32 {
        assert_eq!(
          p.edge_weight(a, b),
          g.edge_weight(order[a as usize], order[b as usize])
        );
      }
      assert!(p.neighbours(a).windows(2).all(|x| x[0] < x[1]));
    }
  }

  #[test]
  fn empty_graph() {
    let g = Graph::from_unweighted(3, &[], &[]).unwrap();
    assert_eq!(g.node_count(), 3);
    assert_eq!(g.entry_count(), 0);
    assert_eq!(g.degree(1), 0);
  }
}
