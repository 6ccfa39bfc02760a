//! Byte offsets → UTF-16 code-unit offsets (what JS string indices are).

/// Maps ascending byte offsets (character boundaries of `text`) to UTF-16 offsets, in one pass.
pub fn utf16_offsets(text: &str, byte_offsets: &[usize]) -> Vec<u32> {
  let mut out = Vec::with_capacity(byte_offsets.len());
  let mut chars = text.char_indices().peekable();
  let mut units = 0u32;
  for &b in byte_offsets {
    while let Some(&(i, ch)) = chars.peek() {
      if i >= b {
        break;
      }
      units += ch.len_utf16() as u32;
      chars.next();
    }
    out.push(units);
  }
  out
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn offsets_count_surrogate_pairs_as_two() {
    let t = "a🙂é居x";
    let bytes = [0, 1, 5, 7, 10, 11];
    assert_eq!(utf16_offsets(t, &bytes), vec![0, 1, 3, 4, 5, 6]);
  }
}
