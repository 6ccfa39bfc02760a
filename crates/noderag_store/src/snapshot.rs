//! The payload of `cache/search_graph.bin` derived straight from the search tables
//! (ts/index-io/graph-snapshot.ts has the layout and writes the header around it).
//!
//! The TypeScript derivation (ts/index-io/search-arrays.ts `arraysFromTables`, then
//! graph-snapshot.ts `encodeArrays`) decodes every id and text into a JS string, resolves
//! references through a `Map` of all ids and encodes the strings back to UTF-8: on a 10 MB
//! corpus (800k nodes) about 4 s of every build's last commit. Here the strings stay bytes
//! from the parquet pages to the payload. The result is byte for byte the TypeScript one
//! (tests/native/search-snapshot.test.ts compares both); every table inconsistency the
//! TypeScript path reports as damage is an `Err` here, so the caller keeps no snapshot and
//! search reads (and reports) the tables.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;

use crate::{read_table, ColumnData, ColumnKind, ColumnRequest, ReadOptions, Strings, Table};

/// The twelve tables the snapshot is derived from.
pub struct SnapshotSources<'a> {
  pub documents: &'a Path,
  pub text: &'a Path,
  pub units: &'a Path,
  pub entities: &'a Path,
  pub relationships: &'a Path,
  pub attributes: &'a Path,
  pub elements: &'a Path,
  pub titles: &'a Path,
  pub graph_nodes: &'a Path,
  pub graph_edges: &'a Path,
  pub hnsw_graph: &'a Path,
  pub id_map: &'a Path,
}

/// The header's counts (graph-snapshot.ts `Header`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SnapshotCounts {
  pub n: usize,
  pub m: usize,
  pub s: usize,
  pub d: usize,
  pub l: usize,
  pub h: usize,
  pub id_bytes: usize,
  pub text_bytes: usize,
  pub doc_bytes: usize,
}

pub struct SnapshotPayload {
  /// The sections, each zero-padded to a multiple of 8 bytes.
  pub bytes: Vec<u8>,
  pub counts: SnapshotCounts,
}

const NO: i32 = -1;

/// FxHash (rustc's): ids are SHA-256 hex, already well mixed, so a cheap word hash does.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
  fn write(&mut self, bytes: &[u8]) {
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
      self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
    }
    for &b in chunks.remainder() {
      self.add(u64::from(b));
    }
  }
  fn write_u8(&mut self, b: u8) {
    self.add(u64::from(b));
  }
  fn write_usize(&mut self, x: usize) {
    self.add(x as u64);
  }
  fn finish(&self) -> u64 {
    self.0
  }
}

impl FxHasher {
  fn add(&mut self, word: u64) {
    self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
  }
}

type Fx = BuildHasherDefault<FxHasher>;

type Reason<T> = Result<T, String>;

struct Read {
  label: &'static str,
  table: Table<'static>,
}

/// Reads `columns`, each of the kind the TypeScript reader asks for (TABLES in
/// ts/index-io/tables.ts): a column of another kind is damage on both paths. The integer
/// columns are `int64`; every other one is `utf8` but `retired`, a `boolean`.
fn read(path: &Path, label: &'static str, columns: &[&str]) -> Reason<Read> {
  let kind = |name: &str| match name {
    "doc_id" | "weight" => ColumnKind::Int64,
    "id" if label == "id_map.parquet" => ColumnKind::Int64,
    "retired" => ColumnKind::Boolean,
    _ => ColumnKind::Utf8,
  };
  let options = ReadOptions {
    columns: Some(columns.iter().map(|c| ColumnRequest::of(*c, kind(c))).collect()),
  };
  let table = read_table(path, &options).map_err(|e| e.to_string())?;
  Ok(Read { label, table })
}

