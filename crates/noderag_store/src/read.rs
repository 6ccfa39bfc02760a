//! parquet → Table. Reads the index tables we write, and also files written by other
//! tools (pyarrow, DuckDB): `LargeUtf8`/`Utf8View` strings, `LargeList` lists with any
//! child name, and embeddings stored as `List`/`LargeList`/`FixedSizeList` of
//! `Float32`/`Float64` (converted to f32, flat, with row validity).

use std::borrow::Cow;
use std::fs::File;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayAccessor, FixedSizeListArray, GenericListArray, OffsetSizeTrait};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;

use crate::error::{Result, StoreError};
use crate::table::{Column, ColumnData, ColumnKind, Strings, Table};

/// One column to read, optionally with the kind (and embedding dimension) it must have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnRequest {
  pub name: String,
  pub kind: Option<ColumnKind>,
  pub dim: Option<usize>,
}

impl ColumnRequest {
  pub fn any(name: impl Into<String>) -> Self {
    ColumnRequest {
      name: name.into(),
      kind: None,
      dim: None,
    }
  }
  pub fn of(name: impl Into<String>, kind: ColumnKind) -> Self {
    ColumnRequest {
      name: name.into(),
      kind: Some(kind),
      dim: None,
    }
  }
}

#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
  /// Columns to read, in the order wanted. `None` reads every column in file order.
  pub columns: Option<Vec<ColumnRequest>>,
}

/// How a file column maps onto our kinds: `(kind, fixed dim if the type carries it)`.
pub fn kind_of(dt: &DataType) -> Option<(ColumnKind, Option<usize>)> {
  let is_str = |d: &DataType| matches!(d, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
  let is_float = |d: &DataType| matches!(d, DataType::Float32 | DataType::Float64);
  Some(match dt {
    d if is_str(d) => (ColumnKind::Utf8, None),
    DataType::Int64 => (ColumnKind::Int64, None),
    DataType::Int32 => (ColumnKind::Int32, None),
    DataType::Float64 => (ColumnKind::Float64, None),
    DataType::Boolean => (ColumnKind::Boolean, None),
    DataType::List(f) | DataType::LargeList(f) => match f.data_type() {
      d if is_str(d) => (ColumnKind::Utf8List, None),
      DataType::Int64 => (ColumnKind::Int64List, None),
      d if is_float(d) => (ColumnKind::Embedding, None),
      _ => return None,
    },
    DataType::FixedSizeList(f, n) if is_float(f.data_type()) => (ColumnKind::Embedding, Some(*n as usize)),
    _ => return None,
  })
}

/// Reads `path` into an owned table. Errors name the file (and column).
pub fn read_table(path: &Path, options: &ReadOptions) -> Result<Table<'static>> {
  let file = File::open(path).map_err(|e| StoreError::io(path, e))?;
  // parquet-rs may panic on some malformed inputs instead of returning an error; a
  // damaged file must still be a `Corrupt` error naming the file, not a crash.
  match catch_unwind(AssertUnwindSafe(|| read_open_file(path, file, options))) {
    Ok(r) => r,
    Err(p) => {
      let msg = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
      Err(StoreError::corrupt(
        path,
        format!("the parquet decoder failed: {msg}"),
      ))
    }
  }
}

struct Plan {
  name: String,
  file_index: usize,
  kind: ColumnKind,
  dim: Option<usize>,
  want_dim: Option<usize>,
}

