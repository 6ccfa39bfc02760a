//! Bindings for crates/noderag_store: parquet tables cross as column-typed arrays.
//!
//! A table is `{ numRows, columns: NativeColumn[] }`, one typed buffer per column, never
//! one JS object per row. Per kind, a `NativeColumn` uses these fields:
//!
//! | kind         | values                                   | also                  |
//! |--------------|------------------------------------------|-----------------------|
//! | `utf8`       | `strings: (string \| null)[]`            |                       |
//! | `int64`      | `float64: Float64Array` (exact integers) | `validity?`           |
//! | `float64`    | `float64: Float64Array`                  | `validity?`           |
//! | `int32`      | `int32: Int32Array`                      | `validity?`           |
//! | `boolean`    | `uint8: Uint8Array` (0 / 1)              | `validity?`           |
//! | `utf8_list`  | `strings` (all elements, flattened)      | `offsets`, `validity?`|
//! | `int64_list` | `float64` (all elements, flattened)      | `offsets`, `validity?`|
//! | `embedding`  | `float32: Float32Array` (rows × dim)     | `dim`, `validity?`    |
//!
//! `offsets: Int32Array` has rows + 1 entries; `validity: Uint8Array` has one byte per
//! row (0 = null) and is absent when no row is null.
//!
//! Int64 crosses as `Float64Array`: our ids and counts are far below 2^53, JS code uses
//! plain numbers everywhere, and BigInt would force conversions at every use. The price
//! is a check: a write rejects a value that is not a safe integer, a read rejects a file
//! value beyond ±(2^53 − 1), so no id is ever silently rounded.
//!
//! Reads and writes of whole tables are `Job`s (libuv pool), so a server stays
//! responsive. Typed arrays passed to a write are read off the main thread without a
//! copy: do not modify them until the promise settles.

use std::borrow::Cow;
use std::path::PathBuf;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use noderag_store::{
  derive_snapshot_payload, dictionary_encode, read_table, validate_footer, write_table, Column, ColumnData,
  ColumnKind, ColumnRequest, FooterInfo, ReadOptions, SnapshotPayload, SnapshotSources, Table,
};

use crate::convert::{exact_f64s, exact_i64s, JsStrings, NativeError};
use crate::error::{codes, err, guard};
use crate::task::Job;

/// A failure explained in words; the caller adds the file and the error code.
/// (`Result` alone is napi's alias here.)
type Reason<T> = std::result::Result<T, String>;

/// One column of a table crossing the boundary; see the module docs for which fields a
/// kind uses. Unused fields are absent.
#[napi(object)]
pub struct NativeColumn {
  pub name: String,
  #[napi(
    ts_type = "'utf8' | 'int64' | 'int32' | 'float64' | 'boolean' | 'utf8_list' | 'int64_list' | 'embedding'"
  )]
  pub kind: String,
  /// `utf8` values, or the flattened elements of a `utf8_list`.
  #[napi(ts_type = "Array<string | null>")]
  pub strings: Option<JsStrings>,
  /// `int64` (exact integers) or `float64` values, or the flattened elements of an `int64_list`.
  pub float64: Option<Float64Array>,
  /// `int32` values; for a `utf8` column read with `dictionary: true`, one key per row
  /// into `strings` (the distinct values), -1 for a null row.
  pub int32: Option<Int32Array>,
  /// `boolean` values, 0 or 1.
  pub uint8: Option<Uint8Array>,
  /// `embedding` vectors, row-major, rows × dim.
  pub float32: Option<Float32Array>,
  /// `embedding` dimension.
  pub dim: Option<u32>,
  /// List columns: rows + 1 offsets into the flattened elements.
  pub offsets: Option<Int32Array>,
  /// One byte per row, 0 = null. Absent when every row is present.
  pub validity: Option<Uint8Array>,
}

#[napi(object)]
pub struct NativeTable {
  pub num_rows: u32,
  pub columns: Vec<NativeColumn>,
}

/// A column to read, with the kind (and dimension) it must have if given.
#[napi(object)]
pub struct NativeColumnRequest {
  pub name: String,
  #[napi(
    ts_type = "'utf8' | 'int64' | 'int32' | 'float64' | 'boolean' | 'utf8_list' | 'int64_list' | 'embedding'"
  )]
  pub kind: Option<String>,
  pub dim: Option<u32>,
  /// `utf8` only: return the distinct values in `strings` and one key per row in `int32`,
  /// so a column of many repeated values does not become one JS string per row.
  pub dictionary: Option<bool>,
}

