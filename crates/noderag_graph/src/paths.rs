//! Shortest paths with edge length 1 / weight (strong edges are short), and the
//! visualisation's connection of a node selection (docs/method.md §7.5).
//!
//! [`PathFinder::shortest_path`] is a set-to-set bidirectional Dijkstra: all sources start
//! at distance 0 in the forward search, all targets at 0 in the backward search (the graph
//! is undirected, so both walk the same rows). It stops when the two heap minima add up to
//! at least the best meeting distance found. Its scratch arrays are stamped with an epoch,
//! so repeated searches on a big graph cost what they explore, not O(N) each.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::csr::Graph;
use crate::error::{invalid, Result};

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug, PartialEq)]
pub struct Path {
  /// From a source to a target, both included.
  pub nodes: Vec<u32>,
  /// Σ 1/w along the path.
  pub length: f64,
}

/// Heap key: non-negative finite f64 distances order like their bit patterns; ties by node.
type Key = Reverse<(u64, u32)>;

pub struct PathFinder<'g> {
  g: &'g Graph,
  dist: [Vec<f64>; 2],
  pred: [Vec<u32>; 2],
  stamp: [Vec<u32>; 2],
  epoch: u32,
  heaps: [BinaryHeap<Key>; 2],
}

impl<'g> PathFinder<'g> {
  pub fn new(g: &'g Graph) -> Self {
    let n = g.node_count();
    PathFinder {
      g,
      dist: [vec![0.0; n], vec![0.0; n]],
      pred: [vec![NONE; n], vec![NONE; n]],
      stamp: [vec![0; n], vec![0; n]],
      epoch: 0,
      heaps: [BinaryHeap::new(), BinaryHeap::new()],
    }
  }

  #[inline]
  fn known(&self, side: usize, v: u32) -> bool {
    self.stamp[side][v as usize] == self.epoch
  }

  #[inline]
  fn label(&mut self, side: usize, v: u32, d: f64, pred: u32) {
    let v_ = v as usize;
    self.stamp[side][v_] = self.epoch;
    self.dist[side][v_] = d;
    self.pred[side][v_] = pred;
    self.heaps[side].push(Reverse((d.to_bits(), v)));
  }

  /// Shortest path from any of `sources` to any of `targets`, or None when no target is
  /// reachable. Ids must be < node count (checked by the public entry points).
  pub fn shortest_path(&mut self, sources: &[u32], targets: &[u32]) -> Option<Path> {
    self.epoch = self.epoch.wrapping_add(1);
    if self.epoch == 0 {
      for s in &mut self.stamp {
        s.fill(0);
      }
      self.epoch = 1;
    }
    self.heaps[0].clear();
    self.heaps[1].clear();
    for &s in sources {
      if !self.known(0, s) {
        self.label(0, s, 0.0, NONE);
      }
    }
    for &t in targets {
      if self.known(0, t) {
        return Some(Path {
          nodes: vec![t],
          length: 0.0,
        });
      }
      if !self.known(1, t) {
        self.label(1, t, 0.0, NONE);
      }
    }
    let mut best = f64::INFINITY;
    let mut meet = NONE;
    loop {
      let top = |h: &BinaryHeap<Key>| {
        h.peek()
          .map_or(f64::INFINITY, |Reverse((d, _))| f64::from_bits(*d))
      };
      let (tf, tb) = (top(&self.heaps[0]), top(&self.heaps[1]));
      if tf + tb >= best {
        break;
      }
      let side = if tf <= tb { 0 } else { 1 };
      let other = 1 - side;
      let Reverse((bits, u)) = self.heaps[side].pop().expect("non-empty: its minimum is finite");
      let d = f64::from_bits(bits);
      if d > self.dist[side][u as usize] {
        continue; // stale entry
      }
      let g = self.g;
      for (v, w) in g.row(u) {
        let nd = d + 1.0 / w;
        if !self.known(side, v) || nd < self.dist[side][v as usize] {
          self.label(side, v, nd, u);
          if self.known(other, v) {
            let through = nd + self.dist[other][v as usize];
            if through < best {
              best = through;
              meet = v;
            }
          }
        }
      }
    }
    if meet == NONE {
      return None;
    }
    let mut nodes = Vec::new();
    let mut v = meet;
    while v != NONE {
      nodes.push(v);
      v = self.pred[0][v as usize];
    }
    nodes.reverse();
    let mut v = self.pred[1][meet as usize];
    while v != NONE {
      nodes.push(v);
      v = self.pred[1][v as usize];
    }
    Some(Path { nodes, length: best })
  }
}

/// One search between two node sets (ids validated).
pub fn shortest_path(g: &Graph, sources: &[u32], targets: &[u32]) -> Result<Option<Path>> {
  check_ids(g, "sources", sources)?;
  check_ids(g, "targets", targets)?;
  Ok(PathFinder::new(g).shortest_path(sources, targets))
}

