//! Round trips and failure cases over real files in temp folders.

use std::borrow::Cow;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, LargeListBuilder, ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, Int16Array, LargeStringArray, RecordBatch};
use arrow_schema::{DataType, Field};
use parquet::arrow::ArrowWriter;
use parquet::file::reader::{FileReader, SerializedFileReader};

use crate::*;

fn v<T: Clone>(x: Vec<T>) -> Cow<'static, [T]> {
  Cow::Owned(x)
}

/// One column of every kind, with nulls in each, 4 rows.
fn every_kind() -> Table<'static> {
  Table::new(vec![
    Column::new(
      "s",
      ColumnData::Utf8(Strings::from_options([
        Some("a"),
        None,
        Some(""),
        Some("日本語 ✓"),
      ])),
    ),
    Column::new(
      "i64",
      ColumnData::Int64 {
        values: v(vec![1, 0, -3, i64::MAX]),
        validity: Some(v(vec![1, 0, 1, 1])),
      },
    ),
    Column::new(
      "i32",
      ColumnData::Int32 {
        values: v(vec![7, i32::MIN, 0, 9]),
        validity: Some(v(vec![1, 1, 0, 1])),
      },
    ),
    Column::new(
      "f64",
      ColumnData::Float64 {
        values: v(vec![0.5, -1e300, 0.0, f64::NAN]),
        validity: Some(v(vec![1, 1, 0, 1])),
      },
    ),
    Column::new(
      "b",
      ColumnData::Boolean {
        values: v(vec![1, 0, 0, 1]),
        validity: Some(v(vec![1, 1, 0, 1])),
      },
    ),
    Column::new(
      "ls",
      ColumnData::Utf8List {
        offsets: v(vec![0, 2, 2, 2, 5]),
        values: Strings::from_options([Some("x"), Some("y"), Some("p"), None, Some("")]),
        validity: Some(v(vec![1, 0, 1, 1])),
      },
    ),
    Column::new(
      "li",
      ColumnData::Int64List {
        offsets: v(vec![0, 1, 1, 4, 4]),
        values: v(vec![10, 20, 30, 40]),
        validity: Some(v(vec![1, 1, 1, 0])),
      },
    ),
    Column::new(
      "embedding",
      ColumnData::Embedding {
        dim: 3,
        values: v(vec![
          1.0, 2.0, 3.0, 0.0, 0.0, 0.0, -1.5, 0.25, 1e-7, 4.0, 5.0, 6.0,
        ]),
        validity: Some(v(vec![1, 0, 1, 1])),
      },
    ),
  ])
}

/// NaN != NaN, so compare tables through their Debug text (same value → same text).
fn assert_same(a: &Table<'_>, b: &Table<'_>) {
  assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

fn tmp() -> tempfile::TempDir {
  tempfile::tempdir().unwrap()
}

/// Writes like pyarrow/pandas by default: snappy, no ARROW:schema-driven types of ours.
fn write_arrow(path: &Path, batch: RecordBatch) {
  let props = parquet::file::properties::WriterProperties::builder()
    .set_compression(parquet::basic::Compression::SNAPPY)
    .build();
  let mut w = ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), Some(props)).unwrap();
  w.write(&batch).unwrap();
  w.close().unwrap();
}

#[test]
fn every_column_kind_round_trips_with_nulls() {
  let dir = tmp();
  let p = dir.path().join("t.parquet");
  let t = every_kind();
  write_table(&p, &t).unwrap();
  let back = read_table(&p, &ReadOptions::default()).unwrap();
  assert_same(&back, &t);
}

#[test]
fn columns_without_nulls_read_back_without_validity() {
  let dir = tmp();
  let p = dir.path().join("t.parquet");
  let t = Table::new(vec![
    Column::new(
      "id",
      ColumnData::Int64 {
        values: v(vec![1, 2]),
        validity: None,
      },
    ),
    Column::new(
      "e",
      ColumnData::Embedding {
        dim: 2,
        values: v(vec![1.0, 2.0, 3.0, 4.0]),
        validity: None,
      },
    ),
    Column::new("s", ColumnData::Utf8(Strings::from_strs(["a", "b"]))),
  ]);
  write_table(&p, &t).unwrap();
  assert_eq!(read_table(&p, &ReadOptions::default()).unwrap(), t);
}

