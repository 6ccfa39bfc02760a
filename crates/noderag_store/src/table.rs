//! The in-memory table model: one typed, flat buffer per column (never one value per
//! row object). Numeric buffers are `Cow` so a writer can borrow caller memory (e.g. a
//! JS typed array) without copying, while a reader hands out owned vectors.
//!
//! Nulls are a per-row validity byte array (`0` = null, anything else = present); a
//! column without nulls has `validity: None`. Values at null rows are ignored on write
//! and zero on read (so reads are deterministic).

use std::borrow::Cow;

/// Per-row validity bytes, `None` when every row is present.
pub type Validity<'a> = Option<Cow<'a, [u8]>>;

/// The column kinds of the index tables (docs/method.md §5) and their Arrow types on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
  /// `Utf8`
  Utf8,
  /// `Int64`
  Int64,
  /// `Int32`
  Int32,
  /// `Float64`
  Float64,
  /// `Boolean`
  Boolean,
  /// `List<Utf8>`
  Utf8List,
  /// `List<Int64>`
  Int64List,
  /// `FixedSizeList<Float32, dim>` (child field `item`); reads also accept
  /// `List`/`LargeList`/`FixedSizeList` of `Float32`/`Float64`.
  Embedding,
}

impl ColumnKind {
  pub const ALL: [ColumnKind; 8] = [
    ColumnKind::Utf8,
    ColumnKind::Int64,
    ColumnKind::Int32,
    ColumnKind::Float64,
    ColumnKind::Boolean,
    ColumnKind::Utf8List,
    ColumnKind::Int64List,
    ColumnKind::Embedding,
  ];

  /// Stable name, shared with the TypeScript side.
  pub fn name(self) -> &'static str {
    match self {
      ColumnKind::Utf8 => "utf8",
      ColumnKind::Int64 => "int64",
      ColumnKind::Int32 => "int32",
      ColumnKind::Float64 => "float64",
      ColumnKind::Boolean => "boolean",
      ColumnKind::Utf8List => "utf8_list",
      ColumnKind::Int64List => "int64_list",
      ColumnKind::Embedding => "embedding",
    }
  }

  pub fn from_name(name: &str) -> Option<ColumnKind> {
    ColumnKind::ALL.into_iter().find(|k| k.name() == name)
  }
}

impl std::fmt::Display for ColumnKind {
  fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    f.write_str(self.name())
  }
}

/// A string column's values: UTF-8 bytes of all present values back to back,
/// `offsets.len() == len + 1`, value `i` = `bytes[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Strings {
  pub bytes: Vec<u8>,
  pub offsets: Vec<usize>,
  pub validity: Option<Vec<u8>>,
}

impl Strings {
  pub fn new() -> Self {
    Strings {
      bytes: Vec::new(),
      offsets: vec![0],
      validity: None,
    }
  }

  pub fn with_capacity(values: usize, bytes: usize) -> Self {
    let mut offsets = Vec::with_capacity(values + 1);
    offsets.push(0);
    Strings {
      bytes: Vec::with_capacity(bytes),
      offsets,
      validity: None,
    }
  }

  pub fn len(&self) -> usize {
    self.offsets.len().saturating_sub(1)
  }

  pub fn is_empty(&self) -> bool {
    self.len() == 0
  }

  pub fn push(&mut self, value: Option<&str>) {
    match value {
      Some(s) => self.push_bytes(s.as_bytes()),
      None => self.push_null(),
    }
  }

  /// Appends a value given as bytes. The caller guarantees UTF-8 (checked again on write).
  pub fn push_bytes(&mut self, value: &[u8]) {
    self.bytes.extend_from_slice(value);
    self.offsets.push(self.bytes.len());
    if let Some(v) = &mut self.validity {
      v.push(1);
    }
  }

  pub fn push_null(&mut self) {
    let n = self.len();
    self.validity.get_or_insert_with(|| vec![1; n]).push(0);
    self.offsets.push(self.bytes.len());
  }

  pub fn is_valid(&self, i: usize) -> bool {
    self.validity.as_ref().is_none_or(|v| v[i] != 0)
  }

