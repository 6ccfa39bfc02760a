//! Result ordering shared by exact and graph search: hits sort by (distance, label), so
//! ties are broken the same way everywhere (docs/method.md §6.2: "ordered by distance, ties by id").

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A candidate or result: a label and its distance to the query.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hit {
  pub dist: f32,
  pub label: u32,
}

impl Ord for Hit {
  fn cmp(&self, other: &Self) -> Ordering {
    self
      .dist
      .total_cmp(&other.dist)
      .then(self.label.cmp(&other.label))
  }
}
impl PartialOrd for Hit {
  fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
    Some(self.cmp(other))
  }
}
impl PartialEq for Hit {
  fn eq(&self, other: &Self) -> bool {
    self.cmp(other) == Ordering::Equal
  }
}
impl Eq for Hit {}

/// Parallel arrays, best first: `labels[i]` is at `distances[i]` from the query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchResult {
  pub labels: Vec<u32>,
  pub distances: Vec<f32>,
}

impl SearchResult {
  pub fn len(&self) -> usize {
    self.labels.len()
  }
  pub fn is_empty(&self) -> bool {
    self.labels.is_empty()
  }
}

/// Keeps the `k` smallest hits seen (a max-heap whose top is the worst kept hit).
pub(crate) struct TopK {
  k: usize,
  heap: BinaryHeap<Hit>,
}

impl TopK {
  pub fn new(k: usize) -> TopK {
    TopK {
      k,
      heap: BinaryHeap::with_capacity(k + 1),
    }
  }

  #[inline]
  pub fn push(&mut self, hit: Hit) {
    if self.heap.len() < self.k {
      self.heap.push(hit);
    } else if let Some(mut worst) = self.heap.peek_mut() {
      if hit < *worst {
        *worst = hit;
      }
    }
  }

  pub fn into_result(self) -> SearchResult {
    let sorted = self.heap.into_sorted_vec();
    SearchResult {
      labels: sorted.iter().map(|h| h.label).collect(),
      distances: sorted.iter().map(|h| h.dist).collect(),
    }
  }
}

/// A hit as one integer whose order is `Hit`'s: the distance's bits mapped as `f32::total_cmp`
/// orders them (sign flipped, negative values' other bits reversed), then the label.
#[inline]
pub(crate) fn hit_key(h: Hit) -> u64 {
  let bits = h.dist.to_bits() as i32;
  let ordered = (bits ^ ((((bits >> 31) as u32) >> 1) as i32)) as u32 ^ 0x8000_0000;
  (u64::from(ordered) << 32) | u64::from(h.label)
}

/// The hit `hit_key` made `key` of (the mapping is its own inverse).
#[inline]
pub(crate) fn key_hit(key: u64) -> Hit {
  let ordered = ((key >> 32) as u32 ^ 0x8000_0000) as i32;
  let bits = ordered ^ ((((ordered >> 31) as u32) >> 1) as i32);
  Hit {
    dist: f32::from_bits(bits as u32),
    label: key as u32,
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn hit_keys_order_as_hits_and_give_them_back() {
    let dists = [
      0.0f32,
      -0.0,
      1e-30,
      0.5,
      1.0,
      3.5e7,
      f32::INFINITY,
      -1.0,
      -f32::INFINITY,
      f32::NAN,
      -f32::NAN,
      f32::MIN_POSITIVE,
    ];
    let hits: Vec<Hit> = dists
      .iter()
      .flat_map(|&dist| [0u32, 7, u32::MAX].map(|label| Hit { dist, label }))
      .collect();
    for a in &hits {
      let back = key_hit(hit_key(*a));
      assert_eq!((back.dist.to_bits(), back.label), (a.dist.to_bits(), a.label));
      for b in &hits {
        assert_eq!(hit_key(*a).cmp(&hit_key(*b)), a.cmp(b), "{a:?} {b:?}");
      }
    }
  }
}
