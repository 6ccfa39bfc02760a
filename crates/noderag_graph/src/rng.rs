//! A tiny deterministic PRNG. SplitMix64 is fully specified by its few lines, so every
//! platform and every future build draws the same numbers for seed 42 (an external crate's
//! algorithm could change under a version bump).

#[derive(Clone, Debug)]
pub struct SplitMix64 {
  state: u64,
}

impl SplitMix64 {
  pub fn new(seed: u64) -> Self {
    Self { state: seed }
  }

  pub fn next_u64(&mut self) -> u64 {
    self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = self.state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
  }

  /// Uniform in [0, 1) with 53 random bits.
  pub fn next_f64(&mut self) -> f64 {
    (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
  }

  /// Uniform integer in [0, n) (Lemire's multiply-shift with rejection: unbiased).
  pub fn below(&mut self, n: u64) -> u64 {
    assert!(n > 0, "below(0)");
    let threshold = n.wrapping_neg() % n;
    loop {
      let m = (self.next_u64() as u128) * (n as u128);
      if (m as u64) >= threshold {
        return (m >> 64) as u64;
      }
    }
  }

  /// Fisher–Yates shuffle, from the last element down.
  pub fn shuffle<T>(&mut self, items: &mut [T]) {
    for i in (1..items.len()).rev() {
      let j = self.below(i as u64 + 1) as usize;
      items.swap(i, j);
    }
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn reproducible_and_in_range() {
    let mut a = SplitMix64::new(42);
    let mut b = SplitMix64::new(42);
    for _ in 0..1000 {
      let x = a.below(7);
      assert_eq!(x, b.below(7));
      assert!(x < 7);
      let f = a.next_f64();
      assert_eq!(f, b.next_f64());
      assert!((0.0..1.0).contains(&f));
    }
    let mut v: Vec<u32> = (0..50).collect();
    SplitMix64::new(42).shuffle(&mut v);
    let mut sorted = v.clone();
    sorted.sort();
    assert_eq!(sorted, (0..50).collect::<Vec<_>>());
    assert_ne!(v, sorted);
  }
}
