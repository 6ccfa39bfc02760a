//! A small deterministic generator for the crate's randomised tests (xorshift64; no dependency).

pub(crate) struct Rng(pub(crate) u64);

impl Rng {
  pub(crate) fn next(&mut self) -> u64 {
    self.0 ^= self.0 << 13;
    self.0 ^= self.0 >> 7;
    self.0 ^= self.0 << 17;
    self.0
  }

  pub(crate) fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
    xs[(self.next() % xs.len() as u64) as usize]
  }
}