fn read_open_file(path: &Path, file: File, options: &ReadOptions) -> Result<Table<'static>> {
  let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| StoreError::corrupt(path, e))?;
  let schema = builder.schema().clone();
  let num_rows = usize::try_from(builder.metadata().file_metadata().num_rows())
    .map_err(|_| StoreError::corrupt(path, "negative row count in the footer"))?;

  let requests: Vec<ColumnRequest> = match &options.columns {
    Some(cols) => cols.clone(),
    None => schema
      .fields()
      .iter()
      .map(|f| ColumnRequest::any(f.name()))
      .collect(),
  };
  let mut plans = Vec::with_capacity(requests.len());
  for req in &requests {
    let Some((idx, field)) = schema.column_with_name(&req.name) else {
      let available = schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect::<Vec<_>>()
        .join(", ");
      return Err(StoreError::MissingColumn {
        path: path.into(),
        column: req.name.clone(),
        available,
      });
    };
    let found = kind_of(field.data_type());
    let got = || match found {
      Some((k, _)) => format!("{k} (Arrow {})", field.data_type()),
      None => format!("Arrow {}", field.data_type()),
    };
    let (kind, dim) = match (found, req.kind) {
      (Some((k, d)), None) => (k, d),
      (Some((k, d)), Some(want)) if k == want => (k, d),
      (_, Some(want)) => {
        return Err(StoreError::WrongColumnType {
          path: path.into(),
          column: req.name.clone(),
          expected: want.to_string(),
          got: got(),
        })
      }
      (None, None) => {
        return Err(StoreError::Unsupported {
          path: path.into(),
          column: req.name.clone(),
          reason: format!("unsupported type {}", got()),
        })
      }
    };
    if let (Some(want), Some(have)) = (req.dim, dim) {
      if want != have {
        return Err(StoreError::DimensionMismatch {
          path: path.into(),
          column: req.name.clone(),
          expected: want,
          got: have,
        });
      }
    }
    plans.push(Plan {
      name: req.name.clone(),
      file_index: idx,
      kind,
      dim,
      want_dim: req.dim,
    });
  }

  let mut roots: Vec<usize> = plans.iter().map(|p| p.file_index).collect();
  roots.sort_unstable();
  roots.dedup();
  // Size decode batches from the file's own uncompressed bytes per row (see BATCH_BYTES).
  let meta = builder.metadata();
  let bytes: i64 = meta.row_groups().iter().map(|g| g.total_byte_size()).sum();
  let row_bytes = usize::try_from(bytes).unwrap_or(0) / num_rows.max(1);
  let batch_rows = crate::write::rows_per_batch(row_bytes);
  let mask = ProjectionMask::roots(builder.parquet_schema(), roots.iter().copied());
  let reader = builder
    .with_projection(mask)
    .with_batch_size(batch_rows)
    .build()
    .map_err(|e| StoreError::corrupt(path, e))?;

  let mut accs: Vec<Acc> = plans.iter().map(|p| Acc::new(p, num_rows)).collect();
  let mut rows_read = 0usize;
  for batch in reader {
    let batch = batch.map_err(|e| StoreError::corrupt(path, e))?;
    for (plan, acc) in plans.iter().zip(accs.iter_mut()) {
      // The batch holds the projected columns in file order.
      let pos = roots.binary_search(&plan.file_index).expect("projected");
      acc
        .append(batch.column(pos).as_ref(), plan)
        .map_err(|e| e.into_error(path, plan))?;
    }
    rows_read += batch.num_rows();
  }
  if !plans.is_empty() && rows_read != num_rows {
    return Err(StoreError::corrupt(
      path,
      format!("footer says {num_rows} rows but {rows_read} were decoded"),
    ));
  }
  let columns = plans
    .iter()
    .zip(accs)
    .map(|(p, a)| Column::new(p.name.clone(), a.finish(p, num_rows)))
    .collect();
  Ok(Table { num_rows, columns })
}

/// A failure while decoding one column, turned into a `StoreError` by the caller.
enum ColumnFailure {
  Unsupported(String),
  Dim { got: usize },
}

impl ColumnFailure {
  fn into_error(self, path: &Path, plan: &Plan) -> StoreError {
    match self {
      ColumnFailure::Unsupported(reason) => StoreError::Unsupported {
        path: path.into(),
        column: plan.name.clone(),
        reason,
      },
      ColumnFailure::Dim { got } => StoreError::DimensionMismatch {
        path: path.into(),
        column: plan.name.clone(),
        expected: plan.want_dim.or(plan.dim).unwrap_or(0),
        got,
      },
    }
  }
}

type Step = std::result::Result<(), ColumnFailure>;

/// Validity bytes, allocated only once a null is seen.
#[derive(Default)]
struct ValidityAcc {
  len: usize,
  bytes: Option<Vec<u8>>,
}

