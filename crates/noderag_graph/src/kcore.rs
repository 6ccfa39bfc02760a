//! Core numbers by degree peeling (Batagelj–Zaversnik bucket algorithm, O(N + E)).
//! Weights are ignored (docs/method.md §3.5); a self-loop is ignored too (it would make a node
//! its own neighbour; the core graph of the index has none).

use crate::csr::Graph;

/// `core[v]` = the largest k such that v belongs to the k-core (the maximal subgraph in
/// which every node has at least k neighbours).
pub fn core_numbers(g: &Graph) -> Vec<u32> {
  let n = g.node_count();
  let mut deg: Vec<u32> = (0..n as u32)
    .map(|u| (g.degree(u) - usize::from(g.has_self_loop(u))) as u32)
    .collect();
  let max_deg = deg.iter().copied().max().unwrap_or(0) as usize;
  // Bucket sort nodes by degree: `order` holds nodes by ascending degree, `pos[v]` is
  // v's place in it and `bin[d]` the first place of degree d.
  let mut bin = vec![0usize; max_deg + 2];
  for &d in &deg {
    bin[d as usize + 1] += 1;
  }
  for d in 1..bin.len() {
    bin[d] += bin[d - 1];
  }
  let mut pos = vec![0usize; n];
  let mut order = vec![0u32; n];
  let mut fill = bin.clone();
  for v in 0..n {
    let d = deg[v] as usize;
    pos[v] = fill[d];
    order[fill[d]] = v as u32;
    fill[d] += 1;
  }
  for i in 0..n {
    let v = order[i];
    for &u in g.neighbours(v) {
      let u = u as usize;
      if u != v as usize && deg[u] > deg[v as usize] {
        // Move u to the front of its bin, then shrink its degree by one.
        let du = deg[u] as usize;
        let pu = pos[u];
        let pw = bin[du];
        let w = order[pw] as usize;
        if u != w {
          order.swap(pu, pw);
          pos[u] = pw;
          pos[w] = pu;
        }
        bin[du] += 1;
        deg[u] -= 1;
      }
    }
  }
  deg
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::rng::SplitMix64;

  /// Brute force: for each k, peel nodes of degree < k until none is left to peel.
  fn brute_force(n: usize, adj: &[Vec<bool>]) -> Vec<u32> {
    let mut core = vec![0u32; n];
    for k in 1..=n as u32 {
      let mut alive = vec![true; n];
      loop {
        let mut changed = false;
        for v in 0..n {
          if alive[v] {
            let d = (0..n).filter(|&u| u != v && alive[u] && adj[v][u]).count() as u32;
            if d < k {
              alive[v] = false;
              changed = true;
            }
          }
        }
        if !changed {
          break;
        }
      }
      for v in 0..n {
        if alive[v] {
          core[v] = k;
        }
      }
    }
    core
  }

  #[test]
  fn matches_brute_force_on_random_graphs() {
    let mut rng = SplitMix64::new(8);
    for &(n, m) in &[
      (1usize, 0usize),
      (5, 6),
      (20, 40),
      (40, 200),
      (60, 150),
      (80, 600),
    ] {
      for _ in 0..4 {
        let (mut s, mut d) = (vec![], vec![]);
        let mut adj = vec![vec![false; n]; n];
        for _ in 0..m {
          let (u, v) = (rng.below(n as u64) as u32, rng.below(n as u64) as u32);
          s.push(u);
          d.push(v);
          adj[u as usize][v as usize] = true;
          adj[v as usize][u as usize] = true;
        }
        let g = Graph::from_unweighted(n, &s, &d).unwrap();
        assert_eq!(core_numbers(&g), brute_force(n, &adj), "n={n} m={m}");
      }
    }
  }

  #[test]
  fn clique_with_tail() {
    // K4 on 0..3, tail 3-4-5
    let g = Graph::from_unweighted(6, &[0, 0, 0, 1, 1, 2, 3, 4], &[1, 2, 3, 2, 3, 3, 4, 5]).unwrap();
    assert_eq!(core_numbers(&g), vec![3, 3, 3, 3, 1, 1]);
  }
}
