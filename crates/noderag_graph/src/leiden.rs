//! Leiden community detection (Traag, Waltman & van Eck 2019) with the modularity objective
//! (docs/method.md §3.7): resolution 1, edge weights ignored unless asked for, nodes visited in id
//! order, seeded (the only randomness is the refinement's choice of cluster), at most 10
//! iterations, stopping early when an iteration leaves the partition unchanged.
//!
//! One iteration = fast local moving → refinement (merge singletons into well-connected
//! sub-clusters inside each community, randomised with θ = 0.01) → aggregation of the refined
//! clusters (each starting in its community) → repeat on the aggregate until local moving
//! leaves every aggregate node alone or aggregation no longer shrinks the graph.
//! The next iteration restarts from the resulting partition of the original nodes.
//!
//! Self-loops of the input are ignored (the community graph of the index has none).
//! Communities are numbered by their smallest node id.

use std::collections::VecDeque;

use crate::csr::Graph;
use crate::rng::SplitMix64;

#[derive(Clone, Copy, Debug)]
pub struct LeidenOptions {
  pub resolution: f64,
  /// Use edge weights (default false: docs/method.md §3.7 ignores them).
  pub weighted: bool,
  pub seed: u64,
  pub max_iterations: u32,
  /// θ of the refinement's randomised merge.
  pub randomness: f64,
}

impl Default for LeidenOptions {
  fn default() -> Self {
    LeidenOptions {
      resolution: 1.0,
      weighted: false,
      seed: crate::SEED,
      max_iterations: 10,
      randomness: 0.01,
    }
  }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Communities {
  /// Community of each node, numbered 0.. by smallest member id.
  pub membership: Vec<u32>,
  pub count: u32,
  pub modularity: f64,
  pub iterations: u32,
}

/// A level of the aggregation: a compact adjacency without self-loops (rows in a fixed
/// but not necessarily sorted order) plus node strengths (an aggregate node's strength
/// includes its internal edges).
struct Level {
  offsets: Vec<usize>,
  nb: Vec<u32>,
  w: Vec<f64>,
  k: Vec<f64>,
}

impl Level {
  #[inline]
  fn row(&self, u: u32) -> impl Iterator<Item = (u32, f64)> + '_ {
    let (a, b) = (self.offsets[u as usize], self.offsets[u as usize + 1]);
    self.nb[a..b].iter().copied().zip(self.w[a..b].iter().copied())
  }

  #[inline]
  fn neighbours(&self, u: u32) -> &[u32] {
    &self.nb[self.offsets[u as usize]..self.offsets[u as usize + 1]]
  }
}

pub fn leiden(input: &Graph, opts: &LeidenOptions) -> Communities {
  let n = input.node_count();
  let base = base_level(input, opts.weighted);
  let two_m: f64 = base.k.iter().sum();
  let mut membership: Vec<u32> = (0..n as u32).collect();
  let mut iterations = 0;
  if two_m > 0.0 {
    let mut rng = SplitMix64::new(opts.seed);
    while iterations < opts.max_iterations {
      iterations += 1;
      let next = canonical(&one_iteration(&base, &membership, two_m, opts, &mut rng));
      let unchanged = next == membership;
      membership = next;
      if unchanged {
        break;
      }
    }
  }
  let count = membership.iter().map(|&c| c + 1).max().unwrap_or(0);
  let modularity = modularity_of(&base, &membership, two_m, opts.resolution);
  Communities {
    membership,
    count,
    modularity,
    iterations,
  }
}

/// Modularity of a partition: Σ_c in_c/m − γ·Σ_c (K_c / 2m)² (self-loops ignored; weights
/// ignored unless `weighted`).
pub fn modularity(g: &Graph, membership: &[u32], resolution: f64, weighted: bool) -> f64 {
  let base = base_level(g, weighted);
  let two_m: f64 = base.k.iter().sum();
  modularity_of(&base, membership, two_m, resolution)
}

