use super::*;
use crate::rng::SplitMix64;
use std::collections::VecDeque;
use std::sync::Arc;

/// A random multigraph with duplicate edges, self-loops and isolated nodes.
fn random_edges(rng: &mut SplitMix64, n: usize, m: usize) -> (Vec<u32>, Vec<u32>, Vec<f64>) {
  let active = (n * 3 / 4).max(1) as u64; // the last quarter of nodes stays isolated
  let (mut s, mut d, mut w) = (vec![], vec![], vec![]);
  for _ in 0..m {
    let u = rng.below(active) as u32;
    let v = if rng.below(10) == 0 {
      u
    } else {
      rng.below(active) as u32
    };
    s.push(u);
    d.push(v);
    w.push(0.1 + rng.next_f64() * 3.0);
  }
  (s, d, w)
}

/// Dense reference: the matrix M = α·T + (1 − α)·I (walk) applied step by step, T built
/// from the dense adjacency exactly as §6.1 states it.
fn dense_reference(
  n: usize,
  edges: &(Vec<u32>, Vec<u32>, Vec<f64>),
  seeds: &[(u32, f64)],
  params: &PropagationParams,
) -> (Vec<f64>, Vec<bool>, u32) {
  let mut a = vec![vec![0.0f64; n]; n];
  for k in 0..edges.0.len() {
    let (u, v, w) = (edges.0[k] as usize, edges.1[k] as usize, edges.2[k]);
    a[u][v] += w;
    if u != v {
      a[v][u] += w;
    }
  }
  let mut t = vec![vec![0.0f64; n]; n];
  for j in 0..n {
    let wj: f64 = (0..n).map(|i| a[i][j]).sum();
    for i in 0..n {
      t[i][j] = if wj > 0.0 {
        a[i][j] / wj
      } else if i != j && n > 1 {
        1.0 / (n - 1) as f64
      } else {
        0.0
      };
    }
  }
  let total: f64 = seeds.iter().map(|s| s.1).sum();
  let mut p0 = vec![0.0; n];
  for &(i, w) in seeds {
    p0[i as usize] += w / total;
  }
  let alpha = params.alpha;
  let mut p = p0.clone();
  let mut steps = 0;
  while steps < params.max_iter {
    let mut next = vec![0.0; n];
    for i in 0..n {
      let tp: f64 = (0..n).map(|j| t[i][j] * p[j]).sum();
      next[i] = alpha * tp
        + (1.0 - alpha)
          * match params.mode {
            PropagationMode::Walk => p[i],
            PropagationMode::Restart => p0[i],
          };
    }
    let diff: f64 = (0..n).map(|i| (next[i] - p[i]).powi(2)).sum::<f64>().sqrt();
    p = next;
    steps += 1;
    if diff < params.tolerance {
      break;
    }
  }
  // hop distances from the seeds (with positive weight)
  let mut dist = vec![u32::MAX; n];
  let mut queue = VecDeque::new();
  for &(i, w) in seeds {
    if w > 0.0 && dist[i as usize] == u32::MAX {
      dist[i as usize] = 0;
      queue.push_back(i as usize);
    }
  }
  while let Some(u) = queue.pop_front() {
    for v in 0..n {
      if a[u][v] > 0.0 && dist[v] == u32::MAX {
        dist[v] = dist[u] + 1;
        queue.push_back(v);
      }
    }
  }
  let eligible = (0..n).map(|i| p[i] > 0.0 && dist[i] <= steps).collect();
  (p, eligible, steps)
}

#[test]
fn hand_computed_path() {
  let g = SearchGraph::build(
    vec![0, 0, 0],
    EdgeList::weighted(&[0, 1], &[1, 2], &[1.0, 1.0]),
    &[],
    &[],
    false,
  )
  .unwrap();
  let r = g.scores(&[0], &[1.0], &PropagationParams::walk(0.5, 2)).unwrap();
  assert_eq!(r.steps, 2);
  assert_eq!(r.scores, vec![0.375, 0.5, 0.125]);
  assert_eq!(r.eligible, vec![true, true, true]);
  let r1 = g.scores(&[0], &[1.0], &PropagationParams::walk(0.5, 1)).unwrap();
  assert_eq!(r1.scores, vec![0.5, 0.5, 0.0]);
  assert_eq!(r1.eligible, vec![true, true, false]);
}

#[test]
fn isolated_seed_spreads_uniformly_but_far_nodes_are_not_eligible() {
  // 0-1 edge, 2 isolated seed, 3-4 edge.
  let g = SearchGraph::build(
    vec![0; 5],
    EdgeList::weighted(&[0, 3], &[1, 4], &[1.0, 1.0]),
    &[],
    &[],
    false,
  )
  .unwrap();
  let r = g.scores(&[2], &[1.0], &PropagationParams::walk(0.5, 2)).unwrap();
  assert!(r.scores[0] > 0.0 && r.scores[4] > 0.0);
  assert_eq!(r.eligible, vec![false, false, true, false, false]);
  let total: f64 = r.scores.iter().sum();
  assert!((total - 1.0).abs() < 1e-12);
}

