//! Partial selection of the best (score, id) pairs: ranking (score desc, id asc), the order
//! of docs/method.md §6.4 and §7.5. Select-nth then sort only the k winners: O(n + k log k).

use std::cmp::Ordering;

/// (score desc, id asc). Scores are finite here; `total_cmp` keeps the order total anyway.
#[inline]
pub(crate) fn rank_order(a: &(f64, u32), b: &(f64, u32)) -> Ordering {
  b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
}

/// (score, id) ordered by [`rank_order`]: the greatest is the WORST ranked, so a max-heap
/// of these keeps its worst member on top.
#[derive(Clone, Copy, Debug)]
struct Ranked(f64, u32);

impl PartialEq for Ranked {
  fn eq(&self, other: &Self) -> bool {
    self.cmp(other) == Ordering::Equal
  }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
  fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
    Some(self.cmp(other))
  }
}
impl Ord for Ranked {
  fn cmp(&self, other: &Self) -> Ordering {
    rank_order(&(self.0, self.1), &(other.0, other.1))
  }
}

/// Streaming partial selection: offers are compared with the worst kept item, so most of
/// a long stream costs one comparison and no write. O(n + m log k) for m replacements.
pub(crate) struct TopK {
  k: usize,
  heap: std::collections::BinaryHeap<Ranked>,
}

impl TopK {
  pub(crate) fn new(k: usize) -> TopK {
    TopK {
      k,
      heap: std::collections::BinaryHeap::with_capacity(k.min(1024)),
    }
  }

  #[inline]
  pub(crate) fn offer(&mut self, score: f64, id: u32) {
    if self.heap.len() < self.k {
      self.heap.push(Ranked(score, id));
    } else if let Some(mut worst) = self.heap.peek_mut() {
      let cand = Ranked(score, id);
      if cand < *worst {
        *worst = cand;
      }
    }
  }

  /// The kept items, best first.
  pub(crate) fn into_sorted(self) -> Vec<(f64, u32)> {
    self
      .heap
      .into_sorted_vec()
      .into_iter()
      .map(|r| (r.0, r.1))
      .collect()
  }
}

/// Keeps the best `k` items of `items`, sorted by [`rank_order`].
pub(crate) fn keep_top_k(items: &mut Vec<(f64, u32)>, k: usize) {
  if items.len() > k {
    if k == 0 {
      items.clear();
      return;
    }
    items.select_nth_unstable_by(k - 1, rank_order);
    items.truncate(k);
  }
  items.sort_unstable_by(rank_order);
}

/// The best `k` node ids by (score desc, id asc) over a full score vector.
pub fn top_n(scores: &[f64], k: usize) -> Vec<u32> {
  let mut items: Vec<(f64, u32)> = scores.iter().enumerate().map(|(i, &s)| (s, i as u32)).collect();
  keep_top_k(&mut items, k);
  items.into_iter().map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn streaming_top_k_matches_full_sort() {
    let mut rng = crate::rng::SplitMix64::new(9);
    for n in [0usize, 1, 7, 500] {
      let items: Vec<(f64, u32)> = (0..n).map(|i| (rng.below(6) as f64, i as u32)).collect();
      let mut all = items.clone();
      all.sort_by(rank_order);
      for k in [0usize, 1, 4, n, n + 3] {
        let mut t = TopK::new(k);
        // offer in a shuffled order: the result must not depend on it
        let mut order = items.clone();
        rng.shuffle(&mut order);
        for &(s, i) in &order {
          t.offer(s, i);
        }
        assert_eq!(
          t.into_sorted(),
          all.iter().take(k).copied().collect::<Vec<_>>(),
          "n={n} k={k}"
        );
      }
    }
  }

  #[test]
  fn matches_full_sort() {
    let mut rng = crate::rng::SplitMix64::new(7);
    for n in [0usize, 1, 5, 100] {
      // Few distinct scores, so ties by id matter.
      let scores: Vec<f64> = (0..n).map(|_| rng.below(5) as f64).collect();
      let mut all: Vec<(f64, u32)> = scores.iter().enumerate().map(|(i, &s)| (s, i as u32)).collect();
      all.sort_by(rank_order);
      for k in [0usize, 1, 3, n, n + 2] {
        let want: Vec<u32> = all.iter().take(k).map(|x| x.1).collect();
        assert_eq!(top_n(&scores, k), want, "n={n} k={k}");
      }
    }
  }
}
