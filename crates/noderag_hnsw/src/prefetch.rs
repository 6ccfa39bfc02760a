//! Prefetch hints: the graph's walks read vectors and code rows scattered over an index
//! larger than the cache, so they ask for them a few steps before they are needed.

/// Prefetch hints for every 64-byte line of `bytes` bytes from `p`.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn prefetch_bytes(p: *const i8, bytes: usize) {
  use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
  for offset in (0..bytes).step_by(64) {
    // SAFETY: prefetch is a hint; it never faults, even on an invalid address, and
    // `offset` stays inside the object anyway.
    unsafe { _mm_prefetch(p.wrapping_add(offset), _MM_HINT_T0) };
  }
}