#[test]
fn values_under_nulls_read_back_as_zero() {
  let dir = tmp();
  let p = dir.path().join("t.parquet");
  let t = Table::new(vec![
    Column::new(
      "i",
      ColumnData::Int64 {
        values: v(vec![5, 6]),
        validity: Some(v(vec![0, 1])),
      },
    ),
    Column::new(
      "e",
      ColumnData::Embedding {
        dim: 2,
        values: v(vec![9.0, 9.0, 3.0, 4.0]),
        validity: Some(v(vec![0, 1])),
      },
    ),
  ]);
  write_table(&p, &t).unwrap();
  let back = read_table(&p, &ReadOptions::default()).unwrap();
  assert_eq!(
    back.columns[0].data,
    ColumnData::Int64 {
      values: v(vec![0, 6]),
      validity: Some(v(vec![0, 1]))
    }
  );
  assert_eq!(
    back.columns[1].data,
    ColumnData::Embedding {
      dim: 2,
      values: v(vec![0.0, 0.0, 3.0, 4.0]),
      validity: Some(v(vec![0, 1]))
    }
  );
}

#[test]
fn empty_tables_round_trip_with_their_schema() {
  let dir = tmp();
  let p = dir.path().join("t.parquet");
  let t = Table {
    num_rows: 0,
    columns: vec![
      Column::new("s", ColumnData::Utf8(Strings::new())),
      Column::new(
        "li",
        ColumnData::Int64List {
          offsets: v(vec![0]),
          values: v(vec![]),
          validity: None,
        },
      ),
      Column::new(
        "e",
        ColumnData::Embedding {
          dim: 8,
          values: v(vec![]),
          validity: None,
        },
      ),
    ],
  };
  write_table(&p, &t).unwrap();
  let back = read_table(&p, &ReadOptions::default()).unwrap();
  assert_eq!(back, t);
  assert_eq!(validate_footer(&p).unwrap().num_rows, 0);
}

#[test]
fn many_rows_cross_batch_and_keep_order() {
  // More rows than one write batch (8,192) and one read batch.
  let dir = tmp();
  let p = dir.path().join("t.parquet");
  let n = 20_000usize;
  let dim = 4;
  let mut list_offsets = vec![0i32];
  let mut list_values = Strings::new();
  for i in 0..n {
    for j in 0..(i % 3) {
      list_values.push(Some(&format!("v{i}-{j}")));
    }
    list_offsets.push(list_values.len() as i32);
  }
  let t = Table::new(vec![
    Column::new(
      "id",
      ColumnData::Int64 {
        values: v((0..n as i64).collect()),
        validity: None,
      },
    ),
    Column::new(
      "name",
      ColumnData::Utf8(Strings::from_options(
        (0..n)
          .map(|i| i.to_string())
          .collect::<Vec<_>>()
          .iter()
          .map(|s| Some(s.as_str())),
      )),
    ),
    Column::new(
      "l",
      ColumnData::Utf8List {
        offsets: v(list_offsets),
        values: list_values,
        validity: None,
      },
    ),
    Column::new(
      "e",
      ColumnData::Embedding {
        dim,
        values: v((0..n * dim).map(|x| x as f32).collect()),
        validity: Some(v((0..n).map(|i| (i % 5 != 0) as u8).collect())),
      },
    ),
  ]);
  write_table(&p, &t).unwrap();
  let mut back = read_table(&p, &ReadOptions::default()).unwrap();
  // Null rows come back zeroed; zero them in the expectation too.
  if let ColumnData::Embedding { values, .. } = &mut t.clone().columns[3].data {
    let mut want = values.to_vec();
    for i in (0..n).step_by(5) {
      want[i * dim..(i + 1) * dim].fill(0.0);
    }
    let ColumnData::Embedding { values: got, .. } = &mut back.columns[3].data else {
      panic!()
    };
    assert_eq!(got.as_ref(), want.as_slice());
    *got = v(values.to_vec());
  }
  assert_eq!(back, t);
}

