//! Write/read throughput of an embeddings table, without Node, and a comparison of codec
//! settings for the embedding column. CPU seconds (from /proc/self/stat, so other load on
//! the machine does not count) and wall seconds, best of 3.
//!
//!   cargo run --release -p noderag_store --example throughput -- [rows] [dim]
//!   cargo run --release -p noderag_store --example throughput -- 50000 1536 --codecs

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use arrow_array::{ArrayRef, FixedSizeListArray, Float32Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use noderag_store::{read_table, write_table, Column, ColumnData, ReadOptions, Strings, Table};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

/// Process CPU seconds (user + system). Linux only; 0 elsewhere.
fn cpu() -> f64 {
  let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
    return 0.0;
  };
  let f: Vec<&str> = s.rsplit(')').next().unwrap_or("").split_whitespace().collect();
  let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
  (tick(11) + tick(12)) / 100.0
}

/// Best (cpu, wall) of 3 runs of `f`.
fn best_of_3(mut f: impl FnMut()) -> (f64, f64) {
  let (mut c, mut w) = (f64::MAX, f64::MAX);
  for _ in 0..3 {
    let (c0, w0) = (cpu(), Instant::now());
    f();
    c = c.min(cpu() - c0);
    w = w.min(w0.elapsed().as_secs_f64());
  }
  (c, w)
}

/// Fixed-seed vectors with components spread like model embeddings (small, noisy).
fn vectors(rows: usize, dim: usize) -> Vec<f32> {
  let mut x: u32 = 42;
  (0..rows * dim)
    .map(|_| {
      x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
      ((x as f64 / 4_294_967_296.0 - 0.5) * 0.05) as f32
    })
    .collect()
}

fn main() {
  let args: Vec<String> = std::env::args().skip(1).collect();
  let rows: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(100_000);
  let dim: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1536);
  let vals = vectors(rows, dim);
  let dir = tempfile::tempdir().expect("temp dir");
  let raw_mb = (rows * dim * 4) as f64 / 1e6;

  let hash: Vec<String> = (0..rows)
    .map(|i| format!("{:064x}", (i as u128).wrapping_mul(0x9e37_79b9_7f4a_7c15)))
    .collect();
  let table = Table::new(vec![
    Column::new(
      "text_id",
      ColumnData::Int64 {
        values: Cow::Owned((0..rows as i64).collect()),
        validity: None,
      },
    ),
    Column::new(
      "hash_id",
      ColumnData::Utf8(Strings::from_strs(hash.iter().map(String::as_str))),
    ),
    Column::new(
      "embedding",
      ColumnData::Embedding {
        dim,
        values: Cow::Borrowed(&vals),
        validity: None,
      },
    ),
  ]);
  let path = dir.path().join("t.parquet");
  let (wc, ww) = best_of_3(|| write_table(&path, &table).expect("write"));
  let size = std::fs::metadata(&path).expect("stat").len() as f64 / 1e6;
  let (rc, rw) = best_of_3(|| drop(read_table(&path, &ReadOptions::default()).expect("read")));
  println!("{rows} rows × {dim} dims ({raw_mb:.0} MB of floats) → {size:.0} MB file");
  println!(
    "write_table: {wc:.2} s CPU ({:.0} MB/s), {ww:.2} s wall",
    raw_mb / wc
  );
  println!(
    "read_table:  {rc:.2} s CPU ({:.0} MB/s), {rw:.2} s wall",
    raw_mb / rc
  );

  if !args.iter().any(|a| a == "--codecs") {
    return;
  }
  // The embedding column alone under other writer settings (same batching as ours).
  let item = Arc::new(Field::new("item", DataType::Float32, true));
  let schema = Arc::new(Schema::new(vec![Field::new(
    "e",
    DataType::FixedSizeList(item.clone(), dim as i32),
    true,
  )]));
  let zstd = |l| Compression::ZSTD(ZstdLevel::try_new(l).expect("level"));
  for (label, comp, bss) in [
    ("zstd 3", zstd(3), false),
    ("zstd 1", zstd(1), false),
    ("zstd 3 + byte_stream_split", zstd(3), true),
    ("zstd 1 + byte_stream_split", zstd(1), true),
    ("uncompressed", Compression::UNCOMPRESSED, false),
  ] {
    let leaf = ColumnPath::new(vec!["e".into(), "list".into(), "item".into()]);
    let mut b = WriterProperties::builder()
      .set_compression(comp)
      .set_column_dictionary_enabled(leaf.clone(), false)
      .set_column_statistics_enabled(leaf.clone(), EnabledStatistics::None);
    if bss {
      b = b.set_column_encoding(leaf, Encoding::BYTE_STREAM_SPLIT);
    }
    let props = b.build();
    let p = dir.path().join("codec.parquet");
    let batch = (16usize << 20) / (4 * dim);
    let (c, _) = best_of_3(|| {
      let f = std::fs::File::create(&p).expect("create");
      let mut w = ArrowWriter::try_new(std::io::BufWriter::new(f), schema.clone(), Some(props.clone()))
        .expect("writer");
      for s in (0..rows).step_by(batch) {
        let e = (s + batch).min(rows);
        let child = Float32Array::new(vals[s * dim..e * dim].to_vec().into(), None);
        let arr = FixedSizeListArray::try_new(item.clone(), dim as i32, Arc::new(child), None).expect("fsl");
        w.write(&RecordBatch::try_new(schema.clone(), vec![Arc::new(arr) as ArrayRef]).expect("batch"))
          .expect("write");
      }
      w.close().expect("close");
    });
    let (rc, _) = best_of_3(|| drop(read_table(&p, &ReadOptions::default()).expect("read")));
    let size = std::fs::metadata(&p).expect("stat").len() as f64 / 1e6;
    println!(
      "{label:28} write {c:.2} s CPU, read {rc:.2} s CPU, {size:.0} MB ({:.0} % of raw)",
      100.0 * size / raw_mb
    );
  }
}