impl ValidityAcc {
  fn push(&mut self, valid: bool) {
    if !valid && self.bytes.is_none() {
      self.bytes = Some(vec![1; self.len]);
    }
    if let Some(b) = &mut self.bytes {
      b.push(valid as u8);
    }
    self.len += 1;
  }
  fn finish(self) -> Option<Cow<'static, [u8]>> {
    self.bytes.map(Cow::Owned)
  }
}

enum Acc {
  Utf8(Strings),
  Int64(Vec<i64>, ValidityAcc),
  Int32(Vec<i32>, ValidityAcc),
  Float64(Vec<f64>, ValidityAcc),
  Boolean(Vec<u8>, ValidityAcc),
  Utf8List(Vec<i32>, Strings, ValidityAcc),
  Int64List(Vec<i32>, Vec<i64>, ValidityAcc),
  /// `dim` is `None` until the first present vector of a variable-length list column;
  /// `pending_nulls` counts null rows seen before then (zero-filled once dim is known).
  Embedding {
    dim: Option<usize>,
    values: Vec<f32>,
    validity: ValidityAcc,
    pending_nulls: usize,
  },
}

impl Acc {
  fn new(plan: &Plan, rows: usize) -> Acc {
    match plan.kind {
      ColumnKind::Utf8 => Acc::Utf8(Strings::with_capacity(rows, 0)),
      ColumnKind::Int64 => Acc::Int64(Vec::with_capacity(rows), ValidityAcc::default()),
      ColumnKind::Int32 => Acc::Int32(Vec::with_capacity(rows), ValidityAcc::default()),
      ColumnKind::Float64 => Acc::Float64(Vec::with_capacity(rows), ValidityAcc::default()),
      ColumnKind::Boolean => Acc::Boolean(Vec::with_capacity(rows), ValidityAcc::default()),
      ColumnKind::Utf8List => Acc::Utf8List(vec![0], Strings::new(), ValidityAcc::default()),
      ColumnKind::Int64List => Acc::Int64List(vec![0], Vec::new(), ValidityAcc::default()),
      ColumnKind::Embedding => {
        let dim = plan.dim.or(plan.want_dim);
        Acc::Embedding {
          dim,
          values: Vec::with_capacity(rows * dim.unwrap_or(0)),
          validity: ValidityAcc::default(),
          pending_nulls: 0,
        }
      }
    }
  }

  fn append(&mut self, a: &dyn Array, plan: &Plan) -> Step {
    match self {
      Acc::Utf8(out) => push_strings(out, a, 0..a.len()),
      Acc::Int64(v, val) => {
        push_primitive(v, val, a.as_primitive::<Int64Type>());
        Ok(())
      }
      Acc::Int32(v, val) => {
        push_primitive(v, val, a.as_primitive::<Int32Type>());
        Ok(())
      }
      Acc::Float64(v, val) => {
        push_primitive(v, val, a.as_primitive::<Float64Type>());
        Ok(())
      }
      Acc::Boolean(v, val) => {
        let b = a.as_boolean();
        for i in 0..b.len() {
          let ok = b.is_valid(i);
          v.push((ok && b.value(i)) as u8);
          val.push(ok);
        }
        Ok(())
      }
      Acc::Utf8List(offsets, values, val) => match a.data_type() {
        DataType::LargeList(_) => push_list(a.as_list::<i64>(), offsets, val, |c, r| {
          push_strings(values, c, r)
        }),
        _ => push_list(a.as_list::<i32>(), offsets, val, |c, r| {
          push_strings(values, c, r)
        }),
      },
      Acc::Int64List(offsets, values, val) => {
        let mut push = |c: &dyn Array, r: std::ops::Range<usize>| {
          let c = c.as_primitive::<Int64Type>();
          if r.clone().any(|i| c.is_null(i)) {
            return Err(ColumnFailure::Unsupported(
              "null element inside a List<Int64> value".into(),
            ));
          }
          values.extend_from_slice(&c.values()[r]);
          Ok(())
        };
        match a.data_type() {
          DataType::LargeList(_) => push_list(a.as_list::<i64>(), offsets, val, &mut push),
          _ => push_list(a.as_list::<i32>(), offsets, val, &mut push),
        }
      }
      Acc::Embedding {
        dim,
        values,
        validity,
        pending_nulls,
      } => {
        let mut emb = EmbeddingSink {
          dim,
          values,
          validity,
          pending_nulls,
          want_dim: plan.want_dim,
        };
        match a.data_type() {
          DataType::FixedSizeList(..) => emb.push_fixed(a.as_fixed_size_list()),
          DataType::LargeList(_) => emb.push_list(a.as_list::<i64>()),
          _ => emb.push_list(a.as_list::<i32>()),
        }
      }
    }
  }