fn modularity_of(base: &Level, membership: &[u32], two_m: f64, gamma: f64) -> f64 {
  if two_m == 0.0 {
    return 0.0;
  }
  let n = base.k.len();
  let mut tot = vec![0.0; n];
  let mut internal = 0.0;
  for u in 0..n as u32 {
    let cu = membership[u as usize];
    tot[cu as usize] += base.k[u as usize];
    for (v, w) in base.row(u) {
      if membership[v as usize] == cu {
        internal += w; // each internal edge is seen from both ends: Σ = 2·in_c
      }
    }
  }
  internal / two_m - gamma * tot.iter().map(|t| (t / two_m) * (t / two_m)).sum::<f64>()
}

fn base_level(input: &Graph, weighted: bool) -> Level {
  let n = input.node_count();
  let mut offsets = Vec::with_capacity(n + 1);
  offsets.push(0);
  let (mut nb, mut w) = (
    Vec::with_capacity(input.entry_count()),
    Vec::with_capacity(input.entry_count()),
  );
  let mut k = vec![0.0; n];
  for u in 0..n as u32 {
    for (v, wt) in input.row(u) {
      if v != u {
        let wt = if weighted { wt } else { 1.0 };
        nb.push(v);
        w.push(wt);
        k[u as usize] += wt;
      }
    }
    offsets.push(nb.len());
  }
  Level { offsets, nb, w, k }
}

/// Renumbers communities by smallest member id.
fn canonical(membership: &[u32]) -> Vec<u32> {
  let mut map = vec![u32::MAX; membership.len()];
  let mut next = 0;
  membership
    .iter()
    .map(|&c| {
      if map[c as usize] == u32::MAX {
        map[c as usize] = next;
        next += 1;
      }
      map[c as usize]
    })
    .collect()
}

fn one_iteration(
  base: &Level,
  start: &[u32],
  two_m: f64,
  opts: &LeidenOptions,
  rng: &mut SplitMix64,
) -> Vec<u32> {
  let gamma = opts.resolution;
  let n = base.k.len();
  // node_map: original node → node of the current level.
  let mut node_map: Vec<u32> = (0..n as u32).collect();
  let mut comm = canonical(start);
  let mut owned: Option<Level> = None;
  loop {
    let level = owned.as_ref().unwrap_or(base);
    let ln = level.k.len();
    move_nodes_fast(level, &mut comm, two_m, gamma);
    comm = canonical(&comm);
    let n_comms = comm.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    if n_comms == ln {
      break;
    }
    let refined = canonical(&refine(level, &comm, two_m, gamma, opts.randomness, rng));
    let n_refined = refined.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    if n_refined == ln {
      break; // refinement merged nothing: aggregation would not shrink the graph
    }
    let aggregate = aggregate(level, &refined, n_refined);
    // Each refined cluster starts in the community of its members.
    let mut next_comm = vec![0u32; n_refined];
    for v in 0..ln {
      next_comm[refined[v] as usize] = comm[v];
    }
    for m in &mut node_map {
      *m = refined[*m as usize];
    }
    comm = next_comm;
    owned = Some(aggregate);
  }
  node_map.iter().map(|&v| comm[v as usize]).collect()
}

