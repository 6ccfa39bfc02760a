//! Betweenness centrality (Brandes), unweighted and undirected (docs/method.md §3.5): exact for
//! N ≤ 5,000, otherwise accumulated from 500 pivots drawn without replacement by a seeded
//! shuffle of the ids in ascending order (the first 500 after shuffling).
//!
//! Scale: like networkx, undirected values are halved (each pair is seen from both ends);
//! sampled values are multiplied by N / pivots so they estimate the exact ones.
//!
//! The sources are split into a FIXED number of chunks, each accumulated separately and
//! then added in chunk order, so results are bit-identical whatever the thread count.

use crate::csr::Graph;
use crate::rng::SplitMix64;

pub const EXACT_LIMIT: usize = 5000;
pub const PIVOTS: usize = 500;
const CHUNKS: usize = 16;

/// Betweenness per docs/method.md §3.5 (exact or 500 seeded pivots).
pub fn betweenness(g: &Graph, seed: u64) -> Vec<f64> {
  let n = g.node_count();
  if n <= EXACT_LIMIT {
    betweenness_from(g, &(0..n as u32).collect::<Vec<_>>())
  } else {
    betweenness_from(g, &pivots(n, PIVOTS, seed))
  }
}

/// The `k` pivots: shuffle 0..n (ascending) with SplitMix64(seed), keep the first k.
pub fn pivots(n: usize, k: usize, seed: u64) -> Vec<u32> {
  let mut ids: Vec<u32> = (0..n as u32).collect();
  SplitMix64::new(seed).shuffle(&mut ids);
  ids.truncate(k.min(n));
  ids
}

/// Brandes accumulation from the given sources, halved, scaled by N / |sources|.
pub fn betweenness_from(g: &Graph, sources: &[u32]) -> Vec<f64> {
  let n = g.node_count();
  if n == 0 || sources.is_empty() {
    return vec![0.0; n];
  }
  let chunk_len = sources.len().div_ceil(CHUNKS);
  let chunks: Vec<&[u32]> = sources.chunks(chunk_len).collect();
  let threads = std::thread::available_parallelism()
    .map_or(1, |p| p.get())
    .min(chunks.len());
  let mut partials: Vec<Option<Vec<f64>>> = vec![None; chunks.len()];
  if threads <= 1 || n * sources.len() < 200_000 {
    for (k, c) in chunks.iter().enumerate() {
      partials[k] = Some(accumulate(g, c));
    }
  } else {
    // Thread t takes chunks t, t + threads, …; the sum below is in chunk order anyway.
    std::thread::scope(|scope| {
      let handles: Vec<_> = (0..threads)
        .map(|t| {
          let chunks = &chunks;
          scope.spawn(move || {
            (t..chunks.len())
              .step_by(threads)
              .map(|k| (k, accumulate(g, chunks[k])))
              .collect::<Vec<_>>()
          })
        })
        .collect();
      for h in handles {
        for (k, part) in h.join().expect("betweenness worker panicked") {
          partials[k] = Some(part);
        }
      }
    });
  }
  let mut bc = vec![0.0; n];
  for part in partials.into_iter().flatten() {
    for (b, p) in bc.iter_mut().zip(part) {
      *b += p;
    }
  }
  let scale = 0.5 * n as f64 / sources.len() as f64;
  for b in &mut bc {
    *b *= scale;
  }
  bc
}

/// Σ over `sources` of the Brandes dependencies δ_s(v).
fn accumulate(g: &Graph, sources: &[u32]) -> Vec<f64> {
  let n = g.node_count();
  let mut bc = vec![0.0; n];
  let mut sigma = vec![0.0f64; n];
  let mut dist = vec![u32::MAX; n];
  let mut delta = vec![0.0f64; n];
  let mut order: Vec<u32> = Vec::with_capacity(n);
  for &s in sources {
    // BFS from s, counting shortest paths; `order` is the visit order (non-decreasing dist).
    order.clear();
    sigma[s as usize] = 1.0;
    dist[s as usize] = 0;
    order.push(s);
    let mut head = 0;
    while head < order.len() {
      let v = order[head];
      head += 1;
      let dv = dist[v as usize];
      for &w in g.neighbours(v) {
        let w_ = w as usize;
        if dist[w_] == u32::MAX {
          dist[w_] = dv + 1;
          order.push(w);
        }
        if dist[w_] == dv + 1 {
          sigma[w_] += sigma[v as usize];
        }
      }
    }
    // Dependencies in reverse BFS order; predecessors of w are its neighbours one level up.
    for &w in order.iter().rev() {
      let w_ = w as usize;
      let coeff = (1.0 + delta[w_]) / sigma[w_];
      let dw = dist[w_];
      for &v in g.neighbours(w) {
        let v_ = v as usize;
        if dw > 0 && dist[v_] == dw - 1 {
          delta[v_] += sigma[v_] * coeff;
        }
      }
      if w != s {
        bc[w_] += delta[w_];
      }
    }
    for &v in &order {
      let v = v as usize;
      sigma[v] = 0.0;
      dist[v] = u32::MAX;
      delta[v] = 0.0;
    }
  }
  bc
}