#[napi(object)]
pub struct NativeFooterInfo {
  pub num_rows: f64,
  pub num_row_groups: u32,
  pub num_columns: u32,
  pub file_size: f64,
}

fn parse_kind(column: &str, kind: &str) -> napi::Result<ColumnKind> {
  ColumnKind::from_name(kind).ok_or_else(|| {
    let known: Vec<&str> = ColumnKind::ALL.iter().map(|k| k.name()).collect();
    err(
      codes::INVALID_ARGUMENT,
      format!(
        "column `{column}`: unknown kind `{kind}` (known: {})",
        known.join(", ")
      ),
    )
  })
}

/// A column whose fields have been checked against its kind (on the main thread); its
/// buffers are turned into a crate `Column` inside `compute`.
pub struct PendingColumn {
  name: String,
  kind: ColumnKind,
  col: NativeColumn,
}

fn require<'a, T>(name: &str, kind: ColumnKind, field: &str, v: &'a Option<T>) -> Reason<&'a T> {
  v.as_ref()
    .ok_or_else(|| format!("column `{name}` ({kind}) needs the `{field}` field"))
}

/// Same wording as the crate's `InvalidTable`, so every table-shape error names the file.
fn invalid_table(path: &std::path::Path, reason: impl std::fmt::Display) -> napi::Error {
  err(
    codes::INVALID_ARGUMENT,
    format!("invalid table for {}: {reason}", path.display()),
  )
}

impl PendingColumn {
  fn new(col: NativeColumn) -> Reason<Self> {
    let kind = ColumnKind::from_name(&col.kind).ok_or_else(|| {
      let known: Vec<&str> = ColumnKind::ALL.iter().map(|k| k.name()).collect();
      format!(
        "column `{}`: unknown kind `{}` (known: {})",
        col.name,
        col.kind,
        known.join(", ")
      )
    })?;
    let name = col.name.clone();
    let (n, c) = (&name, &col);
    match kind {
      ColumnKind::Utf8 => {
        require(n, kind, "strings", &c.strings)?;
      }
      ColumnKind::Int64 | ColumnKind::Float64 => {
        require(n, kind, "float64", &c.float64)?;
      }
      ColumnKind::Int32 => {
        require(n, kind, "int32", &c.int32)?;
      }
      ColumnKind::Boolean => {
        require(n, kind, "uint8", &c.uint8)?;
      }
      ColumnKind::Utf8List => {
        require(n, kind, "strings", &c.strings)?;
        require(n, kind, "offsets", &c.offsets)?;
      }
      ColumnKind::Int64List => {
        require(n, kind, "float64", &c.float64)?;
        require(n, kind, "offsets", &c.offsets)?;
      }
      ColumnKind::Embedding => {
        require(n, kind, "float32", &c.float32)?;
        require(n, kind, "dim", &c.dim)?;
      }
    }
    Ok(PendingColumn { name, kind, col })
  }

  /// Builds the crate column, borrowing the JS buffers. Int64 values are converted
  /// (and checked) here, off the main thread.
  fn column_view(&mut self) -> Reason<Column<'_>> {
    let kind = self.kind;
    let name = self.name.clone();
    let validity = self.col.validity.as_deref();
    let data = match kind {
      ColumnKind::Utf8 => {
        ColumnData::Utf8(std::mem::take(&mut self.col.strings.as_mut().expect("checked").0))
      }
      ColumnKind::Int64 => ColumnData::Int64 {
        values: Cow::Owned(exact_integers(
          &name,
          self.col.float64.as_deref().expect("checked"),
          validity,
        )?),
        validity: validity.map(Cow::Borrowed),
      },
      ColumnKind::Float64 => ColumnData::Float64 {
        values: Cow::Borrowed(self.col.float64.as_deref().expect("checked")),
        validity: validity.map(Cow::Borrowed),
      },
      ColumnKind::Int32 => ColumnData::Int32 {
        values: Cow::Borrowed(self.col.int32.as_deref().expect("checked")),
        validity: validity.map(Cow::Borrowed),
      },
      ColumnKind::Boolean => ColumnData::Boolean {
        values: Cow::Borrowed(self.col.uint8.as_deref().expect("checked")),
        validity: validity.map(Cow::Borrowed),
      },
      ColumnKind::Utf8List => ColumnData::Utf8List {
        offsets: Cow::Borrowed(self.col.offsets.as_deref().expect("checked")),
        values: std::mem::take(&mut self.col.strings.as_mut().expect("checked").0),
        validity: validity.map(Cow::Borrowed),
      },
      ColumnKind::Int64List => ColumnData::Int64List {
        offsets: Cow::Borrowed(self.col.offsets.as_deref().expect("checked")),
        values: Cow::Owned(exact_integers(
          &name,
          self.col.float64.as_deref().expect("checked"),
          None,
        )?),
        validity: validity.map(Cow::Borrowed),
      },
      ColumnKind::Embedding => ColumnData::Embedding {
        dim: self.col.dim.expect("checked") as usize,
        values: Cow::Borrowed(self.col.float32.as_deref().expect("checked")),
        validity: validity.map(Cow::Borrowed),
      },
    };
    Ok(Column { name, data })
  }
}