impl Read {
  fn data(&self, name: &str) -> Reason<&ColumnData<'static>> {
    self
      .table
      .column(name)
      .map(|c| &c.data)
      .ok_or_else(|| format!("{}: column {name} is missing", self.label))
  }

  /// A string column without nulls.
  fn utf8(&self, name: &str) -> Reason<&Strings> {
    match self.data(name)? {
      ColumnData::Utf8(s) => match s.validity.as_ref().and_then(|v| v.iter().position(|&b| b == 0)) {
        Some(row) => Err(format!(
          "{}: column {name}, row {row}: unexpected null",
          self.label
        )),
        None => Ok(s),
      },
      other => Err(format!(
        "{}: column {name} is {}, expected utf8",
        self.label,
        other.kind()
      )),
    }
  }

  /// An int64 column without nulls, every value a safe JS integer (|v| ≤ 2^53 − 1), as the
  /// bindings' reader demands of one (ts/store).
  fn ints(&self, name: &str) -> Reason<Vec<i64>> {
    const SAFE: i64 = (1 << 53) - 1;
    let ColumnData::Int64 { values, validity } = self.data(name)? else {
      return Err(format!("{}: column {name} is not int64", self.label));
    };
    if let Some(row) = validity.as_ref().and_then(|v| v.iter().position(|&b| b == 0)) {
      return Err(format!(
        "{}: column {name}, row {row}: unexpected null",
        self.label
      ));
    }
    if let Some(row) = values.iter().position(|v| !(-SAFE..=SAFE).contains(v)) {
      return Err(format!(
        "{}: column {name}, row {row}: {} is beyond ±(2^53 − 1)",
        self.label, values[row]
      ));
    }
    Ok(values.to_vec())
  }

  /// A boolean column; a null reads as its stored value, as ts/index-io/columns.ts does.
  fn booleans(&self, name: &str) -> Reason<&[u8]> {
    match self.data(name)? {
      ColumnData::Boolean { values, .. } => Ok(values),
      other => Err(format!(
        "{}: column {name} is {}, expected boolean",
        self.label,
        other.kind()
      )),
    }
  }
}

fn bytes_of(s: &Strings, i: usize) -> &[u8] {
  &s.bytes[s.offsets[i]..s.offsets[i + 1]]
}

fn show(id: &[u8]) -> String {
  String::from_utf8_lossy(id).into_owned()
}

/// Dense node indexes (ascending id order) and their ids.
struct Nodes<'t> {
  ids: Vec<&'t [u8]>,
  types: Vec<u8>,
  index: HashMap<&'t [u8], u32, Fx>,
}

impl<'t> Nodes<'t> {
  fn of(&self, id: &[u8]) -> Option<u32> {
    self.index.get(id).copied()
  }
}

fn nodes<'t>(t: &'t Read, type_names: &[&str]) -> Reason<Nodes<'t>> {
  let id_col = t.utf8("id")?;
  let type_col = t.utf8("type")?;
  let n = id_col.len();
  let mut ids: Vec<&[u8]> = (0..n).map(|i| bytes_of(id_col, i)).collect();
  let mut order: Vec<usize> = (0..n).collect();
  if ids.windows(2).any(|w| w[0] >= w[1]) {
    order.sort_by(|&a, &b| ids[a].cmp(ids[b]));
    ids = order.iter().map(|&k| bytes_of(id_col, k)).collect();
  }
  let mut types = Vec::with_capacity(n);
  for &k in &order {
    let name = bytes_of(type_col, k);
    let code = type_names
      .iter()
      .position(|t| t.as_bytes() == name)
      .ok_or_else(|| format!("graph_nodes.parquet: unknown node type {:?}", show(name)))?;
    types.push(code as u8);
  }
  let mut index = HashMap::with_capacity_and_hasher(n, Fx::default());
  for (i, id) in ids.iter().enumerate() {
    if index.insert(*id, i as u32).is_some() {
      return Err(format!("graph_nodes.parquet: node {} appears twice", show(id)));
    }
  }
  // Printable ASCII ids only (graph-snapshot.ts): otherwise only the tables can say what is wrong.
  if let Some(bad) = ids
    .iter()
    .find(|id| id.is_empty() || id.iter().any(|&b| !(0x21..=0x7e).contains(&b)))
  {
    return Err(format!("graph node id {:?}", show(bad)));
  }
  Ok(Nodes { ids, types, index })
}

/// Per-node fields filled from the tables (search-arrays.ts `arraysFromTables`).
struct Fields<'t> {
  texts: Vec<Option<&'t [u8]>>,
  doc_of: Vec<i32>,
  chunk_of: Vec<i32>,
  attribute_of: Vec<i32>,
  element_of: Vec<i32>,
}

