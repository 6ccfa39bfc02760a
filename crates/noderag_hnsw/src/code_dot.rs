//! The construction's code distance (build.rs) through the VNNI dot-product instruction.
//!
//! The beam walk of a construction compares 8-bit code rows (quantized.rs) thousands of
//! times per inserted point. `code_l2` widens bytes to 16 bits and squares them: about ten
//! instructions per 32 bytes. With AVX-VNNI, `vpdpbusd` multiplies 32 unsigned bytes by 32
//! signed bytes and adds them in groups of four to eight 32-bit sums in one instruction,
//! so the distance is computed as
//!
//! ```text
//! Σ (a − b)² = Σ a² + Σ b² − 2 Σ a·b,   Σ a·b = Σ a·(b − 128) + 128 Σ a
//! ```
//!
//! with `b − 128` (the query's bytes with the top bit flipped) signed, and Σ a, Σ a² kept per
//! stored row ([`RowSums`]). Every term is an exact integer, so the result is the very
//! `code_l2` value, bit for bit: the graph does not depend on whether the CPU has VNNI
//! (the portable path calls `code_l2`). Rust 1.88 (the workspace's minimum) has no stable
//! VNNI intrinsic, hence the few lines of inline assembly; the CPU is asked with CPUID.
//! CPUs with AVX-512 VNNI but without AVX-VNNI (Ice Lake and Sapphire Rapids servers, Zen 4)
//! run the same instruction on the same 256-bit registers in its EVEX encoding (with
//! AVX512VL), which is what the peer bench's build machine has.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::quantized::code_l2;

/// Off only for measurements (`set_code_vnni`): the graph is the same either way.
static VNNI_ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns the VNNI path off or on (A/B measurements of examples/build_profile). The built
/// graph is the same either way.
#[doc(hidden)]
pub fn set_code_vnni(on: bool) {
  VNNI_ENABLED.store(on, Ordering::Relaxed);
}

/// Σ a and Σ a² of every stored code row, in label order.
#[derive(Default)]
pub(crate) struct RowSums {
  sum: Vec<u32>,
  sq: Vec<u32>,
}

impl RowSums {
  pub(crate) fn clear(&mut self) {
    self.sum.clear();
    self.sq.clear();
  }

  pub(crate) fn len(&self) -> usize {
    self.sum.len()
  }

  /// Appends the sums of one code row.
  pub(crate) fn push(&mut self, row: &[u8]) {
    let (s, q) = sums(row);
    self.sum.push(s);
    self.sq.push(q);
  }
}

fn sums(row: &[u8]) -> (u32, u32) {
  row.iter().fold((0u32, 0u32), |(s, q), &x| {
    let x = u32::from(x);
    (s + x, q + x * x)
  })
}

/// A query code row prepared for [`CodeQuery::distance`].
pub(crate) struct CodeQuery<'a> {
  code: &'a [u8],
  /// The code with the top bit of every byte flipped: b − 128 as a signed byte.
  shifted: Vec<u8>,
  sq: u32,
  vnni: Vnni,
}