/// Fast local moving: a queue of nodes (initially all, in id order); each node moves to the
/// neighbouring (or an empty) community of largest modularity gain, if strictly better than
/// staying; neighbours outside its new community are queued again.
fn move_nodes_fast(level: &Level, comm: &mut [u32], two_m: f64, gamma: f64) {
  let n = level.k.len();
  let mut tot = vec![0.0; n];
  let mut size = vec![0u32; n];
  for v in 0..n {
    tot[comm[v] as usize] += level.k[v];
    size[comm[v] as usize] += 1;
  }
  let mut empty: Vec<u32> = (0..n as u32).rev().filter(|&c| size[c as usize] == 0).collect();
  let mut queue: VecDeque<u32> = (0..n as u32).collect();
  let mut queued = vec![true; n];
  let mut to_comm = vec![0.0; n];
  let mut touched: Vec<u32> = Vec::new();
  while let Some(v) = queue.pop_front() {
    let v_ = v as usize;
    queued[v_] = false;
    let cv = comm[v_];
    let kv = level.k[v_];
    for (u, w) in level.row(v) {
      let c = comm[u as usize];
      if to_comm[c as usize] == 0.0 {
        touched.push(c);
      }
      to_comm[c as usize] += w;
    }
    tot[cv as usize] -= kv;
    size[cv as usize] -= 1;
    let mut best = cv;
    let mut best_gain = to_comm[cv as usize] - gamma * kv * tot[cv as usize] / two_m;
    for &c in &touched {
      if c != cv {
        let gain = to_comm[c as usize] - gamma * kv * tot[c as usize] / two_m;
        if gain > best_gain {
          best = c;
          best_gain = gain;
        }
      }
    }
    if best_gain < 0.0 && size[cv as usize] > 0 {
      // An empty community (gain 0) beats every neighbour.
      best = empty.pop().expect("n nodes always leave an empty label");
    }
    tot[best as usize] += kv;
    size[best as usize] += 1;
    comm[v_] = best;
    if best != cv {
      if size[cv as usize] == 0 {
        empty.push(cv);
      }
      for &u in level.neighbours(v) {
        if comm[u as usize] != best && !queued[u as usize] {
          queued[u as usize] = true;
          queue.push_back(u);
        }
      }
    }
    for &c in &touched {
      to_comm[c as usize] = 0.0;
    }
    touched.clear();
  }
}

/// Refinement: inside each community S, start from singletons; each well-connected
/// singleton v (in id order) joins a well-connected cluster C ⊆ S chosen at random with
/// Pr ∝ exp(gain/θ) among those with gain ≥ 0 (staying alone has gain 0).
fn refine(level: &Level, comm: &[u32], two_m: f64, gamma: f64, theta: f64, rng: &mut SplitMix64) -> Vec<u32> {
  let n = level.k.len();
  let k = &level.k;
  let mut r: Vec<u32> = (0..n as u32).collect();
  let mut rtot = k.clone();
  let mut rsize = vec![1u32; n];
  // ext[c] = weight between refined cluster c and the rest of its community.
  let mut ext = vec![0.0; n];
  let mut stot = vec![0.0; n];
  for v in 0..n as u32 {
    stot[comm[v as usize] as usize] += k[v as usize];
    for (u, w) in level.row(v) {
      if comm[u as usize] == comm[v as usize] {
        ext[v as usize] += w;
      }
    }
  }
  let mut to_cluster = vec![0.0; n];
  let mut touched: Vec<u32> = Vec::new();
  let mut candidates: Vec<(u32, f64)> = Vec::new();
  for v in 0..n as u32 {
    let v_ = v as usize;
    let c = comm[v_];
    let s_tot = stot[c as usize];
    let own = r[v_];
    if rsize[own as usize] != 1 || ext[own as usize] < gamma * k[v_] * (s_tot - k[v_]) / two_m {
      continue;
    }
    for (u, w) in level.row(v) {
      if comm[u as usize] == c {
        let rc = r[u as usize];
        if to_cluster[rc as usize] == 0.0 {
          touched.push(rc);
        }
        to_cluster[rc as usize] += w;
      }
    }
    candidates.clear();
    candidates.push((own, 0.0));
    for &rc in &touched {
      if rc == own {
        continue;
      }
      let t = rtot[rc as usize];
      let well_connected = ext[rc as usize] >= gamma * t * (s_tot - t) / two_m;
      let gain = to_cluster[rc as usize] - gamma * k[v_] * t / two_m;
      if well_connected && gain >= 0.0 {
        candidates.push((rc, gain));
      }
    }
    if candidates.len() > 1 {
      let max_gain = candidates.iter().map(|c| c.1).fold(f64::NEG_INFINITY, f64::max);
      let weights: Vec<f64> = candidates
        .iter()
        .map(|c| ((c.1 - max_gain) / theta).exp())
        .collect();
      let total: f64 = weights.iter().sum();
      let mut x = rng.next_f64() * total;
      let mut chosen = candidates[candidates.len() - 1].0;
      for (cand, w) in candidates.iter().zip(&weights) {
        if x < *w {
          chosen = cand.0;
          break;
        }
        x -= w;
      }
      if chosen != own {
        let ext_v = ext[own as usize];
        r[v_] = chosen;
        rtot[chosen as usize] += k[v_];
        rtot[own as usize] = 0.0;
        rsize[chosen as usize] += 1;
        rsize[own as usize] = 0;
        ext[chosen as usize] += ext_v - 2.0 * to_cluster[chosen as usize];
      }
    }
    for &rc in &touched {
      to_cluster[rc as usize] = 0.0;
    }
    touched.clear();
  }
  r
}