/// Float64 → i64 for an Int64 column: every present value must be a safe integer.
fn exact_integers(column: &str, values: &[f64], validity: Option<&[u8]>) -> Reason<Vec<i64>> {
  exact_i64s(values, validity).map_err(|i| {
    format!(
      "column `{column}` (int64): value {} at index {i} is not a safe integer",
      values[i]
    )
  })
}

/// Writes a parquet table atomically (temp file in the same folder, fsync, rename).
/// Async: runs on the libuv pool. The typed arrays must not change until it settles.
/// Errors: NATIVE_INVALID_ARGUMENT for an inconsistent table (nothing written),
/// NATIVE_IO when the file cannot be written.
#[napi(ts_return_type = "Promise<void>")]
pub fn write_parquet_table(
  path: String,
  table: NativeTable,
) -> napi::Result<AsyncTask<Job<Vec<PendingColumn>, ()>>> {
  guard(|| {
    let path = PathBuf::from(path);
    let num_rows = table.num_rows as usize;
    let mut columns = table
      .columns
      .into_iter()
      .map(PendingColumn::new)
      .collect::<Reason<Vec<_>>>()
      .map_err(|reason| invalid_table(&path, reason))?;
    Ok(Job::task(
      move || {
        let views = columns
          .iter_mut()
          .map(PendingColumn::column_view)
          .collect::<Reason<Vec<_>>>()
          .map_err(|reason| invalid_table(&path, reason))?;
        write_table(
          &path,
          &Table {
            num_rows,
            columns: views,
          },
        )
        .map_err(NativeError::into_napi)?;
        // Handed back so that the JS buffers are released on the JS thread.
        Ok::<_, napi::Error>(columns)
      },
      drop,
    ))
  })
}

/// A read table whose requested `utf8` columns are dictionary-encoded (on the worker thread).
pub struct ReadTable {
  table: Table<'static>,
  /// Per column: the keys when it was encoded (its `Utf8` data then holds the distinct values).
  keys: Vec<Option<Vec<i32>>>,
}

fn encode_dictionaries(
  path: &std::path::Path,
  mut table: Table<'static>,
  names: &[String],
) -> napi::Result<ReadTable> {
  let mut keys = Vec::with_capacity(table.columns.len());
  for c in &mut table.columns {
    if !names.contains(&c.name) {
      keys.push(None);
      continue;
    }
    let ColumnData::Utf8(strings) = &mut c.data else {
      return Err(err(
        codes::INVALID_ARGUMENT,
        format!(
          "{}: column `{}` is {}; only utf8 columns can be read as a dictionary",
          path.display(),
          c.name,
          c.data.kind()
        ),
      ));
    };
    let encoded = dictionary_encode(strings).ok_or_else(|| {
      err(
        codes::CORRUPT_FILE,
        format!(
          "{}: column `{}` has more than 2^31 - 1 distinct values",
          path.display(),
          c.name
        ),
      )
    })?;
    *strings = encoded.values;
    keys.push(Some(encoded.keys));
  }
  Ok(ReadTable { table, keys })
}

