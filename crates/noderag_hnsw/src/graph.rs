//! The HNSW graph while it can grow: the vectors, each point's level and neighbour lists,
//! and the entry point. Construction is in build.rs; the file format in container.rs.

use crate::code_dot::RowSums;
use crate::distance::{distance, Space};
use crate::index::IndexParams;
use crate::quantized::Codes;
use crate::view::GraphParts;

/// Levels are capped here (a level above 15 has probability m^-16: never, in practice).
pub(crate) const MAX_LEVEL: u8 = 15;

/// Seed of the level hash ([`level_of`]); recorded in the file header.
pub const LEVEL_SEED: u64 = 0x4e52_484e_5357_0002;

/// The level of a label: the usual HNSW draw ⌊−ln(u) / ln(m)⌋, with u a seeded hash of the
/// label instead of a generator's next value, so a point's level depends on nothing else
/// (not on the order, batches or threads of insertion, nor on a checkpoint and resume).
pub(crate) fn level_of(label: u32, m: usize) -> u8 {
  // splitmix64 of (seed, label).
  let mut x = LEVEL_SEED ^ u64::from(label).wrapping_mul(0x9e37_79b9_7f4a_7c15);
  x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
  x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
  x ^= x >> 31;
  // u in (0, 1]: never 0, so ln(u) is finite.
  let u = ((x >> 11) + 1) as f64 / (1u64 << 53) as f64;
  let level = (-u.ln() / (m as f64).ln()).floor();
  level.min(f64::from(MAX_LEVEL)) as u8
}

pub(crate) struct Graph {
  pub(crate) params: IndexParams,
  /// `len × dim` values, row = label; normalised for cosine. Rows past `links.len()` are
  /// pending: stored, not linked yet (see build.rs).
  pub(crate) vectors: Vec<f32>,
  /// `links[label][layer]` for layers 0..=level of each linked point.
  pub(crate) links: Vec<Vec<Vec<u32>>>,
  /// (label, level) of the entry point: the first point to reach the top level.
  pub(crate) entry: Option<(u32, u8)>,
  /// 8-bit codes of the vectors the construction walks on (build.rs); always those
  /// `Codes::build` makes from the vectors encoded so far, so never saved.
  pub(crate) codes: Option<Codes>,
  /// Σ a and Σ a² of each row of `codes` (the VNNI form of the code distance, code_dot.rs).
  pub(crate) code_sums: RowSums,
}

impl Graph {
  pub(crate) fn new(params: IndexParams) -> Graph {
    Graph {
      params,
      vectors: Vec::new(),
      links: Vec::new(),
      entry: None,
      codes: None,
      code_sums: RowSums::default(),
    }
  }

  /// Stored vectors, pending ones included.
  pub(crate) fn len(&self) -> usize {
    self.vectors.len() / self.params.dim
  }

  /// Points linked into the graph (labels 0..linked).
  pub(crate) fn linked(&self) -> usize {
    self.links.len()
  }

  #[inline]
  pub(crate) fn vector(&self, label: u32) -> &[f32] {
    let dim = self.params.dim;
    &self.vectors[label as usize * dim..(label as usize + 1) * dim]
  }

  #[inline]
  pub(crate) fn dist(&self, query: &[f32], label: u32) -> f32 {
    distance(self.params.space, query, self.vector(label))
  }

  pub(crate) fn space(&self) -> Space {
    self.params.space
  }

  /// The linked graph as the plain lists a search view is made from.
  pub(crate) fn parts(&self) -> GraphParts {
    let mut upper = std::collections::HashMap::new();
    for (label, lists) in self.links.iter().enumerate() {
      if lists.len() > 1 {
        upper.insert(label as u32, lists[1..].to_vec());
      }
    }
    GraphParts {
      l0: self.links.iter().map(|l| l[0].clone()).collect(),
      upper,
      entry: self.entry,
    }
  }

  /// Layer-0 lists of the linked points as parallel (src, dst) arrays, in label order (the
  /// lists a search view would be made from, without making one).
  pub(crate) fn layer0_edges(&self) -> (Vec<u32>, Vec<u32>) {
    let total = self.links.iter().map(|l| l[0].len()).sum();
    let (mut src, mut dst) = (Vec::with_capacity(total), Vec::with_capacity(total));
    for (label, lists) in self.links.iter().enumerate() {
      src.extend(std::iter::repeat_n(label as u32, lists[0].len()));
      dst.extend_from_slice(&lists[0]);
    }
    (src, dst)
  }

  /// The graph of an index file (container.rs), every point linked.
  pub(crate) fn from_parts(params: IndexParams, vectors: Vec<f32>, parts: GraphParts) -> Graph {
    let mut upper = parts.upper;
    let links = parts
      .l0
      .into_iter()
      .enumerate()
      .map(|(label, l0)| {
        let mut lists = vec![l0];
        lists.extend(upper.remove(&(label as u32)).unwrap_or_default());
        lists
      })
      .collect();
    Graph {
      params,
      vectors,
      links,
      entry: parts.entry,
      codes: None,
      code_sums: RowSums::default(),
    }
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn levels_follow_the_hnsw_distribution() {
    let m = 16;
    let n = 200_000u32;
    let mut counts = [0usize; 16];
    for label in 0..n {
      counts[level_of(label, m) as usize] += 1;
    }
    // P(level ≥ 1) = 1/m, P(level ≥ 2) = 1/m².
    let above0 = (n as usize - counts[0]) as f64 / n as f64;
    let above1 = (n as usize - counts[0] - counts[1]) as f64 / n as f64;
    assert!((above0 - 1.0 / 16.0).abs() < 0.003, "{above0}");
    assert!((above1 - 1.0 / 256.0).abs() < 0.001, "{above1}");
  }
}