/// Collapses each refined cluster into one node; internal edges vanish (their weight stays
/// in the node strength), parallel edges are summed.
fn aggregate(level: &Level, refined: &[u32], count: usize) -> Level {
  let n = level.k.len();
  // Members of each cluster, in id order (counting sort).
  let mut start = vec![0usize; count + 1];
  for &c in refined {
    start[c as usize + 1] += 1;
  }
  for c in 0..count {
    start[c + 1] += start[c];
  }
  let mut members = vec![0u32; n];
  let mut fill = start.clone();
  for v in 0..n {
    let c = refined[v] as usize;
    members[fill[c]] = v as u32;
    fill[c] += 1;
  }
  let mut k = vec![0.0; count];
  let mut offsets = Vec::with_capacity(count + 1);
  offsets.push(0);
  let (mut nb, mut w) = (Vec::new(), Vec::new());
  let mut acc = vec![0.0f64; count];
  let mut touched: Vec<u32> = Vec::new();
  for a in 0..count {
    for &v in &members[start[a]..start[a + 1]] {
      k[a] += level.k[v as usize];
      for (u, wt) in level.row(v) {
        let b = refined[u as usize];
        if b as usize != a {
          if acc[b as usize] == 0.0 {
            touched.push(b);
          }
          acc[b as usize] += wt;
        }
      }
    }
    // Neighbours in order of first contact: fixed for a given input, no sort needed.
    for &b in &touched {
      nb.push(b);
      w.push(acc[b as usize]);
      acc[b as usize] = 0.0;
    }
    touched.clear();
    offsets.push(nb.len());
  }
  Level { offsets, nb, w, k }
}

#[cfg(test)]
mod tests {
  use super::*;

  /// Zachary's karate club, the 78 edges (0-based, as in networkx).
  pub(crate) const KARATE: [(u32, u32); 78] = [
    (0, 1),
    (0, 2),
    (0, 3),
    (0, 4),
    (0, 5),
    (0, 6),
    (0, 7),
    (0, 8),
    (0, 10),
    (0, 11),
    (0, 12),
    (0, 13),
    (0, 17),
    (0, 19),
    (0, 21),
    (0, 31),
    (1, 2),
    (1, 3),
    (1, 7),
    (1, 13),
    (1, 17),
    (1, 19),
    (1, 21),
    (1, 30),
    (2, 3),
    (2, 7),
    (2, 8),
    (2, 9),
    (2, 13),
    (2, 27),
    (2, 28),
    (2, 32),
    (3, 7),
    (3, 12),
    (3, 13),
    (4, 6),
    (4, 10),
    (5, 6),
    (5, 10),
    (5, 16),
    (6, 16),
    (8, 30),
    (8, 32),
    (8, 33),
    (9, 33),
    (13, 33),
    (14, 32),
    (14, 33),
    (15, 32),
    (15, 33),
    (18, 32),
    (18, 33),
    (19, 33),
    (20, 32),
    (20, 33),
    (22, 32),
    (22, 33),
    (23, 25),
    (23, 27),
    (23, 29),
    (23, 32),
    (23, 33),
    (24, 25),
    (24, 27),
    (24, 31),
    (25, 31),
    (26, 29),
    (26, 33),
    (27, 33),
    (28, 31),
    (28, 33),
    (29, 32),
    (29, 33),
    (30, 32),
    (30, 33),
    (31, 32),
    (31, 33),
    (32, 33),
  ];