/// Converts a read column to its JS shape (main thread, in `resolve`).
fn native_column(path: &std::path::Path, c: Column<'static>) -> napi::Result<NativeColumn> {
  let mut out = NativeColumn {
    name: c.name,
    kind: c.data.kind().name().to_string(),
    strings: None,
    float64: None,
    int32: None,
    uint8: None,
    float32: None,
    dim: None,
    offsets: None,
    validity: None,
  };
  let name = out.name.clone();
  let as_f64 = |values: &[i64]| -> napi::Result<Float64Array> {
    exact_f64s(values).map(Float64Array::new).map_err(|i| {
      err(
        codes::CORRUPT_FILE,
        format!(
          "{}: column `{}` holds {} at row {i}, beyond ±(2^53 − 1), which JS numbers cannot represent exactly",
          path.display(),
          name,
          values[i]
        ),
      )
    })
  };
  let validity = |v: Option<Cow<'static, [u8]>>| v.map(|v| Uint8Array::new(v.into_owned()));
  match c.data {
    ColumnData::Utf8(s) => out.strings = Some(JsStrings(s)),
    ColumnData::Int64 { values, validity: v } => {
      out.float64 = Some(as_f64(&values)?);
      out.validity = validity(v);
    }
    ColumnData::Float64 { values, validity: v } => {
      out.float64 = Some(Float64Array::new(values.into_owned()));
      out.validity = validity(v);
    }
    ColumnData::Int32 { values, validity: v } => {
      out.int32 = Some(Int32Array::new(values.into_owned()));
      out.validity = validity(v);
    }
    ColumnData::Boolean { values, validity: v } => {
      out.uint8 = Some(Uint8Array::new(values.into_owned()));
      out.validity = validity(v);
    }
    ColumnData::Utf8List {
      offsets,
      values,
      validity: v,
    } => {
      out.offsets = Some(Int32Array::new(offsets.into_owned()));
      out.strings = Some(JsStrings(values));
      out.validity = validity(v);
    }
    ColumnData::Int64List {
      offsets,
      values,
      validity: v,
    } => {
      out.offsets = Some(Int32Array::new(offsets.into_owned()));
      out.float64 = Some(as_f64(&values)?);
      out.validity = validity(v);
    }
    ColumnData::Embedding {
      dim,
      values,
      validity: v,
    } => {
      out.dim = Some(dim as u32);
      out.float32 = Some(Float32Array::new(values.into_owned()));
      out.validity = validity(v);
    }
  }
  Ok(out)
}

/// The JS shape of a read table (main thread, when the promise settles).
fn native_table(path: &std::path::Path, read: ReadTable) -> napi::Result<NativeTable> {
  let ReadTable { table, keys } = read;
  let num_rows = u32::try_from(table.num_rows).map_err(|_| {
    err(
      codes::CORRUPT_FILE,
      format!("{}: more than 2^32 rows", path.display()),
    )
  })?;
  let columns = table
    .columns
    .into_iter()
    .zip(keys)
    .map(|(c, keys)| {
      let mut out = native_column(path, c)?;
      if let Some(keys) = keys {
        out.int32 = Some(Int32Array::new(keys));
      }
      Ok(out)
    })
    .collect::<napi::Result<Vec<_>>>()?;
  Ok(NativeTable { num_rows, columns })
}

/// Reads a parquet table; `columns` selects (and orders) columns and may demand a kind
/// and an embedding dimension; a `utf8` request with `dictionary: true` comes back as its
/// distinct values (`strings`) and one key per row (`int32`). Async: runs on the libuv pool.
/// Errors: NATIVE_IO (missing/unreadable file), NATIVE_CORRUPT_FILE (not parquet,
/// truncated, damaged, missing column, wrong column type), NATIVE_DIMENSION_MISMATCH.
#[napi(ts_return_type = "Promise<NativeTable>")]
pub fn read_parquet_table(
  path: String,
  columns: Option<Vec<NativeColumnRequest>>,
) -> napi::Result<AsyncTask<Job<ReadTable, NativeTable>>> {
  guard(|| {
    let dictionary: Vec<String> = columns
      .iter()
      .flatten()
      .filter(|r| r.dictionary == Some(true))
      .map(|r| r.name.clone())
      .collect();
    let columns = match columns {
      None => None,
      Some(reqs) => Some(
        reqs
          .into_iter()
          .map(|r| {
            let kind = r.kind.as_deref().map(|k| parse_kind(&r.name, k)).transpose()?;
            Ok(ColumnRequest {
              name: r.name,
              kind,
              dim: r.dim.map(|d| d as usize),
            })
          })
          .collect::<napi::Result<Vec<_>>>()?,
      ),
    };
    let path = PathBuf::from(path);
    let options = ReadOptions { columns };
    let read_path = path.clone();
    Ok(Job::try_task(
      move || {
        let table = read_table(&read_path, &options).map_err(NativeError::into_napi)?;
        encode_dictionaries(&read_path, table, &dictionary)
      },
      move |read| native_table(&path, read),
    ))
  })
}

/// Cheap integrity check (footer only, no data pages): PAR1 magic, a parseable footer,
/// row counts that add up, column chunks inside the file. Async (file I/O).
/// Errors: NATIVE_IO (missing file), NATIVE_CORRUPT_FILE.
#[napi(ts_return_type = "Promise<NativeFooterInfo>")]
pub fn validate_parquet_footer(path: String) -> napi::Result<AsyncTask<Job<FooterInfo, NativeFooterInfo>>> {
  guard(|| {
    let path = PathBuf::from(path);
    Ok(Job::task(
      move || validate_footer(&path),
      |info| NativeFooterInfo {
        num_rows: info.num_rows as f64,
        num_row_groups: info.num_row_groups as u32,
        num_columns: info.num_columns as u32,
        file_size: info.file_size as f64,
      },
    ))
  })
}

