//! Exact (brute-force) search over one flat f32 slice: the recall oracle in tests, and what
//! an index answers with while it is small (see `EXACT_SEARCH_BELOW`).

use crate::distance::{dot_and_norm, l2_squared, normalize, Space};
use crate::error::{HnswError, Result};
use crate::topk::{Hit, SearchResult, TopK};

/// Checks that `vectors` is a whole number of rows of `dim` finite values.
pub(crate) fn check_vectors(vectors: &[f32], dim: usize, what: &str) -> Result<usize> {
  if dim == 0 {
    return Err(HnswError::InvalidArgument("dimension must be at least 1".into()));
  }
  if !vectors.len().is_multiple_of(dim) {
    return Err(HnswError::InvalidArgument(format!(
      "{what} has {} values, which is not a multiple of the dimension {dim}",
      vectors.len()
    )));
  }
  // A fold without early exit vectorises; the position is looked up only on failure.
  if !vectors.iter().fold(true, |ok, x| ok & x.is_finite()) {
    let i = vectors.iter().position(|x| !x.is_finite()).unwrap_or(0);
    return Err(HnswError::InvalidArgument(format!(
      "{what} holds a non-finite value ({}) at row {}, column {}",
      vectors[i],
      i / dim,
      i % dim
    )));
  }
  Ok(vectors.len() / dim)
}

pub(crate) fn check_query(query: &[f32], dim: usize) -> Result<()> {
  if query.len() != dim {
    return Err(HnswError::InvalidArgument(format!(
      "query has {} values, expected the index dimension {dim}",
      query.len()
    )));
  }
  check_vectors(query, dim, "query").map(|_| ())
}

/// The `k` nearest rows of `vectors` (row i has label i) to `query`, sorted by
/// (distance, label); `k` is clamped to the number of rows. Cosine normalises the query
/// and divides by each row's norm on the fly, so `vectors` need not be normalised.
pub fn exact_search(
  vectors: &[f32],
  dim: usize,
  space: Space,
  query: &[f32],
  k: usize,
) -> Result<SearchResult> {
  let n = check_vectors(vectors, dim, "vectors")?;
  check_query(query, dim)?;
  if n > u32::MAX as usize {
    return Err(HnswError::InvalidArgument(format!(
      "{n} vectors exceed the u32 label range"
    )));
  }
  let mut top = TopK::new(k.min(n));
  match space {
    Space::L2 => {
      for (i, row) in vectors.chunks_exact(dim).enumerate() {
        top.push(Hit {
          dist: l2_squared(query, row),
          label: i as u32,
        });
      }
    }
    Space::Cosine => {
      let mut q = query.to_vec();
      normalize(&mut q);
      for (i, row) in vectors.chunks_exact(dim).enumerate() {
        let (d, nn) = dot_and_norm(&q, row);
        let dist = if nn > 0.0 {
          (1.0 - d / nn.sqrt()).max(0.0)
        } else {
          1.0
        };
        top.push(Hit {
          dist,
          label: i as u32,
        });
      }
    }
  }
  Ok(top.into_result())
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn sorts_by_distance_then_label_and_clamps_k() {
    // rows 1 and 2 are the same point: the tie goes to the smaller label.
    let v = [0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 5.0, 5.0];
    let r = exact_search(&v, 2, Space::L2, &[1.0, 0.1], 10).unwrap();
    assert_eq!(r.labels, vec![1, 2, 0, 3]);
    assert!((r.distances[0] - 0.01).abs() < 1e-6);
    assert!(r.distances.windows(2).all(|w| w[0] <= w[1]));
  }

  #[test]
  fn cosine_ignores_length() {
    let v = [10.0, 0.0, 0.0, 0.5, 3.0, 3.0];
    let r = exact_search(&v, 2, Space::Cosine, &[0.0, 2.0], 3).unwrap();
    assert_eq!(r.labels, vec![1, 2, 0]);
    assert!(r.distances[0].abs() < 1e-6);
    assert!((r.distances[2] - 1.0).abs() < 1e-6);
  }

  #[test]
  fn rejects_bad_shapes_and_non_finite_values() {
    assert!(matches!(
      exact_search(&[1.0, 2.0, 3.0], 2, Space::L2, &[0.0, 0.0], 1),
      Err(HnswError::InvalidArgument(_))
    ));
    assert!(matches!(
      exact_search(&[1.0, 2.0], 2, Space::L2, &[0.0], 1),
      Err(HnswError::InvalidArgument(_))
    ));
    assert!(matches!(
      exact_search(&[1.0, f32::NAN], 2, Space::L2, &[0.0, 0.0], 1),
      Err(HnswError::InvalidArgument(_))
    ));
  }
}