#[cfg(test)]
mod tests {
  use super::*;

  /// Brute force: for every pair s < t, σ_st(v) = σ_sv·σ_vt when d(s,v) + d(v,t) = d(s,t).
  fn brute_force(g: &Graph) -> Vec<f64> {
    let n = g.node_count();
    let bfs = |s: usize| {
      let mut dist = vec![u32::MAX; n];
      let mut sigma = vec![0.0f64; n];
      dist[s] = 0;
      sigma[s] = 1.0;
      let mut q = std::collections::VecDeque::from([s]);
      while let Some(v) = q.pop_front() {
        for &w in g.neighbours(v as u32) {
          let w = w as usize;
          if dist[w] == u32::MAX {
            dist[w] = dist[v] + 1;
            q.push_back(w);
          }
          if dist[w] == dist[v] + 1 && w != v {
            sigma[w] += sigma[v];
          }
        }
      }
      (dist, sigma)
    };
    let all: Vec<_> = (0..n).map(bfs).collect();
    let mut bc = vec![0.0; n];
    for s in 0..n {
      for t in s + 1..n {
        let (ds, ss) = &all[s];
        if ds[t] == u32::MAX {
          continue;
        }
        for v in 0..n {
          if v != s && v != t && ds[v] != u32::MAX && all[v].0[t] != u32::MAX && ds[v] + all[v].0[t] == ds[t]
          {
            bc[v] += ss[v] * all[v].1[t] / ss[t];
          }
        }
      }
    }
    bc
  }

  #[test]
  fn exact_matches_brute_force_on_random_graphs() {
    let mut rng = SplitMix64::new(4);
    for &(n, m) in &[(1usize, 0usize), (3, 2), (12, 15), (40, 60), (70, 200)] {
      let (mut s, mut d) = (vec![], vec![]);
      for _ in 0..m {
        s.push(rng.below(n as u64) as u32);
        d.push(rng.below(n as u64) as u32);
      }
      let g = Graph::from_unweighted(n, &s, &d).unwrap();
      let got = betweenness(&g, 42);
      let want = brute_force(&g);
      for v in 0..n {
        assert!(
          (got[v] - want[v]).abs() < 1e-9,
          "n={n} v={v}: {} vs {}",
          got[v],
          want[v]
        );
      }
    }
  }

  #[test]
  fn path_graph_centre_and_star() {
    let path = Graph::from_unweighted(3, &[0, 1], &[1, 2]).unwrap();
    assert_eq!(betweenness(&path, 42), vec![0.0, 1.0, 0.0]);
    let star = Graph::from_unweighted(5, &[0, 0, 0, 0], &[1, 2, 3, 4]).unwrap();
    assert_eq!(betweenness(&star, 42), vec![6.0, 0.0, 0.0, 0.0, 0.0]);
  }

  #[test]
  fn sampled_pivots_are_seeded_and_distinct() {
    let a = pivots(10_000, 500, 42);
    assert_eq!(a, pivots(10_000, 500, 42));
    assert_ne!(a, pivots(10_000, 500, 43));
    let mut s = a.clone();
    s.sort();
    s.dedup();
    assert_eq!(s.len(), 500);
    // Sampled run is deterministic and thread-count independent by construction.
    let n = 6000;
    let src: Vec<u32> = (1..n as u32).collect();
    let dst: Vec<u32> = (1..n as u32).map(|v| v / 2).collect(); // a binary tree
    let g = Graph::from_unweighted(n, &src, &dst).unwrap();
    let b1 = betweenness(&g, 42);
    assert_eq!(b1, betweenness(&g, 42));
    assert_eq!(b1, betweenness_from(&g, &pivots(n, 500, 42)));
    assert!(b1[1] > 0.0 && b1[n - 1] == 0.0); // inner node vs leaf
  }
}