/// Every row of `t` whose id is a node of type `code` gets its text; `each(row, node)` then.
fn place<'t>(
  t: &'t Read,
  code: u8,
  type_names: &[&str],
  nodes: &Nodes<'_>,
  texts: &mut [Option<&'t [u8]>],
  mut each: impl FnMut(usize, usize) -> Reason<()>,
) -> Reason<()> {
  let ids = t.utf8("hash_id")?;
  let contexts = t.utf8("context")?;
  for row in 0..ids.len() {
    // Rows not yet in the graph belong to a cycle in progress: not searchable yet.
    let Some(node) = nodes.of(bytes_of(ids, row)) else {
      continue;
    };
    let node = node as usize;
    if nodes.types[node] != code {
      return Err(format!(
        "{}: row {row} ({}) is a {} in graph_nodes.parquet",
        t.label,
        show(bytes_of(ids, row)),
        type_names.get(nodes.types[node] as usize).copied().unwrap_or("?")
      ));
    }
    texts[node] = Some(bytes_of(contexts, row));
    each(row, node)?;
  }
  Ok(())
}

fn code(type_names: &[&str], name: &str) -> Reason<u8> {
  type_names
    .iter()
    .position(|t| *t == name)
    .map(|c| c as u8)
    .ok_or_else(|| format!("node type {name} is not among the type names given"))
}

/// Node indexes of an endpoint column; every id must be a node.
fn endpoints(t: &Read, name: &str, nodes: &Nodes<'_>) -> Reason<Vec<u32>> {
  let col = t.utf8(name)?;
  let mut out = Vec::with_capacity(col.len());
  // Edge tables list each node's edges together: most ids are the previous row's again.
  let mut last: (&[u8], u32) = (&[], 0);
  for i in 0..col.len() {
    let id = bytes_of(col, i);
    if !id.is_empty() && id == last.0 {
      out.push(last.1);
      continue;
    }
    let node = nodes.of(id).ok_or_else(|| {
      format!(
        "{}: row {i} has {name} {}, which is not in the graph",
        t.label,
        show(id)
      )
    })?;
    last = (id, node);
    out.push(node);
  }
  Ok(out)
}

/// The edge tables and the id map as node indexes.
struct Links {
  weights: Vec<i64>,
  edge_src: Vec<u32>,
  edge_dst: Vec<u32>,
  sim_src: Vec<u32>,
  sim_dst: Vec<u32>,
  /// HNSW label → node, −1 when retired.
  label_node: Vec<i32>,
}

/// Reads the base edges (positive weights), the similarity pairs and the id map (label i on
/// row i), one after the other, each table dropped once its ids are node indexes.
fn links(src: &SnapshotSources<'_>, nodes: &Nodes<'_>) -> Reason<Links> {
  let graph_edges = read(
    src.graph_edges,
    "graph_edges.parquet",
    &["weight", "source", "target"],
  )?;
  let weights = graph_edges.ints("weight")?;
  if let Some(bad) = weights.iter().position(|&w| w <= 0) {
    return Err(format!(
      "graph_edges.parquet: row {bad} has weight {}; weights must be positive",
      weights[bad]
    ));
  }
  let edge_src = endpoints(&graph_edges, "source", nodes)?;
  let edge_dst = endpoints(&graph_edges, "target", nodes)?;
  drop(graph_edges);
  let hnsw_graph = read(src.hnsw_graph, "hnsw_graph.parquet", &["source", "target"])?;
  let sim_src = endpoints(&hnsw_graph, "source", nodes)?;
  let sim_dst = endpoints(&hnsw_graph, "target", nodes)?;
  drop(hnsw_graph);
  let id_map = read(src.id_map, "id_map.parquet", &["id", "node", "retired"])?;
  let labels = id_map.ints("id")?;
  let label_nodes = id_map.utf8("node")?;
  let retired = id_map.booleans("retired")?;
  let mut label_node = vec![NO; labels.len()];
  for (row, &label) in labels.iter().enumerate() {
    if label != row as i64 {
      return Err(format!(
        "id_map.parquet: row {row} has label {label}; labels must run 0, 1, 2, …"
      ));
    }
    if retired.get(row).is_some_and(|&r| r != 0) {
      continue;
    }
    let named = bytes_of(label_nodes, row);
    label_node[row] = nodes.of(named).ok_or_else(|| {
      format!(
        "id_map.parquet: label {label} names {}, which is not in the graph",
        show(named)
      )
    })? as i32;
  }
  Ok(Links {
    weights,
    edge_src,
    edge_dst,
    sim_src,
    sim_dst,
    label_node,
  })
}