#[test]
fn writes_zstd_with_arrow_schema_and_fixed_size_list_item_child() {
  let dir = tmp();
  let p = dir.path().join("t.parquet");
  write_table(&p, &every_kind()).unwrap();
  let r = SerializedFileReader::new(File::open(&p).unwrap()).unwrap();
  let meta = r.metadata();
  let kv = meta.file_metadata().key_value_metadata().unwrap();
  assert!(
    kv.iter().any(|e| e.key == "ARROW:schema"),
    "ARROW:schema metadata kept"
  );
  for cc in meta.row_group(0).columns() {
    assert!(
      matches!(cc.compression(), parquet::basic::Compression::ZSTD(_)),
      "{} is {:?}",
      cc.column_path(),
      cc.compression()
    );
  }
  let leaf = meta
    .row_group(0)
    .columns()
    .iter()
    .find(|c| c.column_path().string().starts_with("embedding"))
    .unwrap();
  assert_eq!(leaf.column_path().string(), "embedding.list.item");
  // Our per-column settings must hit the embedding leaf (path above): no dictionary page,
  // byte-stream-split values.
  assert!(leaf.dictionary_page_offset().is_none());
  assert!(
    leaf
      .encodings()
      .any(|e| e == parquet::basic::Encoding::BYTE_STREAM_SPLIT),
    "{:?}",
    leaf.encodings().collect::<Vec<_>>()
  );

  let b =
    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(File::open(&p).unwrap()).unwrap();
  let f = b.schema().field_with_name("embedding").unwrap().clone();
  match f.data_type() {
    DataType::FixedSizeList(child, 3) => {
      assert_eq!(child.name(), "item");
      assert_eq!(child.data_type(), &DataType::Float32);
    }
    other => panic!("embedding written as {other}"),
  }
  assert_eq!(
    b.schema().field_with_name("s").unwrap().data_type(),
    &DataType::Utf8
  );
}