/// Plain multi-source Dijkstra: distance (Σ 1/w) from the nearest source to every node,
/// infinity when unreachable.
pub fn distances(g: &Graph, sources: &[u32]) -> Result<Vec<f64>> {
  check_ids(g, "sources", sources)?;
  let mut dist = vec![f64::INFINITY; g.node_count()];
  let mut heap: BinaryHeap<Key> = BinaryHeap::new();
  for &s in sources {
    dist[s as usize] = 0.0;
    heap.push(Reverse((0f64.to_bits(), s)));
  }
  while let Some(Reverse((bits, u))) = heap.pop() {
    let d = f64::from_bits(bits);
    if d > dist[u as usize] {
      continue;
    }
    for (v, w) in g.row(u) {
      let nd = d + 1.0 / w;
      if nd < dist[v as usize] {
        dist[v as usize] = nd;
        heap.push(Reverse((nd.to_bits(), v)));
      }
    }
  }
  Ok(dist)
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Connection {
  /// Linking nodes outside the selection, in the order they were added.
  pub added: Vec<u32>,
  /// The best node of each component that no path could join (the graph is disconnected).
  pub unreachable: Vec<u32>,
  /// Components of the subgraph induced by the selection, before joining.
  pub component_count: u32,
}

/// docs/method.md §7.5 connect: `selection` is in rank order (best first, distinct). The
/// component of the induced subgraph holding `selection[0]` starts the connected set S;
/// every other component, in order of its best node, is joined to S by one set-to-set
/// bidirectional Dijkstra on the full graph; the path's nodes join S. No pair loop: one
/// search per component.
pub fn connect(g: &Graph, selection: &[u32]) -> Result<Connection> {
  check_ids(g, "selection", selection)?;
  let n = g.node_count();
  const OUT: u32 = u32::MAX;
  let mut rank = vec![OUT; n];
  for (k, &v) in selection.iter().enumerate() {
    if rank[v as usize] != OUT {
      return Err(invalid(format!("selection[{k}] = {v} is a duplicate")));
    }
    rank[v as usize] = k as u32;
  }
  // Components of the induced subgraph, discovered in selection order.
  let mut comp_of = vec![OUT; selection.len()];
  let mut components: Vec<Vec<u32>> = Vec::new();
  for (k, &start) in selection.iter().enumerate() {
    if comp_of[k] != OUT {
      continue;
    }
    let c = components.len() as u32;
    comp_of[k] = c;
    let mut members = vec![start];
    let mut head = 0;
    while head < members.len() {
      let u = members[head];
      head += 1;
      for &v in g.neighbours(u) {
        let r = rank[v as usize];
        if r != OUT && comp_of[r as usize] == OUT {
          comp_of[r as usize] = c;
          members.push(v);
        }
      }
    }
    components.push(members);
  }
  let mut out = Connection {
    component_count: components.len() as u32,
    ..Default::default()
  };
  if components.is_empty() {
    return Ok(out);
  }
  let mut in_s = vec![false; n];
  let mut s_list: Vec<u32> = Vec::new();
  let join = |v: u32, in_s: &mut Vec<bool>, s_list: &mut Vec<u32>| {
    if !in_s[v as usize] {
      in_s[v as usize] = true;
      s_list.push(v);
    }
  };
  for &v in &components[0] {
    join(v, &mut in_s, &mut s_list);
  }
  let mut finder = PathFinder::new(g);
  for comp in &components[1..] {
    // An earlier path may already run through this component.
    let path = if comp.iter().any(|&v| in_s[v as usize]) {
      Some(Path {
        nodes: vec![],
        length: 0.0,
      })
    } else {
      finder.shortest_path(comp, &s_list)
    };
    match path {
      Some(path) => {
        for &v in &path.nodes {
          if !in_s[v as usize] && rank[v as usize] == OUT {
            out.added.push(v);
          }
          join(v, &mut in_s, &mut s_list);
        }
        for &v in comp {
          join(v, &mut in_s, &mut s_list);
        }
      }
      None => out.unreachable.push(comp[0]),
    }
  }
  Ok(out)
}

fn check_ids(g: &Graph, name: &str, ids: &[u32]) -> Result<()> {
  let n = g.node_count();
  match ids.iter().position(|&v| v as usize >= n) {
    Some(k) => Err(invalid(format!(
      "{name}[{k}] = {} is out of range for {n} nodes",
      ids[k]
    ))),
    None => Ok(()),
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::rng::SplitMix64;

  fn random_graph(rng: &mut SplitMix64, n: usize, m: usize) -> Graph {
    let (mut s, mut d, mut w) = (vec![], vec![], vec![]);
    for _ in 0..m {
      s.push(rng.below(n as u64) as u32);
      d.push(rng.below(n as u64) as u32);
      w.push(1.0 + rng.below(5) as f64); // few distinct lengths: many equal-length paths
    }
    Graph::from_edges(n, &s, &d, &w).unwrap()
  }

  fn check_path(g: &Graph, p: &Path, sources: &[u32], targets: &[u32]) {
    assert!(sources.contains(p.nodes.first().unwrap()));
    assert!(targets.contains(p.nodes.last().unwrap()));
    let mut len = 0.0;
    for pair in p.nodes.windows(2) {
      len += 1.0
        / g
          .edge_weight(pair[0], pair[1])
          .expect("consecutive nodes are adjacent");
    }
    assert!((len - p.length).abs() < 1e-9, "{len} vs {}", p.length);
  }

  #[test]
  fn bidirectional_equals_plain_dijkstra_on_random_graphs() {
    let mut rng = SplitMix64::new(11);
    let mut found = 0;
    for &(n, m) in &[(2usize, 1usize), (10, 12), (60, 70), (200, 400), (500, 600)] {
      let g = random_graph(&mut rng, n, m);
      let mut finder = PathFinder::new(&g);
      for _ in 0..40 {
        let ns = 1 + rng.below(3) as usize;
        let nt = 1 + rng.below(3) as usize;
        let sources: Vec<u32> = (0..ns).map(|_| rng.below(n as u64) as u32).collect();
        let targets: Vec<u32> = (0..nt).map(|_| rng.below(n as u64) as u32).collect();
        let dist = distances(&g, &sources).unwrap();
        let want = targets
          .iter()
          .map(|&t| dist[t as usize])
          .fold(f64::INFINITY, f64::min);
        match finder.shortest_path(&sources, &targets) {
          Some(p) => {
            assert!((p.length - want).abs() < 1e-9, "n={n}: {} vs {want}", p.length);
            check_path(&g, &p, &sources, &targets);
            found += 1;
          }
          None => assert!(want.is_infinite(), "n={n}: missed a path of length {want}"),
        }
      }
    }
    assert!(found > 100);
  }

  #[test]
  fn strong_edges_are_short() {
    // 0-1-2-4 with weight 10 each (length 0.3) vs 0-3-4 with weight 1 (length 2).
    let g = Graph::from_edges(
      5,
      &[0, 1, 2, 0, 3],
      &[1, 2, 4, 3, 4],
      &[10.0, 10.0, 10.0, 1.0, 1.0],
    )
    .unwrap();
    let p = shortest_path(&g, &[0], &[4]).unwrap().unwrap();
    assert_eq!(p.nodes, vec![0, 1, 2, 4]);
    let c = connect(&g, &[0, 4]).unwrap();
    assert_eq!(
      c,
      Connection {
        added: vec![2, 1],
        unreachable: vec![],
        component_count: 2
      }
    );
  }

  #[test]
  fn connect_handles_connected_selection_and_disconnected_graphs() {
    let g = Graph::from_unweighted(7, &[0, 1, 2, 4], &[1, 2, 3, 5]).unwrap();
    // already connected: nothing added
    assert_eq!(
      connect(&g, &[1, 0, 2]).unwrap(),
      Connection {
        added: vec![],
        unreachable: vec![],
        component_count: 1
      }
    );
    // 5 and 6 cannot reach {0}; 3 joins through 1, 2
    let c = connect(&g, &[0, 5, 3, 6]).unwrap();
    assert_eq!(c.added, vec![2, 1]); // path order, from 3 towards S
    assert_eq!(c.unreachable, vec![5, 6]);
    assert_eq!(c.component_count, 4);
    assert!(connect(&g, &[0, 0])
      .unwrap_err()
      .to_string()
      .contains("duplicate"));
    assert!(connect(&g, &[9]).is_err());
    assert_eq!(connect(&g, &[]).unwrap(), Connection::default());
  }

  #[test]
  fn connect_yields_a_connected_subgraph_on_random_graphs() {
    let mut rng = SplitMix64::new(21);
    for rep in 0..20 {
      let n = 300;
      let mut g_edges: (Vec<u32>, Vec<u32>) = ((1..n as u32).collect(), vec![]);
      // a random spanning tree keeps the graph connected, plus random extra edges
      g_edges.1 = (1..n as u32).map(|v| rng.below(v as u64) as u32).collect();
      for _ in 0..200 {
        g_edges.0.push(rng.below(n as u64) as u32);
        g_edges.1.push(rng.below(n as u64) as u32);
      }
      let w: Vec<f64> = g_edges.0.iter().map(|_| 1.0 + rng.below(4) as f64).collect();
      let g = Graph::from_edges(n, &g_edges.0, &g_edges.1, &w).unwrap();
      let mut sel: Vec<u32> = (0..n as u32).collect();
      rng.shuffle(&mut sel);
      sel.truncate(5 + rep * 3);
      let c = connect(&g, &sel).unwrap();
      assert!(c.unreachable.is_empty());
      let mut keep = vec![false; n];
      for &v in sel.iter().chain(&c.added) {
        keep[v as usize] = true;
      }
      // BFS inside the kept nodes reaches all of them
      let mut seen = vec![false; n];
      let mut stack = vec![sel[0]];
      seen[sel[0] as usize] = true;
      let mut count = 1;
      while let Some(u) = stack.pop() {
        for &v in g.neighbours(u) {
          if keep[v as usize] && !seen[v as usize] {
            seen[v as usize] = true;
            count += 1;
            stack.push(v);
          }
        }
      }
      assert_eq!(count, sel.len() + c.added.len(), "rep {rep}");
    }
  }
}