#[test]
fn matches_dense_matrix_power_reference_on_random_graphs() {
  let mut rng = SplitMix64::new(1234);
  let mut cases = 0;
  for &n in &[1usize, 2, 3, 8, 25, 60] {
    for rep in 0..6 {
      let m = rng.below((n * 3) as u64 + 1) as usize;
      let edges = random_edges(&mut rng, n, m);
      let types: Vec<u8> = (0..n).map(|i| (i % 3) as u8).collect();
      let g =
        SearchGraph::from_graph(Graph::from_edges(n, &edges.0, &edges.1, &edges.2).unwrap(), types).unwrap();
      let k = 1 + rng.below(3) as usize;
      let seeds: Vec<(u32, f64)> = (0..k)
        .map(|_| (rng.below(n as u64) as u32, rng.below(3) as f64))
        .collect();
      if seeds.iter().all(|s| s.1 == 0.0) {
        continue;
      }
      let (ids, ws): (Vec<u32>, Vec<f64>) = seeds.iter().copied().unzip();
      for mode in [PropagationMode::Walk, PropagationMode::Restart] {
        for &(alpha, iters) in &[(0.5, 2u32), (0.85, 30), (1.0, 3), (0.0, 2), (0.3, 0), (0.5, 200)] {
          for strategy in [Strategy::Auto, Strategy::Dense] {
            let params = PropagationParams {
              alpha,
              max_iter: iters,
              mode,
              tolerance: WALK_TOLERANCE,
              strategy,
            };
            let got = g.scores(&ids, &ws, &params).unwrap();
            let (want, want_eligible, want_steps) = dense_reference(n, &edges, &seeds, &params);
            let ctx = format!("n={n} rep={rep} mode={mode:?} alpha={alpha} iters={iters} {strategy:?}");
            assert_eq!(got.steps, want_steps, "{ctx}");
            for i in 0..n {
              assert!(
                (got.scores[i] - want[i]).abs() < 1e-6,
                "{ctx} node {i}: {} vs {}",
                got.scores[i],
                want[i]
              );
            }
            assert_eq!(got.eligible, want_eligible, "{ctx}");
            cases += 1;
          }
        }
      }
    }
  }
  assert!(cases > 300, "{cases}");
}

#[test]
fn typed_top_k_equals_sorting_the_eligible_nodes() {
  let mut rng = SplitMix64::new(99);
  let n = 400;
  let edges = random_edges(&mut rng, n, 1200);
  let types: Vec<u8> = (0..n).map(|_| rng.below(4) as u8).collect();
  let g = SearchGraph::from_graph(
    Graph::from_edges(n, &edges.0, &edges.1, &edges.2).unwrap(),
    types.clone(),
  )
  .unwrap();
  let ids = [3u32, 17, 250, 3];
  let ws = [1.0, 2.0, 1.0, 1.0];
  let quotas = [5u32, 0, 3, 1000]; // type 3 effectively unlimited
  let variants = [
    PropagationParams::walk(0.5, 1),
    PropagationParams::walk(0.5, 2), // selection fused into the last sparse step
    PropagationParams::walk(0.5, 3),
    PropagationParams {
      strategy: Strategy::Dense,
      ..PropagationParams::walk(0.5, 2)
    },
    PropagationParams {
      mode: PropagationMode::Restart,
      ..PropagationParams::walk(0.85, 40)
    }, // early stop
  ];
  for params in variants {
    // twice: the pooled scratch must come back clean
    for _ in 0..2 {
      let top = g.top_nodes(&ids, &ws, &params, &quotas).unwrap();
      let full = g.scores(&ids, &ws, &params).unwrap();
      let mut want: Vec<(f64, u32)> = vec![];
      for t in 0..4u8 {
        let mut of_type: Vec<(f64, u32)> = (0..n)
          .filter(|&i| full.eligible[i] && types[i] == t)
          .map(|i| (full.scores[i], i as u32))
          .collect();
        of_type.sort_by(rank_order);
        of_type.truncate(quotas[t as usize] as usize);
        want.extend(of_type);
      }
      want.sort_by(rank_order);
      assert_eq!(
        top.ids,
        want.iter().map(|w| w.1).collect::<Vec<_>>(),
        "{params:?}"
      );
      assert_eq!(top.scores, want.iter().map(|w| w.0).collect::<Vec<_>>());
      assert_eq!(
        top.types,
        top.ids.iter().map(|&i| types[i as usize]).collect::<Vec<_>>()
      );
      assert_eq!(
        top.eligible as usize,
        full.eligible.iter().filter(|&&e| e).count()
      );
      assert!(top.types.iter().all(|&t| t != 1));
      assert_eq!(top.steps, full.steps);
    }
  }
}

