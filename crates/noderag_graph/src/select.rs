//! Partial selection of the best (score, id) pairs: ranking (score desc, id asc), the order
//! of method.md §6.4 and §7.5. Select-nth then sort only the k winners: O(n + k log k).

use std::cmp::Ordering;

/// (score desc, id asc). Scores are finite here; `total_cmp` keeps the order total anyway.
#[inline]
pub(crate) fn rank_order(a: &(f64, u32), b: &(f64, u32)) -> Ordering {
  b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
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