  /// Value `i`, `None` when null. Panics if out of range or not UTF-8 (use `get_bytes`).
  pub fn get(&self, i: usize) -> Option<&str> {
    self
      .get_bytes(i)
      .map(|b| std::str::from_utf8(b).expect("Strings holds UTF-8"))
  }

  pub fn get_bytes(&self, i: usize) -> Option<&[u8]> {
    self
      .is_valid(i)
      .then(|| &self.bytes[self.offsets[i]..self.offsets[i + 1]])
  }

  pub fn from_options<'s>(values: impl IntoIterator<Item = Option<&'s str>>) -> Self {
    let mut out = Strings::new();
    for v in values {
      out.push(v);
    }
    out
  }

  pub fn from_strs<'s>(values: impl IntoIterator<Item = &'s str>) -> Self {
    Strings::from_options(values.into_iter().map(Some))
  }
}

/// One column's data. List columns hold flattened element values plus
/// `offsets` (`rows + 1` entries, row `i` = elements `offsets[i]..offsets[i + 1]`).
/// Embeddings hold `rows * dim` floats, row-major.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData<'a> {
  Utf8(Strings),
  Int64 {
    values: Cow<'a, [i64]>,
    validity: Validity<'a>,
  },
  Int32 {
    values: Cow<'a, [i32]>,
    validity: Validity<'a>,
  },
  Float64 {
    values: Cow<'a, [f64]>,
    validity: Validity<'a>,
  },
  /// `values[i] != 0` means true.
  Boolean {
    values: Cow<'a, [u8]>,
    validity: Validity<'a>,
  },
  /// Element strings may be null; `validity` is for whole lists.
  Utf8List {
    offsets: Cow<'a, [i32]>,
    values: Strings,
    validity: Validity<'a>,
  },
  Int64List {
    offsets: Cow<'a, [i32]>,
    values: Cow<'a, [i64]>,
    validity: Validity<'a>,
  },
  /// A null row is a vector not computed yet.
  Embedding {
    dim: usize,
    values: Cow<'a, [f32]>,
    validity: Validity<'a>,
  },
}

impl ColumnData<'_> {
  pub fn kind(&self) -> ColumnKind {
    match self {
      ColumnData::Utf8(_) => ColumnKind::Utf8,
      ColumnData::Int64 { .. } => ColumnKind::Int64,
      ColumnData::Int32 { .. } => ColumnKind::Int32,
      ColumnData::Float64 { .. } => ColumnKind::Float64,
      ColumnData::Boolean { .. } => ColumnKind::Boolean,
      ColumnData::Utf8List { .. } => ColumnKind::Utf8List,
      ColumnData::Int64List { .. } => ColumnKind::Int64List,
      ColumnData::Embedding { .. } => ColumnKind::Embedding,
    }
  }

  /// Number of rows this column describes (not elements).
  pub fn rows(&self) -> usize {
    match self {
      ColumnData::Utf8(s) => s.len(),
      ColumnData::Int64 { values, .. } => values.len(),
      ColumnData::Int32 { values, .. } => values.len(),
      ColumnData::Float64 { values, .. } => values.len(),
      ColumnData::Boolean { values, .. } => values.len(),
      ColumnData::Utf8List { offsets, .. } | ColumnData::Int64List { offsets, .. } => {
        offsets.len().saturating_sub(1)
      }
      ColumnData::Embedding { dim, values, .. } => {
        if *dim == 0 {
          0
        } else {
          values.len() / dim
        }
      }
    }
  }

  /// Row-level validity (list-level for lists), `None` when all rows are present.
  pub fn validity(&self) -> Option<&[u8]> {
    match self {
      ColumnData::Utf8(s) => s.validity.as_deref(),
      ColumnData::Int64 { validity, .. }
      | ColumnData::Int32 { validity, .. }
      | ColumnData::Float64 { validity, .. }
      | ColumnData::Boolean { validity, .. }
      | ColumnData::Utf8List { validity, .. }
      | ColumnData::Int64List { validity, .. }
      | ColumnData::Embedding { validity, .. } => validity.as_deref(),
    }
  }

  /// Copies any borrowed buffers so the column outlives its source.
  pub fn into_owned(self) -> ColumnData<'static> {
    fn own<T: Clone>(c: Cow<'_, [T]>) -> Cow<'static, [T]> {
      Cow::Owned(c.into_owned())
    }
    fn own_v(v: Validity<'_>) -> Validity<'static> {
      v.map(own)
    }
    match self {
      ColumnData::Utf8(s) => ColumnData::Utf8(s),
      ColumnData::Int64 { values, validity } => ColumnData::Int64 {
        values: own(values),
        validity: own_v(validity),
      },
      ColumnData::Int32 { values, validity } => ColumnData::Int32 {
        values: own(values),
        validity: own_v(validity),
      },
      ColumnData::Float64 { values, validity } => ColumnData::Float64 {
        values: own(values),
        validity: own_v(validity),
      },
      ColumnData::Boolean { values, validity } => ColumnData::Boolean {
        values: own(values),
        validity: own_v(validity),
      },
      ColumnData::Utf8List {
        offsets,
        values,
        validity,
      } => ColumnData::Utf8List {
        offsets: own(offsets),
        values,
        validity: own_v(validity),
      },
      ColumnData::Int64List {
        offsets,
        values,
        validity,
      } => ColumnData::Int64List {
        offsets: own(offsets),
        values: own(values),
        validity: own_v(validity),
      },
      ColumnData::Embedding {
        dim,
        values,
        validity,
      } => ColumnData::Embedding {
        dim,
        values: own(values),
        validity: own_v(validity),
      },
    }
  }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Column<'a> {
  pub name: String,
  pub data: ColumnData<'a>,
}