  fn karate() -> Graph {
    let (s, d): (Vec<u32>, Vec<u32>) = KARATE.iter().copied().unzip();
    Graph::from_unweighted(34, &s, &d).unwrap()
  }

  fn is_connected_within(g: &Graph, membership: &[u32], c: u32) -> bool {
    let members: Vec<u32> = (0..g.node_count() as u32)
      .filter(|&v| membership[v as usize] == c)
      .collect();
    let mut seen = vec![false; g.node_count()];
    let mut stack = vec![members[0]];
    seen[members[0] as usize] = true;
    let mut count = 1;
    while let Some(u) = stack.pop() {
      for &v in g.neighbours(u) {
        if membership[v as usize] == c && !seen[v as usize] {
          seen[v as usize] = true;
          count += 1;
          stack.push(v);
        }
      }
    }
    count == members.len()
  }

  #[test]
  fn karate_club_modularity_and_determinism() {
    let g = karate();
    assert_eq!(g.edge_count(), 78);
    assert_eq!(g.degree(33), 17);
    let a = leiden(&g, &LeidenOptions::default());
    assert!(a.modularity >= 0.41, "modularity {}", a.modularity);
    assert!((a.modularity - modularity(&g, &a.membership, 1.0, false)).abs() < 1e-12);
    assert!((3..=5).contains(&a.count), "{}", a.count);
    for c in 0..a.count {
      assert!(is_connected_within(&g, &a.membership, c));
    }
    assert_eq!(a, leiden(&g, &LeidenOptions::default()));
    assert_eq!(a.membership[0], 0); // numbered by smallest member
  }

  #[test]
  fn ring_of_cliques_is_split_into_its_cliques() {
    let (cliques, size) = (8u32, 6u32);
    let (mut s, mut d) = (vec![], vec![]);
    for c in 0..cliques {
      for i in 0..size {
        for j in i + 1..size {
          s.push(c * size + i);
          d.push(c * size + j);
        }
      }
      s.push(c * size);
      d.push(((c + 1) % cliques) * size + 1);
    }
    let g = Graph::from_unweighted((cliques * size) as usize, &s, &d).unwrap();
    let r = leiden(&g, &LeidenOptions::default());
    assert_eq!(r.count, cliques);
    for v in 0..cliques * size {
      assert_eq!(r.membership[v as usize], v / size);
    }
  }

  #[test]
  fn random_graphs_give_connected_communities_and_beat_singletons() {
    let mut rng = SplitMix64::new(77);
    for rep in 0..5 {
      let n = 200;
      let (mut s, mut d, mut w) = (vec![], vec![], vec![]);
      for _ in 0..600 {
        // planted groups of 20 with mostly internal edges
        let u = rng.below(n) as u32;
        let v = if rng.below(5) == 0 {
          rng.below(n) as u32
        } else {
          (u / 20) * 20 + rng.below(20) as u32
        };
        s.push(u);
        d.push(v);
        w.push(1.0 + rng.below(3) as f64);
      }
      let g = Graph::from_edges(n as usize, &s, &d, &w).unwrap();
      for weighted in [false, true] {
        let opts = LeidenOptions {
          weighted,
          ..Default::default()
        };
        let r = leiden(&g, &opts);
        assert!(r.modularity > 0.5, "rep {rep}: {}", r.modularity);
        assert!(r.iterations <= 10);
        for c in 0..r.count {
          assert!(
            is_connected_within(&g, &r.membership, c),
            "rep {rep} community {c}"
          );
        }
        assert_eq!(r, leiden(&g, &opts));
      }
    }
  }

  #[test]
  fn edgeless_graph_keeps_singletons() {
    let g = Graph::from_unweighted(3, &[], &[]).unwrap();
    let r = leiden(&g, &LeidenOptions::default());
    assert_eq!(r.membership, vec![0, 1, 2]);
    assert_eq!(r.modularity, 0.0);
  }
}
