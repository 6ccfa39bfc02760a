//! hnsw_graph.parquet, the similarity edges of the HNSW stage (docs/method.md §3.9): every
//! layer-0 link of the vector index between active labels of two different nodes, as an
//! undirected node pair, once, in file order (by source, then target, as JS compares strings),
//! the smaller id as source.
//!
//! Made here from the labels' node ids and the links, not as one JS row object and two JS
//! strings per edge crossing to the writer: a 10 MB corpus has 2.1 million of them, and the
//! rows, their sort and their crossing cost the HNSW stage about 3 s of each build.

use std::cmp::Ordering;
use std::path::Path;

use crate::{write_table_with, Column, ColumnData, Result, Strings, Table, WriteOptions};

/// UTF-16 code-unit order, as JS `<` compares strings (byte order for ASCII, which hash ids are).
fn js_order(a: &str, b: &str) -> Ordering {
  if a.is_ascii() && b.is_ascii() {
    a.as_bytes().cmp(b.as_bytes())
  } else {
    a.encode_utf16().cmp(b.encode_utf16())
  }
}

/// The table's two columns, `source` and `target`. `label_nodes[l]` is the node of label `l`,
/// `retired[l] != 0` when it is retired; links naming a label past the map are ignored.
pub fn similarity_table(label_nodes: &[&str], retired: &[u8], src: &[u32], dst: &[u32]) -> Table<'static> {
  let mut nodes: Vec<&str> = label_nodes.to_vec();
  nodes.sort_unstable_by(|a, b| js_order(a, b));
  nodes.dedup();
  let u = nodes.len() as u64;
  // A label's rank is its node's place among the distinct nodes; None when retired.
  let rank: Vec<Option<u64>> = label_nodes
    .iter()
    .enumerate()
    .map(|(label, node)| {
      if retired.get(label).is_some_and(|&r| r != 0) {
        None
      } else {
        let place = nodes
          .binary_search_by(|probe| js_order(probe, node))
          .expect("a label's node is listed");
        Some(place as u64)
      }
    })
    .collect();
  let rank_of = |label: u32| rank.get(label as usize).copied().flatten();
  // A pair is lo·u + hi: one sort orders the pairs as the file wants them and puts repeats side by side.
  let mut keys: Vec<u64> = src
    .iter()
    .zip(dst)
    .filter_map(|(&a, &b)| match (rank_of(a), rank_of(b)) {
      (Some(ra), Some(rb)) if ra != rb => Some(ra.min(rb) * u + ra.max(rb)),
      _ => None,
    })
    .collect();
  keys.sort_unstable();
  keys.dedup();
  let mut sources = Strings::with_capacity(keys.len(), 0);
  let mut targets = Strings::with_capacity(keys.len(), 0);
  for key in keys {
    sources.push_bytes(nodes[(key / u) as usize].as_bytes());
    targets.push_bytes(nodes[(key % u) as usize].as_bytes());
  }
  Table::new(vec![
    Column::new("source", ColumnData::Utf8(sources)),
    Column::new("target", ColumnData::Utf8(targets)),
  ])
}

/// Writes [`similarity_table`] to `path` atomically; returns its number of rows. Each id
/// appears in about 19 rows on the 10 MB corpus (2.1M edges, 112k labels), so both columns
/// keep their whole dictionary.
pub fn write_similarity_table(
  path: &Path,
  label_nodes: &[&str],
  retired: &[u8],
  src: &[u32],
  dst: &[u32],
) -> Result<usize> {
  let table = similarity_table(label_nodes, retired, src, dst);
  let options = WriteOptions {
    whole_dictionary: &["source", "target"],
  };
  write_table_with(path, &table, &options).map(|()| table.num_rows)
}

#[cfg(test)]
mod tests {
  use super::*;

  fn pairs(t: &Table<'_>) -> Vec<(String, String)> {
    let col = |name: &str| match &t.column(name).expect("column").data {
      ColumnData::Utf8(s) => (0..s.len())
        .map(|i| s.get(i).expect("value").to_owned())
        .collect::<Vec<_>>(),
      _ => panic!("utf8"),
    };
    col("source").into_iter().zip(col("target")).collect()
  }

  #[test]
  fn pairs_once_in_js_order_without_retired_labels_or_self_links() {
    // Labels 0..4: b, a, c (retired), a (a second label of a), d.
    let nodes = ["b", "a", "c", "a", "d"];
    let retired = [0, 0, 1, 0, 0];
    let src = [0, 1, 2, 1, 4, 0, 9];
    let dst = [1, 0, 0, 3, 3, 4, 0];
    let t = similarity_table(&nodes, &retired, &src, &dst);
    let want = [("a", "b"), ("a", "d"), ("b", "d")];
    let want: Vec<(String, String)> = want
      .iter()
      .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
      .collect();
    assert_eq!(pairs(&t), want);
  }

  #[test]
  fn non_ascii_ids_follow_utf16_order() {
    // U+1F600 is a surrogate pair (0xD83D …) in UTF-16, before U+E000; in UTF-8 it is after.
    let nodes = ["\u{E000}", "\u{1F600}"];
    let t = similarity_table(&nodes, &[0, 0], &[0], &[1]);
    assert_eq!(pairs(&t), vec![("\u{1F600}".to_owned(), "\u{E000}".to_owned())]);
  }

  #[test]
  fn written_file_keeps_a_dictionary_past_one_mebibyte_of_ids() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    // 24k distinct 64-byte ids (1.5 MiB, past parquet-rs' 1 MiB dictionary page default),
    // each linked to 8 others: 192k links.
    let ids: Vec<String> = (0..24_000u32).map(|i| format!("{i:064x}")).collect();
    let nodes: Vec<&str> = ids.iter().map(String::as_str).collect();
    let n = nodes.len() as u32;
    let (mut src, mut dst) = (Vec::new(), Vec::new());
    for a in 0..n {
      for k in 1..=8u32 {
        src.push(a);
        dst.push((a * 7 + k * 131) % n);
      }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hnsw_graph.parquet");
    let rows = write_similarity_table(&path, &nodes, &vec![0; nodes.len()], &src, &dst).unwrap();
    let table = similarity_table(&nodes, &vec![0; nodes.len()], &src, &dst);
    assert_eq!(rows, table.num_rows);

    let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    for g in 0..reader.num_row_groups() {
      let group = reader.get_row_group(g).unwrap();
      for c in 0..group.num_columns() {
        // Every data page dictionary-encoded: no fallback to plain values.
        for page in group.get_column_page_reader(c).unwrap() {
          let page = page.unwrap();
          if page.page_type() != parquet::basic::PageType::DICTIONARY_PAGE {
            assert_eq!(
              page.encoding(),
              parquet::basic::Encoding::RLE_DICTIONARY,
              "column {c}"
            );
          }
        }
      }
    }
    let back = crate::read_table(&path, &crate::ReadOptions::default()).unwrap();
    assert_eq!(pairs(&back), pairs(&table));
  }
}
