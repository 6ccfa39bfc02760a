//! Dictionary encoding of a string column: each distinct value once, and one key per row.
//!
//! The edge tables hold millions of rows but only as many distinct ids as the graph has
//! nodes. Turning every row into a JS string is what dominated loading a large index;
//! encoded, only the distinct values cross the addon boundary and the rows travel as one
//! `Int32Array` of keys.

use std::collections::HashMap;

use crate::table::Strings;

/// `values` holds each distinct non-null value of the column once, in first-seen order;
/// row `i` is `values[keys[i]]`, or null when `keys[i]` is [`NULL_KEY`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DictionaryStrings {
  pub keys: Vec<i32>,
  pub values: Strings,
}

/// The key of a null row.
pub const NULL_KEY: i32 = -1;

/// Encodes `column`. Fails only when the column has more than 2^31 − 1 distinct values.
pub fn dictionary_encode(column: &Strings) -> Option<DictionaryStrings> {
  let mut keys = Vec::with_capacity(column.len());
  let mut values = Strings::new();
  let mut seen: HashMap<&[u8], i32> = HashMap::new();
  for i in 0..column.len() {
    let Some(bytes) = column.get_bytes(i) else {
      keys.push(NULL_KEY);
      continue;
    };
    let next = i32::try_from(values.len()).ok()?;
    let key = *seen.entry(bytes).or_insert_with(|| {
      values.push_bytes(bytes);
      next
    });
    keys.push(key);
  }
  Some(DictionaryStrings { keys, values })
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn distinct_values_in_first_seen_order_with_one_key_per_row() {
    let column = Strings::from_options([Some("b"), Some("a"), None, Some("b"), Some(""), Some("a")]);
    let d = dictionary_encode(&column).unwrap();
    assert_eq!(d.keys, vec![0, 1, NULL_KEY, 0, 2, 1]);
    assert_eq!(d.values, Strings::from_strs(["b", "a", ""]));
    for (i, &k) in d.keys.iter().enumerate() {
      let decoded = (k != NULL_KEY).then(|| d.values.get(k as usize).unwrap());
      assert_eq!(decoded, column.get(i));
    }
  }

  #[test]
  fn an_empty_column_has_no_keys_and_no_values() {
    let d = dictionary_encode(&Strings::new()).unwrap();
    assert!(d.keys.is_empty() && d.values.is_empty());
  }
}