#[test]
fn no_seed_gives_empty_answer_and_bad_seeds_are_errors() {
  let g = SearchGraph::build(
    vec![0, 1],
    EdgeList::weighted(&[0], &[1], &[1.0]),
    &[],
    &[],
    false,
  )
  .unwrap();
  let p = PropagationParams::walk(0.5, 2);
  let r = g.top_nodes(&[], &[], &p, &[5, 5]).unwrap();
  assert!(r.ids.is_empty() && r.eligible == 0);
  let r = g.top_nodes(&[1], &[0.0], &p, &[5, 5]).unwrap();
  assert!(r.ids.is_empty());
  assert!(g
    .top_nodes(&[2], &[1.0], &p, &[5])
    .unwrap_err()
    .to_string()
    .contains("seed ids[0] = 2"));
  assert!(g.top_nodes(&[0], &[-1.0], &p, &[5]).is_err());
  assert!(g.top_nodes(&[0, 1], &[1.0], &p, &[5]).is_err());
  let bad = PropagationParams { alpha: 1.5, ..p };
  assert!(g
    .top_nodes(&[0], &[1.0], &bad, &[5])
    .unwrap_err()
    .to_string()
    .contains("alpha"));
}

#[test]
fn concurrent_queries_agree_with_sequential_ones() {
  let mut rng = SplitMix64::new(5);
  let n = 2000;
  let edges = random_edges(&mut rng, n, 8000);
  let types: Vec<u8> = (0..n).map(|i| (i % 7) as u8).collect();
  let g = Arc::new(
    SearchGraph::from_graph(Graph::from_edges(n, &edges.0, &edges.1, &edges.2).unwrap(), types).unwrap(),
  );
  let queries: Vec<Vec<u32>> = (0..16).map(|q| vec![q * 7, q * 13 + 1, 1999 - q]).collect();
  let params = PropagationParams::walk(0.5, 2);
  let quotas = [10u32; 7];
  let sequential: Vec<Vec<u32>> = queries
    .iter()
    .map(|q| g.top_nodes(q, &[1.0, 1.0, 1.0], &params, &quotas).unwrap().ids)
    .collect();
  let handles: Vec<_> = (0..4)
    .map(|t| {
      let g = Arc::clone(&g);
      let queries = queries.clone();
      std::thread::spawn(move || {
        (0..queries.len())
          .map(|k| {
            let q = &queries[(k + t * 3) % queries.len()];
            (
              (k + t * 3) % queries.len(),
              g.top_nodes(q, &[1.0, 1.0, 1.0], &params, &quotas).unwrap().ids,
            )
          })
          .collect::<Vec<_>>()
      })
    })
    .collect();
  for h in handles {
    for (k, ids) in h.join().unwrap() {
      assert_eq!(ids, sequential[k]);
    }
  }
}

#[test]
fn coded_weights_give_the_scores_of_the_f64_weights_bit_for_bit() {
  let mut rng = SplitMix64::new(7);
  let n = 500;
  let edges = random_edges(&mut rng, n, 2000);
  let types: Vec<u8> = (0..n).map(|_| rng.below(4) as u8).collect();
  let graph = || Graph::from_edges(n, &edges.0, &edges.1, &edges.2).unwrap();
  let coded = SearchGraph::from_graph(graph(), types.clone()).unwrap();
  assert!(
    coded.weight_codes.is_some(),
    "a few thousand distinct weights are coded"
  );
  let mut plain = SearchGraph::from_graph(graph(), types).unwrap();
  plain.weight_codes = None;
  let ids = [3u32, 17, 250, 41, 99];
  let ws = [1.0, 2.0, 1.0, 0.5, 3.0];
  let quotas = [7u32, 3, 5, 1000];
  for params in [
    PropagationParams::walk(0.5, 1),
    PropagationParams::walk(0.5, 2),
    PropagationParams::walk(0.3, 4),
    PropagationParams {
      mode: PropagationMode::Restart,
      ..PropagationParams::walk(0.85, 40)
    },
  ] {
    let (a, b) = (
      coded.top_nodes(&ids, &ws, &params, &quotas).unwrap(),
      plain.top_nodes(&ids, &ws, &params, &quotas).unwrap(),
    );
    assert_eq!(a.ids, b.ids, "{params:?}");
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a.scores), bits(&b.scores), "{params:?}");
    let (fa, fb) = (
      coded.scores(&ids, &ws, &params).unwrap(),
      plain.scores(&ids, &ws, &params).unwrap(),
    );
    assert_eq!(bits(&fa.scores), bits(&fb.scores), "{params:?}");
  }
}

#[test]
fn weight_codes_keep_each_value_and_give_up_past_65536_distinct() {
  let weights = [0.5, 1.0 / 3.0, 0.5, -0.0, 0.0, 2.0, 1.0 / 3.0];
  let c = WeightCodes::new(&weights).unwrap();
  assert_eq!(c.table.len(), 5); // -0.0 and 0.0 are different bit patterns, both kept
  for (e, &w) in weights.iter().enumerate() {
    assert_eq!(c.table[c.codes[e] as usize].to_bits(), w.to_bits());
  }
  let many: Vec<f64> = (0..70_000).map(|i| 1.0 + i as f64).collect();
  assert!(WeightCodes::new(&many).is_none());
  let exactly: Vec<f64> = (0..65_536).map(|i| i as f64).collect();
  assert_eq!(WeightCodes::new(&exactly).unwrap().table.len(), 65_536);
}