/// Derives the payload. `type_names`: the node types in code order (NODE_TYPES).
pub fn derive_snapshot_payload(src: &SnapshotSources<'_>, type_names: &[&str]) -> Reason<SnapshotPayload> {
  // The nodes first: the edge tables and the id map become node indexes as soon as they are
  // read, so their ids (most of the bytes of a large index) are never all held at once, nor
  // while the payload is made. The other tables are read side by side meanwhile.
  let graph_nodes = read(src.graph_nodes, "graph_nodes.parquet", &["id", "type"])?;
  let nodes = nodes(&graph_nodes, type_names)?;
  let n = nodes.ids.len();
  let (tables, links) = std::thread::scope(|scope| {
    // Units, entities and relationships: their text and their first chunk.
    const CHUNKED: &[&str] = &["hash_id", "context", "text_hash_id"];
    let jobs: [(&Path, &'static str, &[&str]); 8] = [
      (src.documents, "documents.parquet", &["doc_id", "path"]),
      (src.text, "text.parquet", &["hash_id", "context", "doc_id"]),
      (src.units, "semantic_units.parquet", CHUNKED),
      (src.entities, "entities.parquet", CHUNKED),
      (src.relationships, "relationship.parquet", CHUNKED),
      (
        src.attributes,
        "attributes.parquet",
        &["hash_id", "context", "node"],
      ),
      (
        src.elements,
        "high_level_elements.parquet",
        &["hash_id", "context"],
      ),
      (
        src.titles,
        "high_level_elements_titles.parquet",
        &["hash_id", "context", "related_node"],
      ),
    ];
    let handles = jobs.map(|(path, label, columns)| scope.spawn(move || read(path, label, columns)));
    let links = links(src, &nodes);
    let tables = handles.map(|h| {
      h.join()
        // A panic is a fault of this code, not damage: it goes on to the binding's guard.
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    (tables, links)
  });
  let Links {
    weights,
    edge_src,
    edge_dst,
    sim_src,
    sim_dst,
    label_node,
  } = links?;
  let [documents, text, units, entities, relationships, attributes, elements, titles] = tables;
  let (documents, text, units, entities) = (documents?, text?, units?, entities?);
  let (relationships, attributes, elements, titles) = (relationships?, attributes?, elements?, titles?);

  // Documents: text rows point at documents; other rows at their first chunk.
  let doc_ids = documents.ints("doc_id")?;
  let paths = documents.utf8("path")?;
  let doc_index: HashMap<i64, i32> = doc_ids
    .iter()
    .enumerate()
    .map(|(i, &id)| (id, i as i32))
    .collect();
  let text_ids = text.utf8("hash_id")?;
  let text_doc_ids = text.ints("doc_id")?;
  let mut text_doc: HashMap<&[u8], i32, Fx> =
    HashMap::with_capacity_and_hasher(text_ids.len(), Fx::default());
  for (i, doc) in text_doc_ids.iter().enumerate() {
    text_doc.insert(bytes_of(text_ids, i), doc_index.get(doc).copied().unwrap_or(NO));
  }

  let mut f = Fields {
    texts: vec![None; n],
    doc_of: vec![NO; n],
    chunk_of: vec![NO; n],
    attribute_of: vec![NO; n],
    element_of: vec![NO; n],
  };
  let Fields {
    texts,
    doc_of,
    chunk_of,
    attribute_of,
    element_of,
  } = &mut f;

  place(
    &text,
    code(type_names, "text")?,
    type_names,
    &nodes,
    texts,
    |row, node| {
      doc_of[node] = text_doc.get(bytes_of(text_ids, row)).copied().unwrap_or(NO);
      chunk_of[node] = node as i32;
      Ok(())
    },
  )?;
  // A unit keeps its first chunk as well as that chunk's document; entities and relationships the document.
  for (table, type_name, keep_chunk) in [
    (&units, "semantic_unit", true),
    (&entities, "entity", false),
    (&relationships, "relationship", false),
  ] {
    let chunks = table.utf8("text_hash_id")?;
    place(
      table,
      code(type_names, type_name)?,
      type_names,
      &nodes,
      texts,
      |row, node| {
        let chunk = bytes_of(chunks, row);
        doc_of[node] = text_doc.get(chunk).copied().unwrap_or(NO);
        if keep_chunk {
          chunk_of[node] = nodes.of(chunk).map_or(NO, |c| c as i32);
        }
        Ok(())
      },
    )?;
  }
  let entity = code(type_names, "entity")?;
  let attr_entity = attributes.utf8("node")?;
  place(
    &attributes,
    code(type_names, "attribute")?,
    type_names,
    &nodes,
    texts,
    |row, node| {
      let named = bytes_of(attr_entity, row);
      match nodes.of(named) {
        Some(e) if nodes.types[e as usize] == entity => {
          attribute_of[e as usize] = node as i32;
          doc_of[node] = doc_of[e as usize];
          Ok(())
        }
        _ => Err(format!(
          "attributes.parquet: row {row} names entity {}, which is not in the graph",
          show(named)
        )),
      }
    },
  )?;
  let element = code(type_names, "high_level_element")?;
  place(&elements, element, type_names, &nodes, texts, |_, _| Ok(()))?;
  let title_element = titles.utf8("related_node")?;
  place(
    &titles,
    code(type_names, "high_level_element_title")?,
    type_names,
    &nodes,
    texts,
    |row, node| {
      let named = bytes_of(title_element, row);
      match nodes.of(named) {
        Some(e) if nodes.types[e as usize] == element => {
          element_of[node] = e as i32;
          Ok(())
        }
        _ => Err(format!(
          "high_level_elements_titles.parquet: row {row} names element {}, which is not in the graph",
          show(named)
        )),
      }
    },
  )?;
  if let Some(i) = texts.iter().position(Option::is_none) {
    return Err(format!(
      "graph node {} ({}) has no row in its table",
      show(nodes.ids[i]),
      type_names.get(nodes.types[i] as usize).copied().unwrap_or("?")
    ));
  }

  // The base graph as adjacency lists, both directions, in edge order (counting sort).
  let m = edge_src.len();
  let mut adj_offsets = vec![0u32; n + 1];
  for i in 0..m {
    adj_offsets[edge_src[i] as usize + 1] += 1;
    adj_offsets[edge_dst[i] as usize + 1] += 1;
  }
  for i in 0..n {
    adj_offsets[i + 1] += adj_offsets[i];
  }
  let mut fill: Vec<u32> = adj_offsets[..n].to_vec();
  let mut adj_targets = vec![0u32; 2 * m];
  for i in 0..m {
    let (u, v) = (edge_src[i] as usize, edge_dst[i] as usize);
    adj_targets[fill[u] as usize] = v as u32;
    fill[u] += 1;
    adj_targets[fill[v] as usize] = u as u32;
    fill[v] += 1;
  }

  let id_strings = encode(nodes.ids.iter().copied()).ok_or("ids longer than 4 GiB")?;
  let text_strings =
    encode(texts.iter().map(|t| t.expect("checked above"))).ok_or("texts longer than 4 GiB")?;
  let doc_strings = encode((0..paths.len()).map(|i| bytes_of(paths, i))).ok_or("texts longer than 4 GiB")?;
  let id_table = id_table(&nodes.ids);

  let counts = SnapshotCounts {
    n,
    m,
    s: sim_src.len(),
    d: paths.len(),
    l: label_node.len(),
    h: id_table.len(),
    id_bytes: id_strings.1.len(),
    text_bytes: text_strings.1.len(),
    doc_bytes: doc_strings.1.len(),
  };
  let weights_f64: Vec<f64> = weights.iter().map(|&w| w as f64).collect();
  let pad = |bytes: usize| bytes.div_ceil(8) * 8;
  let c = &counts;
  let total = pad(c.id_bytes)
    + pad(n)
    + 2 * pad(4 * c.m)
    + pad(8 * c.m)
    + 2 * pad(4 * (n + 1))
    + pad(8 * c.m)
    + 2 * pad(4 * c.s)
    + pad(c.text_bytes)
    + 4 * pad(4 * n)
    + pad(4 * (c.d + 1))
    + pad(c.doc_bytes)
    + pad(4 * c.l)
    + pad(4 * c.h)
    + pad(4 * (n + 1));
  let mut out = Payload(Vec::with_capacity(total));
  out.bytes(&id_strings.1);
  out.bytes(&nodes.types);
  out.u32s(&edge_src);
  out.u32s(&edge_dst);
  out.f64s(&weights_f64);
  out.u32s(&adj_offsets);
  out.u32s(&adj_targets);
  out.u32s(&sim_src);
  out.u32s(&sim_dst);
  out.u32s(&text_strings.0);
  out.bytes(&text_strings.1);
  out.i32s(doc_of);
  out.i32s(chunk_of);
  out.i32s(attribute_of);
  out.i32s(element_of);
  out.u32s(&doc_strings.0);
  out.bytes(&doc_strings.1);
  out.i32s(&label_node);
  out.u32s(&id_table);
  out.u32s(&id_strings.0);
  Ok(SnapshotPayload { bytes: out.0, counts })
}

/// u32 offsets (count + 1) and the bytes of the strings back to back; None past 4 GiB.
fn encode<'s>(strings: impl Iterator<Item = &'s [u8]> + Clone) -> Option<(Vec<u32>, Vec<u8>)> {
  let mut offsets = Vec::with_capacity(strings.clone().count() + 1);
  offsets.push(0u32);
  let mut bytes = Vec::with_capacity(strings.clone().map(<[u8]>::len).sum());
  for s in strings {
    bytes.extend_from_slice(s);
    offsets.push(u32::try_from(bytes.len()).ok()?);
  }
  Some((offsets, bytes))
}

/// Slots of the id table for `n` ids: a power of two, at most half full (string-columns.ts).
fn id_slot_count(n: usize) -> usize {
  let mut size = 2;
  while size < 2 * n {
    size *= 2;
  }
  size
}

/// Open addressing by FNV-1a of the id's bytes, linear probing; a slot holds node + 1.
fn id_table(ids: &[&[u8]]) -> Vec<u32> {
  let mut slots = vec![0u32; id_slot_count(ids.len())];
  let mask = slots.len() - 1;
  for (node, id) in ids.iter().enumerate() {
    let mut h: u32 = 0x811c_9dc5;
    for &b in *id {
      h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    let mut s = h as usize & mask;
    while slots[s] != 0 {
      s = (s + 1) & mask;
    }
    slots[s] = node as u32 + 1;
  }
  slots
}

/// Sections little-endian, each zero-padded to 8 bytes.
struct Payload(Vec<u8>);

impl Payload {
  fn bytes(&mut self, b: &[u8]) {
    self.0.extend_from_slice(b);
    let padded = self.0.len().div_ceil(8) * 8;
    self.0.resize(padded, 0);
  }
  fn u32s(&mut self, v: &[u32]) {
    self.words(v, |x, out: &mut [u8; 4]| *out = x.to_le_bytes());
  }
  fn i32s(&mut self, v: &[i32]) {
    self.words(v, |x, out: &mut [u8; 4]| *out = x.to_le_bytes());
  }
  fn f64s(&mut self, v: &[f64]) {
    self.words(v, |x, out: &mut [u8; 8]| *out = x.to_le_bytes());
  }
  /// Appends `v` as fixed-size little-endian words into space sized once, then pads.
  fn words<T: Copy, const W: usize>(&mut self, v: &[T], put: impl Fn(T, &mut [u8; W])) {
    let start = self.0.len();
    self.0.resize(start + v.len() * W, 0);
    for (out, &x) in self.0[start..].chunks_exact_mut(W).zip(v) {
      put(x, out.try_into().expect("W bytes"));
    }
    self.bytes(&[]);
  }
}
