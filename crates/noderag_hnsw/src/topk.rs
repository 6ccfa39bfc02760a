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