impl<'a> CodeQuery<'a> {
  pub(crate) fn new(code: &'a [u8]) -> CodeQuery<'a> {
    let vnni = if VNNI_ENABLED.load(Ordering::Relaxed) && code.len().is_multiple_of(32) {
      vnni_kind()
    } else {
      Vnni::None
    };
    CodeQuery {
      code,
      shifted: if vnni != Vnni::None {
        code.iter().map(|&b| b ^ 0x80).collect()
      } else {
        Vec::new()
      },
      sq: sums(code).1,
      vnni,
    }
  }

  /// Whether `distance` runs on the VNNI instruction (else it is `code_l2`).
  pub(crate) fn uses_vnni(&self) -> bool {
    self.vnni != Vnni::None
  }

  /// `code_l2(query, row)`: the squared L2 of two code rows of the same padded length;
  /// `label` indexes `sums`.
  #[inline]
  pub(crate) fn distance(&self, row: &[u8], sums: &RowSums, label: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if self.vnni != Vnni::None && row.len() == self.shifted.len() {
      let i = label as usize;
      // SAFETY: `vnni` is only set to the encoding the CPU runs (AVX-VNNI, or AVX-512 VNNI
      // with AVX512VL, both with AVX2), and the rows are whole multiples of 32 bytes of the
      // same length.
      let dot = unsafe {
        if self.vnni == Vnni::Vex {
          vnni::dot_u8_i8_vex(row, &self.shifted)
        } else {
          vnni::dot_u8_i8_evex(row, &self.shifted)
        }
      };
      let ab = i64::from(dot) + 128 * i64::from(sums.sum[i]);
      return (i64::from(sums.sq[i]) + i64::from(self.sq) - 2 * ab) as u32;
    }
    let _ = (sums, label);
    code_l2(self.code, row)
  }
}

/// Which encoding of `vpdpbusd` on 256-bit registers the CPU runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Vnni {
  None,
  /// AVX-VNNI.
  Vex,
  /// AVX-512 VNNI with AVX512VL (the OS saving the AVX-512 state: the std detection checks
  /// XCR0).
  Evex,
}

fn vnni_kind() -> Vnni {
  #[cfg(target_arch = "x86_64")]
  {
    use std::sync::OnceLock;
    static KIND: OnceLock<Vnni> = OnceLock::new();
    *KIND.get_or_init(|| {
      if has_avx_vnni() {
        Vnni::Vex
      } else if crate::distance::has_avx2()
        && is_x86_feature_detected!("avx512vnni")
        && is_x86_feature_detected!("avx512vl")
      {
        Vnni::Evex
      } else {
        Vnni::None
      }
    })
  }
  #[cfg(not(target_arch = "x86_64"))]
  Vnni::None
}

/// Whether the CPU runs AVX-VNNI (VEX-encoded `vpdpbusd` on 256-bit registers):
/// CPUID leaf 7, sub-leaf 1, EAX bit 4, on top of AVX2 (which also means the OS saves the
/// 256-bit registers).
pub fn has_avx_vnni() -> bool {
  #[cfg(target_arch = "x86_64")]
  {
    use std::sync::OnceLock;
    static VNNI: OnceLock<bool> = OnceLock::new();
    *VNNI.get_or_init(|| {
      if !crate::distance::has_avx2() {
        return false;
      }
      // CPUID exists on every x86_64 CPU; leaf 7 is reported by any CPU with AVX2. (The
      // intrinsic is safe in newer Rust, unsafe in 1.88.)
      #[allow(unused_unsafe)]
      let max_sub = unsafe { std::arch::x86_64::__cpuid_count(7, 0) }.eax;
      #[allow(unused_unsafe)]
      let eax = unsafe { std::arch::x86_64::__cpuid_count(7, 1) }.eax;
      max_sub >= 1 && eax & (1 << 4) != 0
    })
  }
  #[cfg(not(target_arch = "x86_64"))]
  false
}

#[cfg(target_arch = "x86_64")]
mod vnni {
  use std::arch::asm;
  use std::arch::x86_64::*;