#[test]
fn same_table_gives_byte_identical_files() {
  let dir = tmp();
  let (a, b) = (dir.path().join("a.parquet"), dir.path().join("b.parquet"));
  write_table(&a, &every_kind()).unwrap();
  write_table(&b, &every_kind()).unwrap();
  assert_eq!(std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
}

#[test]
fn reads_list_of_double_embeddings_and_foreign_string_types() {
  // As pandas/pyarrow would write vectors from Python lists: list<double>, with a null row.
  let dir = tmp();
  let p = dir.path().join("py.parquet");
  let mut lb = ListBuilder::new(Float64Builder::new()).with_field(Arc::new(Field::new(
    "element",
    DataType::Float64,
    true,
  )));
  lb.append_null();
  lb.values().append_slice(&[0.5, 1.5]);
  lb.append(true);
  lb.values().append_slice(&[-2.0, 1e-3]);
  lb.append(true);
  let mut lsb = LargeListBuilder::new(StringBuilder::new());
  lsb.values().append_value("a");
  lsb.append(true);
  lsb.append(true);
  lsb.values().append_value("b");
  lsb.values().append_value("c");
  lsb.append(true);
  let names = LargeStringArray::from(vec![Some("x"), None, Some("z")]);
  let batch = RecordBatch::try_from_iter([
    ("emb", Arc::new(lb.finish()) as ArrayRef),
    ("tags", Arc::new(lsb.finish()) as ArrayRef),
    ("name", Arc::new(names) as ArrayRef),
  ])
  .unwrap();
  write_arrow(&p, batch);

  let t = read_table(&p, &ReadOptions::default()).unwrap();
  assert_eq!(
    t.columns[0].data,
    ColumnData::Embedding {
      dim: 2,
      values: v(vec![0.0, 0.0, 0.5, 1.5, -2.0, 1e-3]),
      validity: Some(v(vec![0, 1, 1]))
    }
  );
  assert_eq!(
    t.columns[1].data,
    ColumnData::Utf8List {
      offsets: v(vec![0, 1, 1, 3]),
      values: Strings::from_strs(["a", "b", "c"]),
      validity: None
    }
  );
  assert_eq!(
    t.columns[2].data,
    ColumnData::Utf8(Strings::from_options([Some("x"), None, Some("z")]))
  );

  // An expected dimension is checked against list vectors too.
  let req = ReadOptions {
    columns: Some(vec![ColumnRequest {
      name: "emb".into(),
      kind: Some(ColumnKind::Embedding),
      dim: Some(3),
    }]),
  };
  let e = read_table(&p, &req).unwrap_err();
  assert!(
    matches!(
      e,
      StoreError::DimensionMismatch {
        expected: 3,
        got: 2,
        ..
      }
    ),
    "{e}"
  );
}

#[test]
fn ragged_list_vectors_are_rejected_naming_the_column() {
  let dir = tmp();
  let p = dir.path().join("ragged.parquet");
  let mut lb = ListBuilder::new(Float64Builder::new());
  lb.values().append_slice(&[1.0, 2.0]);
  lb.append(true);
  lb.values().append_slice(&[1.0]);
  lb.append(true);
  write_arrow(
    &p,
    RecordBatch::try_from_iter([("vec", Arc::new(lb.finish()) as ArrayRef)]).unwrap(),
  );
  let e = read_table(&p, &ReadOptions::default()).unwrap_err();
  assert!(matches!(e, StoreError::Unsupported { .. }), "{e}");
  assert!(
    e.to_string().contains("`vec`") && e.to_string().contains("ragged.parquet"),
    "{e}"
  );
}

#[test]
fn projection_returns_the_requested_columns_in_the_requested_order() {
  let dir = tmp();
  let p = dir.path().join("t.parquet");
  let t = every_kind();
  write_table(&p, &t).unwrap();
  let opts = ReadOptions {
    columns: Some(vec![
      ColumnRequest::of("embedding", ColumnKind::Embedding),
      ColumnRequest::any("s"),
      ColumnRequest {
        name: "li".into(),
        kind: Some(ColumnKind::Int64List),
        dim: None,
      },
    ]),
  };
  let back = read_table(&p, &opts).unwrap();
  let names: Vec<&str> = back.columns.iter().map(|c| c.name.as_str()).collect();
  assert_eq!(names, ["embedding", "s", "li"]);
  assert_eq!(back.num_rows, 4);
  assert_eq!(back.columns[1], t.columns[0]);
  // Zero columns still report the row count.
  let none = read_table(
    &p,
    &ReadOptions {
      columns: Some(vec![]),
    },
  )
  .unwrap();
  assert_eq!((none.num_rows, none.columns.len()), (4, 0));
}

#[test]
fn missing_column_wrong_type_and_wrong_dim_are_typed_errors() {
  let dir = tmp();
  let p = dir.path().join("t.parquet");
  write_table(&p, &every_kind()).unwrap();
  let read1 = |req: ColumnRequest| {
    read_table(
      &p,
      &ReadOptions {
        columns: Some(vec![req]),
      },
    )
    .unwrap_err()
  };

  let e = read1(ColumnRequest::any("nope"));
  assert!(matches!(e, StoreError::MissingColumn { .. }));
  let msg = e.to_string();
  assert!(
    msg.contains("t.parquet") && msg.contains("`nope`") && msg.contains("i64, i32"),
    "{msg}"
  );

  let e = read1(ColumnRequest::of("ls", ColumnKind::Int64List));
  let msg = e.to_string();
  assert!(matches!(e, StoreError::WrongColumnType { .. }));
  assert!(
    msg.contains("expected int64_list") && msg.contains("utf8_list (Arrow List(Utf8)")
      || msg.contains("utf8_list (Arrow List("),
    "{msg}"
  );

  let e = read1(ColumnRequest {
    name: "embedding".into(),
    kind: Some(ColumnKind::Embedding),
    dim: Some(1536),
  });
  assert!(
    matches!(
      e,
      StoreError::DimensionMismatch {
        expected: 1536,
        got: 3,
        ..
      }
    ),
    "{e}"
  );
  assert!(e.to_string().contains("`embedding`"));
}

#[test]
fn unsupported_file_types_are_named() {
  let dir = tmp();
  let p = dir.path().join("i16.parquet");
  write_arrow(
    &p,
    RecordBatch::try_from_iter([("small", Arc::new(Int16Array::from(vec![1i16])) as ArrayRef)]).unwrap(),
  );
  let e = read_table(&p, &ReadOptions::default()).unwrap_err();
  assert!(matches!(e, StoreError::Unsupported { .. }), "{e}");
  let e = read_table(
    &p,
    &ReadOptions {
      columns: Some(vec![ColumnRequest::of("small", ColumnKind::Int64)]),
    },
  )
  .unwrap_err();
  assert!(e.to_string().contains("expected int64"), "{e}");
}

#[test]
fn missing_file_is_not_found_naming_the_file() {
  let dir = tmp();
  let p = dir.path().join("absent.parquet");
  for e in [
    read_table(&p, &ReadOptions::default()).unwrap_err(),
    validate_footer(&p).unwrap_err(),
  ] {
    assert!(matches!(e, StoreError::NotFound { .. }), "{e:?}");
    assert!(e.to_string().contains("absent.parquet"));
  }
}

#[test]
fn corrupt_and_truncated_files_are_corrupt_errors_naming_the_file() {
  let dir = tmp();
  let good = dir.path().join("good.parquet");
  write_table(&good, &every_kind()).unwrap();
  let bytes = std::fs::read(&good).unwrap();

  let cases: Vec<(&str, Vec<u8>)> = vec![
    ("empty.parquet", vec![]),
    (
      "text.parquet",
      b"this is not parquet at all, just some text".to_vec(),
    ),
    ("truncated.parquet", bytes[..bytes.len() / 2].to_vec()),
    ("no_tail.parquet", bytes[..bytes.len() - 3].to_vec()),
    ("footer_garbage.parquet", {
      // Keep the magic and footer length, scramble the footer itself.
      let mut b = bytes.clone();
      let n = b.len();
      let flen = u32::from_le_bytes(b[n - 8..n - 4].try_into().unwrap()) as usize;
      for x in &mut b[n - 8 - flen..n - 8] {
        *x = x.wrapping_mul(31).wrapping_add(7);
      }
      b
    }),
  ];
  for (name, content) in cases {
    let p = dir.path().join(name);
    std::fs::write(&p, content).unwrap();
    let e = read_table(&p, &ReadOptions::default()).unwrap_err();
    assert!(matches!(e, StoreError::Corrupt { .. }), "{name}: {e:?}");
    assert!(e.to_string().contains(name), "{e}");
    let e = validate_footer(&p).unwrap_err();
    assert!(matches!(e, StoreError::Corrupt { .. }), "{name}: {e:?}");
    assert!(e.to_string().contains(name), "{e}");
  }
}

#[test]
fn damaged_data_pages_are_corrupt_errors_not_panics() {
  let dir = tmp();
  let good = dir.path().join("good.parquet");
  let n = 5000usize;
  let t = Table::new(vec![
    Column::new(
      "id",
      ColumnData::Int64 {
        values: v((0..n as i64).collect()),
        validity: None,
      },
    ),
    Column::new(
      "name",
      ColumnData::Utf8(Strings::from_options(
        (0..n)
          .map(|i| format!("node {i}"))
          .collect::<Vec<_>>()
          .iter()
          .map(|s| Some(s.as_str())),
      )),
    ),
    Column::new(
      "e",
      ColumnData::Embedding {
        dim: 16,
        values: v((0..n * 16).map(|x| (x as f32).sin()).collect()),
        validity: None,
      },
    ),
  ]);
  write_table(&good, &t).unwrap();
  let bytes = std::fs::read(&good).unwrap();
  let footer_len = u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap()) as usize;
  let data_end = bytes.len() - 8 - footer_len;

  // A scrambled page header (the first bytes after the magic) is always detected.
  let mut bad = bytes.clone();
  for x in &mut bad[4..36] {
    *x ^= 0xa5;
  }
  let p = dir.path().join("damaged.parquet");
  std::fs::write(&p, &bad).unwrap();
  assert!(
    validate_footer(&p).is_ok(),
    "the footer check does not read pages"
  );
  let e = read_table(&p, &ReadOptions::default()).unwrap_err();
  assert!(matches!(e, StoreError::Corrupt { .. }), "{e:?}");
  assert!(e.to_string().contains("damaged.parquet"), "{e}");

  // Damage anywhere in the data area: a read either fails with `Corrupt` or returns
  // (possibly wrong) data, and never brings the process down. parquet-rs writes no page
  // CRCs, so flipped bits inside raw float bytes can go unnoticed: integrity of content
  // needs a file checksum kept by the caller.
  let mut detected = 0;
  let mut tried = 0;
  for start in (4..data_end - 16).step_by(data_end / 150) {
    let mut bad = bytes.clone();
    for x in &mut bad[start..start + 16] {
      *x ^= 0x5a;
    }
    std::fs::write(&p, &bad).unwrap();
    tried += 1;
    match read_table(&p, &ReadOptions::default()) {
      Ok(_) => {}
      Err(StoreError::Corrupt { .. }) => detected += 1,
      Err(other) => panic!("damage at byte {start}: unexpected error {other:?}"),
    }
  }
  assert!(detected > 0, "no damage detected in {tried} attempts");
}

