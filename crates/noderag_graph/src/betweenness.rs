//! Betweenness centrality (Brandes), unweighted and undirected (docs/method.md §3.5): exact for
//! N ≤ 5,000, otherwise accumulated from 500 pivots. With the nodes' ids given, the pivots are
//! the 500 ids of smallest seeded hash (bottom-k): the choice does not depend on the node
//! order, and adding or removing m nodes replaces at most m pivots, so an incremental sync
//! keeps its sample and borderline entities stop flipping with unrelated changes. Without ids
//! (the older entry point), they are drawn by a seeded shuffle of the node indexes.
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

/// Betweenness per docs/method.md §3.5 with the pivots chosen by id (`pivots_by_id`);
/// `ids[i]` is node i's id, `ids.len()` must be the node count.
pub fn betweenness_by_id<S: AsRef<[u8]>>(g: &Graph, ids: &[S], seed: u64) -> Vec<f64> {
  let n = g.node_count();
  assert_eq!(ids.len(), n, "one id per node");
  if n <= EXACT_LIMIT {
    betweenness_from(g, &(0..n as u32).collect::<Vec<_>>())
  } else {
    betweenness_from(g, &pivots_by_id(ids, PIVOTS, seed))
  }
}

/// Seeded 64-bit hash of an id: FNV-1a over its bytes, then the SplitMix64 finaliser of
/// that XOR the seed (FNV alone mixes its last bytes poorly into the high bits).
pub fn id_key(id: &[u8], seed: u64) -> u64 {
  let mut h: u64 = 0xCBF2_9CE4_8422_2325;
  for &b in id {
    h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3);
  }
  SplitMix64::new(h ^ seed).next_u64()
}

