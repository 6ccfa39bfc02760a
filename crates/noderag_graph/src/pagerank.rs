//! Global weighted PageRank for the visualisation (docs/method.md §7.5): damping 0.85, uniform
//! teleport, the mass of dangling (isolated) nodes spread uniformly over all nodes, until
//! the L1 change is < 1e-9 or 100 iterations. Same definition as networkx's `pagerank`
//! on the undirected weighted graph (each undirected edge read in both directions).

use crate::csr::Graph;

pub const DAMPING: f64 = 0.85;
pub const TOLERANCE: f64 = 1e-9;
pub const MAX_ITER: u32 = 100;

#[derive(Clone, Debug)]
pub struct PageRank {
  pub scores: Vec<f64>,
  pub iterations: u32,
  /// Whether the L1 change fell below the tolerance (false: stopped at the cap).
  pub converged: bool,
}

pub fn pagerank(g: &Graph) -> PageRank {
  pagerank_with(g, DAMPING, TOLERANCE, MAX_ITER)
}

pub fn pagerank_with(g: &Graph, damping: f64, tolerance: f64, max_iter: u32) -> PageRank {
  let n = g.node_count();
  if n == 0 {
    return PageRank {
      scores: vec![],
      iterations: 0,
      converged: true,
    };
  }
  let inv_strength: Vec<f64> = (0..n as u32)
    .map(|u| {
      let w = g.strength(u);
      if w > 0.0 {
        1.0 / w
      } else {
        0.0
      }
    })
    .collect();
  let (offsets, nb, wt) = g.raw();
  let uniform = 1.0 / n as f64;
  let mut x = vec![uniform; n];
  let mut q = vec![0.0; n];
  let mut next = vec![0.0; n];
  let mut iterations = 0;
  let mut converged = false;
  while iterations < max_iter {
    let mut dangling = 0.0;
    for j in 0..n {
      q[j] = x[j] * inv_strength[j];
      if inv_strength[j] == 0.0 {
        dangling += x[j];
      }
    }
    let base = (1.0 - damping) * uniform + damping * dangling * uniform;
    let mut change = 0.0;
    for i in 0..n {
      let mut acc = 0.0;
      for e in offsets[i]..offsets[i + 1] {
        acc += wt[e] * q[nb[e] as usize];
      }
      let v = base + damping * acc;
      change += (v - x[i]).abs();
      next[i] = v;
    }
    std::mem::swap(&mut x, &mut next);
    iterations += 1;
    if change < tolerance {
      converged = true;
      break;
    }
  }
  PageRank {
    scores: x,
    iterations,
    converged,
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::rng::SplitMix64;

  /// Reference: solve x = (1−d)/N·1 + d·(M·x + 1·(dangling·x)/N) exactly by Gaussian
  /// elimination (no iteration at all).
  fn reference(n: usize, src: &[u32], dst: &[u32], w: &[f64], d: f64) -> Vec<f64> {
    let mut a = vec![vec![0.0; n]; n];
    for k in 0..src.len() {
      let (u, v) = (src[k] as usize, dst[k] as usize);
      a[u][v] += w[k];
      if u != v {
        a[v][u] += w[k];
      }
    }
    let strength: Vec<f64> = (0..n).map(|j| a[j].iter().sum()).collect();
    // Build (I − d·M − d/N·1·dangᵀ) x = (1−d)/N
    let mut m = vec![vec![0.0; n + 1]; n];
    for i in 0..n {
      for j in 0..n {
        let mij = if strength[j] > 0.0 {
          a[i][j] / strength[j]
        } else {
          1.0 / n as f64
        };
        m[i][j] = if i == j { 1.0 } else { 0.0 } - d * mij;
      }
      m[i][n] = (1.0 - d) / n as f64;
    }
    for c in 0..n {
      let piv = (c..n)
        .max_by(|&x, &y| m[x][c].abs().total_cmp(&m[y][c].abs()))
        .unwrap();
      m.swap(c, piv);
      for r in 0..n {
        if r != c {
          let f = m[r][c] / m[c][c];
          for k in c..=n {
            m[r][k] -= f * m[c][k];
          }
        }
      }
    }
    (0..n).map(|i| m[i][n] / m[i][i]).collect()
  }

  #[test]
  fn matches_linear_solve_reference() {
    let mut rng = SplitMix64::new(3);
    for &n in &[1usize, 2, 7, 40, 120] {
      let m = n * 2;
      let (mut s, mut d, mut w) = (vec![], vec![], vec![]);
      for _ in 0..m {
        let u = rng.below((n as u64 * 4 / 5).max(1)) as u32; // some nodes stay dangling
        s.push(u);
        d.push(rng.below((n as u64 * 4 / 5).max(1)) as u32);
        w.push(0.5 + rng.next_f64() * 4.0);
      }
      let g = Graph::from_edges(n, &s, &d, &w).unwrap();
      let pr = pagerank(&g);
      assert!(pr.converged, "n={n}");
      let want = reference(n, &s, &d, &w, DAMPING);
      let total: f64 = pr.scores.iter().sum();
      assert!((total - 1.0).abs() < 1e-9);
      for i in 0..n {
        assert!(
          (pr.scores[i] - want[i]).abs() < 1e-8,
          "n={n} i={i}: {} vs {}",
          pr.scores[i],
          want[i]
        );
      }
    }
  }

  #[test]
  fn star_center_ranks_first_and_symmetric_leaves_tie() {
    let g = Graph::from_unweighted(5, &[0, 0, 0, 0], &[1, 2, 3, 4]).unwrap();
    let pr = pagerank(&g);
    assert!(pr.scores[0] > pr.scores[1]);
    assert!((pr.scores[1] - pr.scores[4]).abs() < 1e-15);
    assert_eq!(crate::top_n(&pr.scores, 3), vec![0, 1, 2]);
  }
}