#[test]
fn validate_footer_reports_rows_and_columns() {
  let dir = tmp();
  let p = dir.path().join("t.parquet");
  write_table(&p, &every_kind()).unwrap();
  let info = validate_footer(&p).unwrap();
  assert_eq!((info.num_rows, info.num_row_groups, info.num_columns), (4, 1, 8));
  assert_eq!(info.file_size, std::fs::metadata(&p).unwrap().len());
}

#[test]
fn an_invalid_table_leaves_the_old_file_intact_and_no_temp_file() {
  let dir = tmp();
  let p = dir.path().join("t.parquet");
  write_table(&p, &every_kind()).unwrap();
  let before = std::fs::read(&p).unwrap();
  // Invalid UTF-8 is only detected while batches are built, i.e. after the temp file
  // has been opened and the writer started: a genuine mid-write failure.
  let mut s = Strings::new();
  for i in 0..10_000 {
    if i == 9_000 {
      s.push_bytes(&[0xff, 0xfe]);
    } else {
      s.push(Some("ok"));
    }
  }
  let bad = Table::new(vec![Column::new("s", ColumnData::Utf8(s))]);
  let e = write_table(&p, &bad).unwrap_err();
  assert!(matches!(e, StoreError::InvalidTable { .. }), "{e:?}");
  assert!(
    e.to_string().contains("t.parquet") && e.to_string().contains("`s`"),
    "{e}"
  );
  assert_eq!(std::fs::read(&p).unwrap(), before);
  let names: Vec<_> = std::fs::read_dir(dir.path())
    .unwrap()
    .map(|e| e.unwrap().file_name())
    .collect();
  assert_eq!(names, vec![std::ffi::OsString::from("t.parquet")]);

  // Length mismatches are caught before anything is written.
  let t = Table {
    num_rows: 3,
    columns: vec![Column::new(
      "i",
      ColumnData::Int32 {
        values: v(vec![1, 2]),
        validity: None,
      },
    )],
  };
  let e = write_table(&p, &t).unwrap_err();
  assert!(e.to_string().contains("2 values, expected 3"), "{e}");
  assert_eq!(std::fs::read(&p).unwrap(), before);
}