/// The payload of `cache/search_graph.bin` and the counts of its header
/// (ts/index-io/graph-snapshot.ts writes the header and checksum around it).
#[napi(object)]
pub struct NativeSnapshotPayload {
  pub payload: Buffer,
  pub n: u32,
  pub m: u32,
  pub s: u32,
  pub d: u32,
  pub l: u32,
  pub h: u32,
  pub id_bytes: f64,
  pub text_bytes: f64,
  pub doc_bytes: f64,
}

/// Derives the search snapshot's payload from the twelve search tables, given as paths in
/// the order documents, text, units, entities, relationships, attributes, elements, titles,
/// graph nodes, graph edges, HNSW graph, id map; `typeNames`: NODE_TYPES in code order.
/// Async. Errors: NATIVE_CORRUPT_FILE for any table the snapshot cannot represent (a
/// missing, unreadable or inconsistent table), with the reason.
#[napi(ts_return_type = "Promise<NativeSnapshotPayload>")]
pub fn derive_search_snapshot(
  paths: Vec<String>,
  type_names: Vec<String>,
) -> napi::Result<AsyncTask<Job<SnapshotPayload, NativeSnapshotPayload>>> {
  guard(|| {
    let paths: [PathBuf; 12] = paths
      .into_iter()
      .map(PathBuf::from)
      .collect::<Vec<_>>()
      .try_into()
      .map_err(|p: Vec<PathBuf>| {
        err(
          codes::INVALID_ARGUMENT,
          format!("deriveSearchSnapshot: {} paths, expected 12", p.len()),
        )
      })?;
    Ok(Job::task(
      move || {
        let [documents, text, units, entities, relationships, attributes, elements, titles, graph_nodes, graph_edges, hnsw_graph, id_map] =
          &paths;
        let sources = SnapshotSources {
          documents,
          text,
          units,
          entities,
          relationships,
          attributes,
          elements,
          titles,
          graph_nodes,
          graph_edges,
          hnsw_graph,
          id_map,
        };
        let names: Vec<&str> = type_names.iter().map(String::as_str).collect();
        derive_snapshot_payload(&sources, &names).map_err(|reason| err(codes::CORRUPT_FILE, reason))
      },
      |p: SnapshotPayload| NativeSnapshotPayload {
        n: p.counts.n as u32,
        m: p.counts.m as u32,
        s: p.counts.s as u32,
        d: p.counts.d as u32,
        l: p.counts.l as u32,
        h: p.counts.h as u32,
        id_bytes: p.counts.id_bytes as f64,
        text_bytes: p.counts.text_bytes as f64,
        doc_bytes: p.counts.doc_bytes as f64,
        payload: p.bytes.into(),
      },
    ))
  })
}

/// Writes hnsw_graph.parquet atomically from the id map (each label's node id and retired
/// flag) and the vector index's layer-0 links (`src[i]`–`dst[i]`); resolves with the number
/// of similarity edges written (crates/noderag_store/src/similarity.rs). Async.
/// Errors: NATIVE_INVALID_ARGUMENT (lengths differ), NATIVE_IO.
#[napi(ts_return_type = "Promise<number>")]
pub fn write_similarity_table(
  path: String,
  label_nodes: Vec<String>,
  retired: Uint8Array,
  src: Uint32Array,
  dst: Uint32Array,
) -> napi::Result<AsyncTask<Job<u32, u32>>> {
  guard(|| {
    if src.len() != dst.len() || retired.len() != label_nodes.len() {
      return Err(err(
        codes::INVALID_ARGUMENT,
        format!(
          "writeSimilarityTable: {} sources and {} targets, {} labels and {} retired flags",
          src.len(),
          dst.len(),
          label_nodes.len(),
          retired.len()
        ),
      ));
    }
    let path = PathBuf::from(path);
    let (retired, src, dst) = (retired.to_vec(), src.to_vec(), dst.to_vec());
    Ok(Job::task(
      move || {
        let nodes: Vec<&str> = label_nodes.iter().map(String::as_str).collect();
        noderag_store::write_similarity_table(&path, &nodes, &retired, &src, &dst).map(|rows| rows as u32)
      },
      |rows| rows,
    ))
  })
}