impl<'a> Column<'a> {
  pub fn new(name: impl Into<String>, data: ColumnData<'a>) -> Self {
    Column {
      name: name.into(),
      data,
    }
  }
}

/// A table: an ordered list of equally long columns. `num_rows` is explicit so a table
/// read with zero projected columns still knows its length.
#[derive(Clone, Debug, PartialEq)]
pub struct Table<'a> {
  pub num_rows: usize,
  pub columns: Vec<Column<'a>>,
}

impl<'a> Table<'a> {
  /// Builds a table whose row count is taken from the first column (0 if none).
  pub fn new(columns: Vec<Column<'a>>) -> Self {
    let num_rows = columns.first().map_or(0, |c| c.data.rows());
    Table { num_rows, columns }
  }

  pub fn column(&self, name: &str) -> Option<&Column<'a>> {
    self.columns.iter().find(|c| c.name == name)
  }

  /// Checks every invariant a writer relies on; the message names the column.
  pub fn validate(&self) -> Result<(), String> {
    if self.columns.is_empty() {
      return Err("a table needs at least one column".into());
    }
    let mut seen = std::collections::HashSet::new();
    for c in &self.columns {
      if c.name.is_empty() {
        return Err("column names must not be empty".into());
      }
      if !seen.insert(c.name.as_str()) {
        return Err(format!("duplicate column name `{}`", c.name));
      }
      validate_column(c, self.num_rows)
        .map_err(|e| format!("column `{}` ({}): {e}", c.name, c.data.kind()))?;
    }
    Ok(())
  }

  pub fn into_owned(self) -> Table<'static> {
    Table {
      num_rows: self.num_rows,
      columns: self
        .columns
        .into_iter()
        .map(|c| Column {
          name: c.name,
          data: c.data.into_owned(),
        })
        .collect(),
    }
  }
}

fn validate_column(c: &Column<'_>, rows: usize) -> Result<(), String> {
  let check_validity = |v: Option<&[u8]>| match v {
    Some(v) if v.len() != rows => Err(format!("validity has {} entries, expected {rows}", v.len())),
    _ => Ok(()),
  };
  match &c.data {
    ColumnData::Embedding {
      dim,
      values,
      validity,
    } => {
      if *dim == 0 || *dim > i32::MAX as usize {
        return Err(format!("dim must be between 1 and 2^31 - 1, got {dim}"));
      }
      if values.len() != rows * dim {
        return Err(format!(
          "{} floats, expected rows × dim = {rows} × {dim} = {}",
          values.len(),
          rows * dim
        ));
      }
      check_validity(validity.as_deref())?;
    }
    ColumnData::Utf8List {
      offsets,
      values,
      validity,
    } => {
      check_offsets(offsets, rows, values.len())?;
      check_strings(values)?;
      check_validity(validity.as_deref())?;
    }
    ColumnData::Int64List {
      offsets,
      values,
      validity,
    } => {
      check_offsets(offsets, rows, values.len())?;
      check_validity(validity.as_deref())?;
    }
    ColumnData::Utf8(s) => {
      if s.len() != rows {
        return Err(format!("{} values, expected {rows}", s.len()));
      }
      check_strings(s)?;
    }
    other => {
      if other.rows() != rows {
        return Err(format!("{} values, expected {rows}", other.rows()));
      }
      check_validity(other.validity())?;
    }
  }
  Ok(())
}