/// The `k` nodes whose ids have the smallest `id_key` (ties by id bytes), in that order, so
/// the accumulation order, too, follows the ids rather than the node numbering.
pub fn pivots_by_id<S: AsRef<[u8]>>(ids: &[S], k: usize, seed: u64) -> Vec<u32> {
  let mut keyed: Vec<(u64, u32)> = ids
    .iter()
    .enumerate()
    .map(|(i, id)| (id_key(id.as_ref(), seed), i as u32))
    .collect();
  let cmp = |a: &(u64, u32), b: &(u64, u32)| {
    a.0
      .cmp(&b.0)
      .then_with(|| ids[a.1 as usize].as_ref().cmp(ids[b.1 as usize].as_ref()))
  };
  let k = k.min(keyed.len());
  if k < keyed.len() {
    keyed.select_nth_unstable_by(k, cmp);
    keyed.truncate(k);
  }
  keyed.sort_unstable_by(cmp);
  keyed.into_iter().map(|(_, i)| i).collect()
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
  let walk = Renumbered::new(g);
  let sources: Vec<u32> = sources.iter().map(|&s| walk.rank[s as usize]).collect();
  let chunk_len = sources.len().div_ceil(CHUNKS);
  let chunks: Vec<&[u32]> = sources.chunks(chunk_len).collect();
  let threads = std::thread::available_parallelism()
    .map_or(1, |p| p.get())
    .min(chunks.len());
  let mut partials: Vec<Option<Vec<f64>>> = vec![None; chunks.len()];
  if threads <= 1 || n * sources.len() < 200_000 {
    for (k, c) in chunks.iter().enumerate() {
      partials[k] = Some(accumulate(&walk, c));
    }
  } else {
    // Thread t takes chunks t, t + threads, …; the sum below is in chunk order anyway.
    std::thread::scope(|scope| {
      let handles: Vec<_> = (0..threads)
        .map(|t| {
          let (chunks, walk) = (&chunks, &walk);
          scope.spawn(move || {
            (t..chunks.len())
              .step_by(threads)
              .map(|k| (k, accumulate(walk, chunks[k])))
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
  // Back to the caller's numbering.
  let mut out = vec![0.0; n];
  for (r, &u) in walk.order.iter().enumerate() {
    out[u as usize] = bc[r] * scale;
  }
  out
}

/// The graph renumbered for memory locality ([`Graph::locality_order`]: breadth-first from
/// the hubs, so a node's neighbours mostly sit near it and the state of a walk's frontier
/// shares cache lines), every row keeping its neighbours in the caller's row order. The
/// walks then visit the same nodes in the same sequence as on the caller's graph and every
/// sum is taken in the same order: the scores are bit for bit those of the unrenumbered
/// graph. On a 400k-node core graph (a 10 MB corpus) the caller's numbering, the order the
/// index-io tables list the nodes, scattered each walk over the whole state arrays.
struct Renumbered {
  offsets: Vec<usize>,
  neighbours: Vec<u32>,
  /// Renumbered node r is the caller's node `order[r]`; `rank` is the inverse.
  order: Vec<u32>,
  rank: Vec<u32>,
}

impl Renumbered {
  fn new(g: &Graph) -> Renumbered {
    let n = g.node_count();
    let order = g.locality_order();
    let mut rank = vec![0u32; n];
    for (r, &u) in order.iter().enumerate() {
      rank[u as usize] = r as u32;
    }
    let mut offsets = Vec::with_capacity(n + 1);
    let mut neighbours = Vec::with_capacity(g.entry_count());
    offsets.push(0);
    for &u in &order {
      neighbours.extend(g.neighbours(u).iter().map(|&v| rank[v as usize]));
      offsets.push(neighbours.len());
    }
    Renumbered {
      offsets,
      neighbours,
      order,
      rank,
    }
  }

  fn node_count(&self) -> usize {
    self.order.len()
  }

  #[inline]
  fn neighbours(&self, u: u32) -> &[u32] {
    &self.neighbours[self.offsets[u as usize]..self.offsets[u as usize + 1]]
  }
}

/// Σ over `sources` of the Brandes dependencies δ_s(v).
fn accumulate(g: &Renumbered, sources: &[u32]) -> Vec<f64> {
  // BFS levels as u16 when every level fits (fewer than 65,535 nodes): the level array is
  // then small enough to stay in L1, and each edge of both passes reads it.
  // The same bound picks the BFS: branch-free where the walk's state stays in cache (see
  // accumulate_with); on a 400k-node core graph its extra stores cost more than the branches.
  if g.node_count() < u16::MAX as usize {
    accumulate_with::<u16, true>(g, sources)
  } else {
    accumulate_with::<u32, false>(g, sources)
  }
}

/// A BFS level; `NONE` marks a node not reached yet.
trait Level: Copy + Eq {
  const NONE: Self;
  const ZERO: Self;
  fn next(self) -> Self;
  fn prev(self) -> Self;
}

/// `Level` for an unsigned integer type: its largest value marks "not reached".
macro_rules! level {
  ($t:ty) => {
    impl Level for $t {
      const NONE: Self = <$t>::MAX;
      const ZERO: Self = 0;
      fn next(self) -> Self {
        self + 1
      }
      fn prev(self) -> Self {
        self - 1
      }
    }
  };
}
level!(u16);
level!(u32);

fn accumulate_with<L: Level, const BRANCH_FREE: bool>(g: &Renumbered, sources: &[u32]) -> Vec<f64> {
  let n = g.node_count();
  let mut bc = vec![0.0; n];
  let mut sigma = vec![0.0f64; n];
  let mut dist = vec![L::NONE; n];
  let mut delta = vec![0.0f64; n];
  // The BFS visit order (non-decreasing dist), `len` entries in use, plus one spare slot:
  // every neighbour is written past the end and kept only when it is new.
  let mut order: Vec<u32> = vec![0; n + 1];
  for &s in sources {
    sigma[s as usize] = 1.0;
    dist[s as usize] = L::ZERO;
    order[0] = s;
    let mut len = 1usize;
    let mut head = 0;
    // BRANCH_FREE: whether a neighbour is new, or one level down, is about even odds on
    // these graphs, and a mispredicted branch per edge cost more than the work while the
    // state is in cache (−15 % for the whole call on HotpotQA-100's 23k-node core graph, one
    // core); every neighbour then gets its level and a count of paths stored, +0.0 when it is
    // not one level down, which leaves every sum bit for bit as the branching walk left it
    // (sigma is never -0.0, NaN or inf). On a 400k-node core graph those stores made the call
    // 2 % slower, so the branches stay there. The dependency pass below measured no faster
    // without its branch on either.
    while head < len {
      let v = order[head];
      head += 1;
      let below = dist[v as usize].next();
      let sigma_v = sigma[v as usize];
      for &w in g.neighbours(v) {
        let w_ = w as usize;
        if BRANCH_FREE {
          let d = dist[w_];
          let new = d == L::NONE;
          let d = if new { below } else { d };
          dist[w_] = d;
          order[len] = w;
          len += usize::from(new);
          sigma[w_] += keep_if(d == below, sigma_v);
        } else {
          if dist[w_] == L::NONE {
            dist[w_] = below;
            order[len] = w;
            len += 1;
          }
          if dist[w_] == below {
            sigma[w_] += sigma_v;
          }
        }
      }
    }
    // Dependencies in reverse BFS order; predecessors of w are its neighbours one level up.
    for &w in order[..len].iter().rev() {
      let w_ = w as usize;
      let dw = dist[w_];
      if dw != L::ZERO {
        let coeff = (1.0 + delta[w_]) / sigma[w_];
        let above = dw.prev();
        for &v in g.neighbours(w) {
          let v_ = v as usize;
          if dist[v_] == above {
            delta[v_] += sigma[v_] * coeff;
          }
        }
        bc[w_] += delta[w_];
      }
    }
    for &v in &order[..len] {
      let v = v as usize;
      sigma[v] = 0.0;
      dist[v] = L::NONE;
      delta[v] = 0.0;
    }
  }
  bc
}

/// `x` when `keep`, else +0.0, without a branch.
#[inline(always)]
fn keep_if(keep: bool, x: f64) -> f64 {
  f64::from_bits(x.to_bits() & (u64::from(keep)).wrapping_neg())
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

  /// The u16 levels of graphs under 65,535 nodes give the u32 levels' scores, bit for bit,
  /// and so do the branch-free and the branching BFS (and a path longer than 65,535 nodes,
  /// which needs u32 levels, is handled).
  #[test]
  fn narrow_and_wide_levels_agree() {
    let mut rng = SplitMix64::new(9);
    let (n, m) = (3000usize, 5000usize);
    let (mut s, mut d) = (vec![], vec![]);
    for _ in 0..m {
      s.push(rng.below(n as u64) as u32);
      d.push(rng.below(n as u64) as u32);
    }
    let g = Graph::from_unweighted(n, &s, &d).unwrap();
    let walk = Renumbered::new(&g);
    let sources: Vec<u32> = (0..n as u32).step_by(7).collect();
    let bits = |v: Vec<f64>| v.into_iter().map(f64::to_bits).collect::<Vec<_>>();
    let reference = bits(accumulate_with::<u32, false>(&walk, &sources));
    assert_eq!(bits(accumulate_with::<u16, true>(&walk, &sources)), reference);
    assert_eq!(bits(accumulate_with::<u16, false>(&walk, &sources)), reference);
    assert_eq!(bits(accumulate_with::<u32, true>(&walk, &sources)), reference);
    let long = 70_000usize;
    let src: Vec<u32> = (0..long as u32 - 1).collect();
    let dst: Vec<u32> = (1..long as u32).collect();
    let path = Graph::from_unweighted(long, &src, &dst).unwrap();
    let walk = Renumbered::new(&path);
    let bc = accumulate(&walk, &[walk.rank[0]]);
    let at = |u: usize| bc[walk.rank[u] as usize];
    // From one end of a path, node i lies on the paths to the long − 1 − i nodes past it.
    assert_eq!(at(1), (long - 2) as f64);
    assert_eq!(at(long - 1), 0.0);
  }

  /// Brandes on the caller's numbering, as it was computed before the renumbering.
  fn unrenumbered(g: &Graph, sources: &[u32]) -> Vec<f64> {
    let n = g.node_count();
    let (mut bc, mut sigma, mut delta) = (vec![0.0f64; n], vec![0.0f64; n], vec![0.0f64; n]);
    for &s in sources {
      let mut dist = vec![u32::MAX; n];
      let mut order = vec![s];
      sigma.fill(0.0);
      delta.fill(0.0);
      sigma[s as usize] = 1.0;
      dist[s as usize] = 0;
      let mut head = 0;
      while head < order.len() {
        let v = order[head] as usize;
        head += 1;
        for &w in g.neighbours(v as u32) {
          let w_ = w as usize;
          if dist[w_] == u32::MAX {
            dist[w_] = dist[v] + 1;
            order.push(w);
          }
          if dist[w_] == dist[v] + 1 {
            sigma[w_] += sigma[v];
          }
        }
      }
      for &w in order.iter().rev() {
        let w_ = w as usize;
        if dist[w_] != 0 {
          let coeff = (1.0 + delta[w_]) / sigma[w_];
          for &v in g.neighbours(w) {
            if dist[v as usize] + 1 == dist[w_] {
              delta[v as usize] += sigma[v as usize] * coeff;
            }
          }
          bc[w_] += delta[w_];
        }
      }
    }
    bc
  }

  /// The renumbering changes where the walks keep their state, not what they add up: the
  /// scores are the unrenumbered ones bit for bit (a sum in another order could move the
  /// last bits and, at the threshold, an entity's importance).
  #[test]
  fn renumbering_leaves_every_score_bit_identical() {
    let mut rng = SplitMix64::new(21);
    let (n, m) = (4000usize, 9000usize);
    let (mut s, mut d) = (vec![], vec![]);
    for _ in 0..m {
      // Skewed endpoints: hubs, as entity graphs have.
      let a = rng.below(n as u64) as u32;
      s.push(a);
      d.push((rng.below(n as u64) * rng.below(n as u64) / n as u64) as u32);
    }
    let g = Graph::from_unweighted(n, &s, &d).unwrap();
    let sources: Vec<u32> = (0..n as u32).step_by(3).collect();
    let scale = 0.5 * n as f64 / sources.len() as f64;
    let want: Vec<u64> = unrenumbered(&g, &sources)
      .into_iter()
      .map(|b| (b * scale).to_bits())
      .collect();
    // The library sums per chunk of sources, then the chunks: one chunk here (16 chunks
    // of one source each would sum in another order), so compare through one chunk.
    let got: Vec<u64> = betweenness_from(&g, &sources[..1])
      .into_iter()
      .map(f64::to_bits)
      .collect();
    let want_one: Vec<u64> = unrenumbered(&g, &sources[..1])
      .into_iter()
      .map(|b| (b * 0.5 * n as f64).to_bits())
      .collect();
    assert_eq!(got, want_one);
    let walk = Renumbered::new(&g);
    let ranked: Vec<u32> = sources.iter().map(|&s| walk.rank[s as usize]).collect();
    let part = accumulate(&walk, &ranked);
    let got: Vec<u64> = (0..n)
      .map(|u| (part[walk.rank[u] as usize] * scale).to_bits())
      .collect();
    assert_eq!(got, want);
  }

  #[test]
  fn path_graph_centre_and_star() {
    let path = Graph::from_unweighted(3, &[0, 1], &[1, 2]).unwrap();
    assert_eq!(betweenness(&path, 42), vec![0.0, 1.0, 0.0]);
    let star = Graph::from_unweighted(5, &[0, 0, 0, 0], &[1, 2, 3, 4]).unwrap();
    assert_eq!(betweenness(&star, 42), vec![6.0, 0.0, 0.0, 0.0, 0.0]);
  }

  /// Ids like the index's: 64 hex digits.
  fn hex_ids(n: usize, salt: u64) -> Vec<String> {
    let mut rng = SplitMix64::new(salt);
    (0..n)
      .map(|_| (0..4).map(|_| format!("{:016x}", rng.next_u64())).collect())
      .collect()
  }

  #[test]
  fn pivots_by_id_ignore_node_order() {
    let ids = hex_ids(8000, 7);
    let chosen: Vec<&String> = pivots_by_id(&ids, 500, 42)
      .iter()
      .map(|&i| &ids[i as usize])
      .collect();
    assert_eq!(chosen.len(), 500);
    let mut distinct = chosen.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 500);
    // Same ids in another order (reversed, then shuffled): the same pivot ids, same order.
    let mut perm: Vec<usize> = (0..ids.len()).rev().collect();
    for round in 0..2 {
      if round == 1 {
        SplitMix64::new(3).shuffle(&mut perm);
      }
      let other: Vec<String> = perm.iter().map(|&i| ids[i].clone()).collect();
      let got: Vec<&String> = pivots_by_id(&other, 500, 42)
        .iter()
        .map(|&i| &other[i as usize])
        .collect();
      assert_eq!(got, chosen);
    }
    // Another seed, another sample.
    let reseeded: Vec<&String> = pivots_by_id(&ids, 500, 43)
      .iter()
      .map(|&i| &ids[i as usize])
      .collect();
    assert_ne!(reseeded, chosen);
  }

  #[test]
  fn pivots_by_id_survive_a_small_change() {
    let ids = hex_ids(8000, 11);
    let before: std::collections::HashSet<String> = pivots_by_id(&ids, 500, 42)
      .iter()
      .map(|&i| ids[i as usize].clone())
      .collect();
    // Remove 40 nodes and add 60 new ones: at most 100 of the 500 pivots may change.
    let mut changed: Vec<String> = ids[40..].to_vec();
    changed.extend(hex_ids(60, 12));
    let after: std::collections::HashSet<String> = pivots_by_id(&changed, 500, 42)
      .iter()
      .map(|&i| changed[i as usize].clone())
      .collect();
    let kept = before.intersection(&after).count();
    assert!(kept >= 400, "kept {kept} of 500 pivots");
    // By position, the same change keeps about a sixteenth (500 of 8,020 by chance).
    let shuffled_kept = pivots(ids.len(), 500, 42)
      .iter()
      .filter(|&&i| pivots(changed.len(), 500, 42).contains(&i))
      .count();
    assert!(shuffled_kept < 100, "by position kept {shuffled_kept}");
  }

  #[test]
  fn sampled_betweenness_by_id_follows_the_ids() {
    // A binary tree over 6,000 nodes, numbered two ways: the values move with their ids.
    let n = 6000;
    let ids = hex_ids(n, 5);
    let src: Vec<u32> = (1..n as u32).collect();
    let dst: Vec<u32> = (1..n as u32).map(|v| v / 2).collect();
    let g = Graph::from_unweighted(n, &src, &dst).unwrap();
    let a = betweenness_by_id(&g, &ids, 42);
    assert_eq!(a, betweenness_from(&g, &pivots_by_id(&ids, 500, 42)));
    let perm: Vec<u32> = (0..n as u32).rev().collect(); // node i becomes perm[i]
    let ids2: Vec<String> = (0..n).map(|j| ids[n - 1 - j].clone()).collect();
    let src2: Vec<u32> = src.iter().map(|&v| perm[v as usize]).collect();
    let dst2: Vec<u32> = dst.iter().map(|&v| perm[v as usize]).collect();
    let g2 = Graph::from_unweighted(n, &src2, &dst2).unwrap();
    let b = betweenness_by_id(&g2, &ids2, 42);
    for v in 0..n {
      let w = perm[v] as usize;
      assert!(
        (a[v] - b[w]).abs() <= 1e-9 * a[v].abs().max(1.0),
        "node {v}: {} vs {}",
        a[v],
        b[w]
      );
    }
    assert!(a[1] > 0.0 && a[n - 1] == 0.0);
    // Small graphs stay exact.
    let path = Graph::from_unweighted(3, &[0, 1], &[1, 2]).unwrap();
    assert_eq!(
      betweenness_by_id(&path, &["a", "b", "c"], 42),
      vec![0.0, 1.0, 0.0]
    );
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