  fn finish(self, plan: &Plan, rows: usize) -> ColumnData<'static> {
    match self {
      Acc::Utf8(s) => ColumnData::Utf8(s),
      Acc::Int64(v, val) => ColumnData::Int64 {
        values: v.into(),
        validity: val.finish(),
      },
      Acc::Int32(v, val) => ColumnData::Int32 {
        values: v.into(),
        validity: val.finish(),
      },
      Acc::Float64(v, val) => ColumnData::Float64 {
        values: v.into(),
        validity: val.finish(),
      },
      Acc::Boolean(v, val) => ColumnData::Boolean {
        values: v.into(),
        validity: val.finish(),
      },
      Acc::Utf8List(o, s, val) => ColumnData::Utf8List {
        offsets: o.into(),
        values: s,
        validity: val.finish(),
      },
      Acc::Int64List(o, v, val) => ColumnData::Int64List {
        offsets: o.into(),
        values: v.into(),
        validity: val.finish(),
      },
      Acc::Embedding {
        dim,
        mut values,
        validity,
        pending_nulls,
      } => {
        // A variable-length column whose rows are all null has no dimension to learn:
        // use the requested one, else 0 (an empty vector per row).
        let dim = dim.or(plan.want_dim).unwrap_or(0);
        values.resize(values.len() + pending_nulls * dim, 0.0);
        debug_assert_eq!(values.len(), rows * dim);
        let mut validity = validity.finish();
        if rows > 0 && dim == 0 && validity.is_none() {
          validity = Some(Cow::Owned(vec![0; rows]));
        }
        ColumnData::Embedding {
          dim,
          values: values.into(),
          validity,
        }
      }
    }
  }
}

fn push_primitive<T: arrow_array::ArrowPrimitiveType>(
  out: &mut Vec<T::Native>,
  val: &mut ValidityAcc,
  a: &arrow_array::PrimitiveArray<T>,
) {
  if a.null_count() == 0 {
    out.extend_from_slice(a.values());
    for _ in 0..a.len() {
      val.push(true);
    }
  } else {
    for i in 0..a.len() {
      let ok = a.is_valid(i);
      // Values under a null are arbitrary in Arrow; zero them so reads are deterministic.
      out.push(if ok { a.value(i) } else { T::Native::default() });
      val.push(ok);
    }
  }
}

fn push_str_values<'x, A: ArrayAccessor<Item = &'x str>>(
  out: &mut Strings,
  a: A,
  range: std::ops::Range<usize>,
) {
  for i in range {
    if a.is_null(i) {
      out.push_null();
    } else {
      out.push_bytes(a.value(i).as_bytes());
    }
  }
}

fn push_strings(out: &mut Strings, a: &dyn Array, range: std::ops::Range<usize>) -> Step {
  match a.data_type() {
    DataType::Utf8 => push_str_values(out, a.as_string::<i32>(), range),
    DataType::LargeUtf8 => push_str_values(out, a.as_string::<i64>(), range),
    DataType::Utf8View => push_str_values(out, a.as_string_view(), range),
    other => {
      return Err(ColumnFailure::Unsupported(format!(
        "expected strings, found {other}"
      )))
    }
  }
  Ok(())
}