fn check_offsets(offsets: &[i32], rows: usize, elements: usize) -> Result<(), String> {
  if offsets.len() != rows + 1 {
    return Err(format!(
      "{} offsets, expected rows + 1 = {}",
      offsets.len(),
      rows + 1
    ));
  }
  if offsets[0] != 0 {
    return Err(format!("offsets must start at 0, got {}", offsets[0]));
  }
  if let Some(i) = offsets.windows(2).position(|w| w[1] < w[0]) {
    return Err(format!(
      "offsets decrease at row {i} ({} > {})",
      offsets[i],
      offsets[i + 1]
    ));
  }
  let last = offsets[rows] as usize;
  if last != elements {
    return Err(format!(
      "last offset is {last} but there are {elements} element values"
    ));
  }
  Ok(())
}

fn check_strings(s: &Strings) -> Result<(), String> {
  if s.offsets.first() != Some(&0) || s.offsets.windows(2).any(|w| w[1] < w[0]) {
    return Err("string offsets must start at 0 and never decrease".into());
  }
  if s.offsets.last() != Some(&s.bytes.len()) {
    return Err("string offsets do not end at the byte length".into());
  }
  if let Some(v) = &s.validity {
    if v.len() != s.len() {
      return Err(format!(
        "string validity has {} entries, expected {}",
        v.len(),
        s.len()
      ));
    }
  }
  // UTF-8 is verified by arrow when the batch is built.
  Ok(())
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn strings_push_and_get() {
    let s = Strings::from_options([Some("a"), None, Some(""), Some("héllo")]);
    assert_eq!(s.len(), 4);
    assert_eq!(s.get(0), Some("a"));
    assert_eq!(s.get(1), None);
    assert_eq!(s.get(2), Some(""));
    assert_eq!(s.get(3), Some("héllo"));
    assert_eq!(s.validity.as_deref(), Some(&[1, 0, 1, 1][..]));
  }

  #[test]
  fn validate_reports_the_column_and_the_problem() {
    let t = Table {
      num_rows: 2,
      columns: vec![
        Column::new(
          "a",
          ColumnData::Int64 {
            values: vec![1, 2].into(),
            validity: None,
          },
        ),
        Column::new(
          "e",
          ColumnData::Embedding {
            dim: 3,
            values: vec![0.0; 5].into(),
            validity: None,
          },
        ),
      ],
    };
    let e = t.validate().unwrap_err();
    assert!(
      e.contains("`e`") && e.contains("5 floats") && e.contains("2 × 3"),
      "{e}"
    );

    let t = Table {
      num_rows: 2,
      columns: vec![Column::new(
        "l",
        ColumnData::Int64List {
          offsets: vec![0, 2, 1].into(),
          values: vec![1, 2].into(),
          validity: None,
        },
      )],
    };
    assert!(t.validate().unwrap_err().contains("offsets decrease"));

    let t = Table::new(vec![
      Column::new(
        "a",
        ColumnData::Int32 {
          values: vec![1].into(),
          validity: None,
        },
      ),
      Column::new(
        "a",
        ColumnData::Int32 {
          values: vec![1].into(),
          validity: None,
        },
      ),
    ]);
    assert!(t.validate().unwrap_err().contains("duplicate column name `a`"));

    let t = Table::new(vec![Column::new(
      "a",
      ColumnData::Int32 {
        values: vec![1, 2].into(),
        validity: Some(vec![1].into()),
      },
    )]);
    assert!(t.validate().unwrap_err().contains("validity has 1 entries"));
    assert!(Table::new(vec![]).validate().is_err());
  }
}