  /// One `dot_u8_i8` per encoding of `vpdpbusd`: `{vex}` (AVX-VNNI) or `{evex}` (AVX-512
  /// VNNI with AVX512VL). Same registers, same arithmetic, same result.
  macro_rules! dot_u8_i8 {
    ($name:ident, $prefix:literal) => {
      /// Σ a[i]·(b[i] as i8) over the common length rounded down to 32 bytes: four independent
      /// `vpdpbusd` chains of 128 bytes (its latency is several cycles), then single steps.
      #[target_feature(enable = "avx2,fma")]
      pub(super) unsafe fn $name(a: &[u8], b: &[u8]) -> i32 {
        let n = a.len().min(b.len()) & !31;
        let (mut pa, mut pb) = (a.as_ptr(), b.as_ptr());
        let mut big = n / 128;
        let mut small = (n % 128) / 32;
        let (s0, s1, s2, s3): (__m256i, __m256i, __m256i, __m256i);
        // SAFETY: reads `n` bytes of each slice (big·128 + small·32 = n); `vpdpbusd` is only
        // reached when the caller checked that the CPU runs this encoding.
        unsafe {
          asm!(
            "vpxor {s0:y}, {s0:y}, {s0:y}",
            "vpxor {s1:y}, {s1:y}, {s1:y}",
            "vpxor {s2:y}, {s2:y}, {s2:y}",
            "vpxor {s3:y}, {s3:y}, {s3:y}",
            "test {big}, {big}",
            "jz 3f",
            "2:",
            "vmovdqu {t0:y}, ymmword ptr [{pa}]",
            "vmovdqu {t1:y}, ymmword ptr [{pa} + 32]",
            "vmovdqu {t2:y}, ymmword ptr [{pa} + 64]",
            "vmovdqu {t3:y}, ymmword ptr [{pa} + 96]",
            concat!($prefix, " vpdpbusd {s0:y}, {t0:y}, ymmword ptr [{pb}]"),
            concat!($prefix, " vpdpbusd {s1:y}, {t1:y}, ymmword ptr [{pb} + 32]"),
            concat!($prefix, " vpdpbusd {s2:y}, {t2:y}, ymmword ptr [{pb} + 64]"),
            concat!($prefix, " vpdpbusd {s3:y}, {t3:y}, ymmword ptr [{pb} + 96]"),
            "add {pa}, 128",
            "add {pb}, 128",
            "dec {big}",
            "jnz 2b",
            "3:",
            "test {small}, {small}",
            "jz 5f",
            "4:",
            "vmovdqu {t0:y}, ymmword ptr [{pa}]",
            concat!($prefix, " vpdpbusd {s0:y}, {t0:y}, ymmword ptr [{pb}]"),
            "add {pa}, 32",
            "add {pb}, 32",
            "dec {small}",
            "jnz 4b",
            "5:",
            pa = inout(reg) pa,
            pb = inout(reg) pb,
            big = inout(reg) big,
            small = inout(reg) small,
            s0 = out(ymm_reg) s0,
            s1 = out(ymm_reg) s1,
            s2 = out(ymm_reg) s2,
            s3 = out(ymm_reg) s3,
            t0 = out(ymm_reg) _,
            t1 = out(ymm_reg) _,
            t2 = out(ymm_reg) _,
            t3 = out(ymm_reg) _,
            options(nostack, readonly),
          );
        }
        let _ = (pa, pb, big, small);
        let s = _mm256_add_epi32(_mm256_add_epi32(s0, s1), _mm256_add_epi32(s2, s3));
        let s = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256::<1>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
        _mm_cvtsi128_si32(s)
      }
    };
  }

  dot_u8_i8!(dot_u8_i8_vex, "{{vex}}");
  dot_u8_i8!(dot_u8_i8_evex, "{{evex}}");
}

#[cfg(test)]
mod tests {
  use super::*;

  /// Rows of every byte value, extremes included: the VNNI path (where the CPU has it)
  /// gives exactly `code_l2`.
  #[test]
  fn distance_equals_code_l2_bit_for_bit() {
    let mut state = 7u64;
    let mut byte = || {
      state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
      (state >> 56) as u8
    };
    for len in [32usize, 64, 96, 128, 160, 256, 1536] {
      let mut rows: Vec<Vec<u8>> = (0..20).map(|_| (0..len).map(|_| byte()).collect()).collect();
      rows.push(vec![0; len]);
      rows.push(vec![255; len]);
      let mut sums = RowSums::default();
      for r in &rows {
        sums.push(r);
      }
      for q in &rows {
        let query = CodeQuery::new(q);
        for (label, r) in rows.iter().enumerate() {
          assert_eq!(query.distance(r, &sums, label as u32), code_l2(q, r), "len {len}");
        }
      }
    }
  }
}