/// Appends each list of `a`: `offsets`/`val` get one entry per row, `push_elems`
/// appends the child elements of a present row.
fn push_list<O: OffsetSizeTrait>(
  a: &GenericListArray<O>,
  offsets: &mut Vec<i32>,
  val: &mut ValidityAcc,
  mut push_elems: impl FnMut(&dyn Array, std::ops::Range<usize>) -> Step,
) -> Step {
  let child = a.values().as_ref();
  let offs = a.value_offsets();
  for i in 0..a.len() {
    let mut last = *offsets.last().expect("starts with 0");
    if a.is_valid(i) {
      let (s, e) = (offs[i].as_usize(), offs[i + 1].as_usize());
      push_elems(child, s..e)?;
      last = i32::try_from(last as usize + (e - s))
        .map_err(|_| ColumnFailure::Unsupported("more than 2^31 list elements".into()))?;
    }
    offsets.push(last);
    val.push(a.is_valid(i));
  }
  Ok(())
}

struct EmbeddingSink<'s> {
  dim: &'s mut Option<usize>,
  values: &'s mut Vec<f32>,
  validity: &'s mut ValidityAcc,
  pending_nulls: &'s mut usize,
  want_dim: Option<usize>,
}

impl EmbeddingSink<'_> {
  fn push_null(&mut self) {
    match *self.dim {
      Some(d) => self.values.resize(self.values.len() + d, 0.0),
      None => *self.pending_nulls += 1,
    }
    self.validity.push(false);
  }

  /// Appends one present vector stored at `child[start..start + len]`.
  fn push_vector(&mut self, child: &dyn Array, start: usize, len: usize) -> Step {
    match *self.dim {
      Some(d) if d != len => {
        return Err(match self.want_dim {
          Some(_) => ColumnFailure::Dim { got: len },
          None => ColumnFailure::Unsupported(format!(
            "vectors of different lengths ({d} and {len}); an embedding column needs one dimension"
          )),
        })
      }
      Some(_) => {}
      None => {
        *self.dim = Some(len);
        let zeros = *self.pending_nulls * len;
        self.values.resize(self.values.len() + zeros, 0.0);
        *self.pending_nulls = 0;
      }
    }
    if child.null_count() > 0 && (start..start + len).any(|i| child.is_null(i)) {
      return Err(ColumnFailure::Unsupported("null element inside a vector".into()));
    }
    match child.data_type() {
      DataType::Float32 => self
        .values
        .extend_from_slice(&child.as_primitive::<Float32Type>().values()[start..start + len]),
      DataType::Float64 => self.values.extend(
        child.as_primitive::<Float64Type>().values()[start..start + len]
          .iter()
          .map(|&x| x as f32),
      ),
      other => {
        return Err(ColumnFailure::Unsupported(format!(
          "vector elements of type {other}"
        )))
      }
    }
    self.validity.push(true);
    Ok(())
  }

  fn push_fixed(&mut self, a: &FixedSizeListArray) -> Step {
    let len = a.value_length() as usize;
    let child = a.values();
    if a.null_count() == 0 && child.null_count() == 0 && *self.dim == Some(len) {
      // Common case (a fully computed column): one copy of the whole block.
      let start = a.value_offset_at(0);
      let n = a.len() * len;
      match child.data_type() {
        DataType::Float32 => self
          .values
          .extend_from_slice(&child.as_primitive::<Float32Type>().values()[start..start + n]),
        DataType::Float64 => self.values.extend(
          child.as_primitive::<Float64Type>().values()[start..start + n]
            .iter()
            .map(|&x| x as f32),
        ),
        other => {
          return Err(ColumnFailure::Unsupported(format!(
            "vector elements of type {other}"
          )))
        }
      }
      for _ in 0..a.len() {
        self.validity.push(true);
      }
      return Ok(());
    }
    for i in 0..a.len() {
      if a.is_null(i) {
        self.push_null();
      } else {
        self.push_vector(a.values().as_ref(), a.value_offset_at(i), len)?;
      }
    }
    Ok(())
  }

  fn push_list<O: OffsetSizeTrait>(&mut self, a: &GenericListArray<O>) -> Step {
    let offs = a.value_offsets();
    for i in 0..a.len() {
      if a.is_null(i) {
        self.push_null();
      } else {
        let (s, e) = (offs[i].as_usize(), offs[i + 1].as_usize());
        self.push_vector(a.values().as_ref(), s, e - s)?;
      }
    }
    Ok(())
  }
}
