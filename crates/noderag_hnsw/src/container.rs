//! `HNSW.bin`, one file (docs/method.md §5). Format 2, written by this version:
//!
//! ```text
//! "NRHNSW01"              8 bytes
//! header length           u32 little-endian
//! header                  UTF-8 JSON, see `FileHeader` (format_version 2)
//! graph section           `graph_bytes` long, little-endian:
//!                           entry label u32 (0xffffffff when empty), entry level u8,
//!                           then per label in order: level u8, and per layer 0..=level
//!                           the neighbour count u32 and the neighbour labels u32
//! data section            `data_bytes` = count × dim × 4: the vectors, f32 little-endian,
//!                           row = label (normalised for cosine)
//! ```
//!
//! Format 1 (hnsw_rs's two dumps in place of the sections) is still read, by
//! container_v1.rs; an index loaded from it and saved again is written as format 2.
//!
//! Everything is verified before it is used: magic, header JSON (unknown or missing fields
//! are errors), every header value against what we know or can derive, exact file size,
//! SHA-256 of both sections, and every link (in range, to a point that has the layer, the
//! entry point on the top level). A file that fails is `Corrupt`, naming the file and what
//! is wrong, which makes the caller rebuild the index.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::container_v1;
use crate::distance::Space;
use crate::error::{HnswError, Result};
use crate::graph::{Graph, LEVEL_SEED, MAX_LEVEL};
use crate::index::IndexParams;
use crate::view::GraphParts;

pub const MAGIC: &[u8; 8] = b"NRHNSW01";
pub const FORMAT_VERSION: u32 = 2;
/// Who built the graph: noderag's own construction (build.rs). `LIBRARY_VERSION` names the
/// construction's rules (levels, batches, neighbour selection); a change to them that would
/// change the bytes built from the same input gets a new value.
pub const LIBRARY: &str = "noderag_hnsw";
pub const LIBRARY_VERSION: &str = "batch-1";
/// What format-1 files (hnsw_rs 0.3.5) say in the same fields.
const V1_LIBRARY: &str = "hnsw_rs";
const V1_LIBRARY_VERSION: &str = "0.3.5";
const V1_SEED: u64 = 397;
/// Headers are a few hundred bytes; anything this large is not ours.
const MAX_HEADER_LEN: u32 = 64 * 1024;
const NO_ENTRY: u32 = u32::MAX;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FileHeader {
  pub format_version: u32,
  pub library: String,
  pub library_version: String,
  pub space: Space,
  pub dim: usize,
  pub m: usize,
  pub ef_construction: usize,
  pub count: usize,
  pub seed: u64,
  pub graph_bytes: u64,
  pub data_bytes: u64,
  pub graph_sha256: String,
  pub data_sha256: String,
}

/// Scratch folders of format-1 loads (hnsw_rs read two files by name); none are made now,
/// but a killed process of an older version may have left some.
const SCRATCH_PREFIX: &str = ".hnsw-scratch-";
const TEMP_SCRATCH_PREFIX: &str = "noderag-hnsw-";
const TMP_FILE_PREFIX: &str = ".HNSW.bin.tmp-";
/// Scratch folders of older versions carry no process id: once this old, no load or save
/// (seconds) can still be using one.
const LEGACY_SCRATCH_AGE: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// Whether process `pid` may still be running. Where that cannot be known (no `/proc`),
/// the answer is yes, and only the age rule applies.
fn may_be_running(pid: u32) -> bool {
  if pid == std::process::id() {
    return true;
  }
  let proc = Path::new("/proc");
  if !proc.join("self").exists() {
    return true;
  }
  proc.join(pid.to_string()).exists()
}

/// Whether a leftover named `name` (after its prefix) is stale: its process id names a
/// process that no longer runs, or it has no process id (an older version) and is old.
fn is_stale(rest: &str, entry: &std::fs::DirEntry) -> bool {
  let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
  let has_pid = pid.is_some() && rest.contains('-');
  if has_pid {
    return !may_be_running(pid.unwrap_or(0));
  }
  entry
    .metadata()
    .and_then(|m| m.modified())
    .ok()
    .and_then(|t| t.elapsed().ok())
    .is_some_and(|age| age > LEGACY_SCRATCH_AGE)
}

/// Removes scratch folders and temporary index files that killed processes (or older
/// versions) left in `dir`, and this crate's scratch folders in the system temp folder.
/// Best effort: a failure to remove is not an error of the load.
pub fn remove_stale_scratch(dir: &Path) {
  let sweep = |dir: &Path, prefixes: &[&str]| {
    let Ok(entries) = std::fs::read_dir(dir) else {
      return;
    };
    for entry in entries.flatten() {
      let name = entry.file_name();
      let Some(name) = name.to_str() else { continue };
      for prefix in prefixes {
        if let Some(rest) = name.strip_prefix(prefix) {
          if is_stale(rest, &entry) {
            let path = entry.path();
            let _ = if path.is_dir() {
              std::fs::remove_dir_all(&path)
            } else {
              std::fs::remove_file(&path)
            };
          }
          break;
        }
      }
    }
  };
  sweep(dir, &[SCRATCH_PREFIX, TMP_FILE_PREFIX]);
  // Only folders named with a process id: another program's files are never touched.
  let temp = std::env::temp_dir();
  if let Ok(entries) = std::fs::read_dir(&temp) {
    for entry in entries.flatten() {
      let name = entry.file_name();
      let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(TEMP_SCRATCH_PREFIX)) else {
        continue;
      };
      let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
      if let Some(pid) = pid {
        if rest.contains('-') && !may_be_running(pid) {
          let _ = std::fs::remove_dir_all(entry.path());
        }
      }
    }
  }
}

fn parent_of(path: &Path) -> PathBuf {
  match path.parent() {
    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
    _ => PathBuf::from("."),
  }
}

/// The graph section of `graph` (see the module comment).
fn graph_section(graph: &Graph) -> Vec<u8> {
  let mut out = Vec::with_capacity(
    5 + graph
      .links
      .iter()
      .map(|l| 1 + l.iter().map(|x| 4 + 4 * x.len()).sum::<usize>())
      .sum::<usize>(),
  );
  let (entry, top) = graph.entry.unwrap_or((NO_ENTRY, 0));
  out.extend_from_slice(&entry.to_le_bytes());
  out.push(top);
  for lists in &graph.links {
    out.push((lists.len() - 1) as u8);
    for list in lists {
      out.extend_from_slice(&(list.len() as u32).to_le_bytes());
      for &nb in list {
        out.extend_from_slice(&nb.to_le_bytes());
      }
    }
  }
  out
}

/// Feeds the vectors to `sink` as little-endian bytes, a block at a time.
fn for_data_bytes(
  vectors: &[f32],
  mut sink: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
  let mut buf = Vec::with_capacity(1 << 16);
  for block in vectors.chunks(1 << 14) {
    buf.clear();
    for v in block {
      buf.extend_from_slice(&v.to_le_bytes());
    }
    sink(&buf)?;
  }
  Ok(())
}

/// Writes `graph` (every point linked) to `path` atomically: a temporary file in the same
/// folder, fsync, rename, fsync of the folder.
pub(crate) fn save(graph: &Graph, path: &Path) -> Result<()> {
  debug_assert!(!graph.has_pending());
  remove_stale_scratch(&parent_of(path));
  let params = &graph.params;
  let count = graph.len();
  let graph_bytes = graph_section(graph);
  let mut data_hash = Sha256::new();
  for_data_bytes(&graph.vectors, |b| {
    data_hash.update(b);
    Ok(())
  })
  .map_err(|e| HnswError::io(path, e))?;
  let header = FileHeader {
    format_version: FORMAT_VERSION,
    library: LIBRARY.into(),
    library_version: LIBRARY_VERSION.into(),
    space: params.space,
    dim: params.dim,
    m: params.m,
    ef_construction: params.ef_construction,
    count,
    seed: LEVEL_SEED,
    graph_bytes: graph_bytes.len() as u64,
    data_bytes: (graph.vectors.len() * 4) as u64,
    graph_sha256: hex::encode(Sha256::digest(&graph_bytes)),
    data_sha256: hex::encode(data_hash.finalize()),
  };
  let json = serde_json::to_vec(&header).map_err(|e| HnswError::Library(e.to_string()))?;

  let parent = parent_of(path);
  let io = |e| HnswError::io(path, e);
  let tmp = tempfile::Builder::new()
    .prefix(&format!("{TMP_FILE_PREFIX}{}-", std::process::id()))
    .tempfile_in(&parent)
    .map_err(|e| HnswError::io(&parent, e))?;
  {
    let mut w = BufWriter::with_capacity(1 << 20, tmp.as_file());
    w.write_all(MAGIC).map_err(io)?;
    w.write_all(&(json.len() as u32).to_le_bytes()).map_err(io)?;
    w.write_all(&json).map_err(io)?;
    w.write_all(&graph_bytes).map_err(io)?;
    for_data_bytes(&graph.vectors, |b| w.write_all(b)).map_err(io)?;
    w.flush().map_err(io)?;
  }
  tmp.as_file().sync_all().map_err(io)?;
  tmp.persist(path).map_err(|e| HnswError::io(path, e.error))?;
  // Make the rename itself durable. Not every platform can fsync a directory; the file
  // content is already on disk, so a failure here is not worth failing the save for.
  if let Ok(dir) = File::open(&parent) {
    let _ = dir.sync_all();
  }
  Ok(())
}

/// Reads and checks the fixed part and the JSON header; returns it with its end offset.
fn read_header(file: &mut File, path: &Path, file_len: u64) -> Result<(FileHeader, u64)> {
  let corrupt = |reason: String| HnswError::corrupt(path, reason);
  if file_len < 12 {
    return Err(corrupt(format!(
      "file is {file_len} bytes, shorter than the 12-byte preamble"
    )));
  }
  let mut pre = [0u8; 12];
  file.read_exact(&mut pre).map_err(|e| HnswError::io(path, e))?;
  if &pre[..8] != MAGIC {
    return Err(corrupt(
      "wrong magic: not a noderag HNSW.bin (expected NRHNSW01)".into(),
    ));
  }
  let header_len = u32::from_le_bytes([pre[8], pre[9], pre[10], pre[11]]);
  if header_len == 0 || header_len > MAX_HEADER_LEN || 12 + header_len as u64 > file_len {
    return Err(corrupt(format!(
      "header length {header_len} does not fit the file ({file_len} bytes)"
    )));
  }
  let mut raw = vec![0u8; header_len as usize];
  file.read_exact(&mut raw).map_err(|e| HnswError::io(path, e))?;
  let header: FileHeader =
    serde_json::from_slice(&raw).map_err(|e| corrupt(format!("header is not valid: {e}")))?;
  Ok((header, 12 + header_len as u64))
}

/// Checks every header value that can be checked without the sections.
fn check_header(h: &FileHeader, path: &Path, file_len: u64, body_start: u64) -> Result<()> {
  let corrupt = |reason: String| Err(HnswError::corrupt(path, reason));
  let (library, version, seed) = match h.format_version {
    1 => (V1_LIBRARY, V1_LIBRARY_VERSION, V1_SEED),
    FORMAT_VERSION => (LIBRARY, LIBRARY_VERSION, LEVEL_SEED),
    other => {
      return corrupt(format!(
        "format_version {other} is not supported (expected 1 or {FORMAT_VERSION})"
      ))
    }
  };
  if h.library != library {
    return corrupt(format!(
      "written by library {:?}, expected {library:?} for format {}",
      h.library, h.format_version
    ));
  }
  if h.library_version != version {
    return corrupt(format!(
      "written by {library} {}, this build reads {version}; rebuild the index",
      h.library_version
    ));
  }
  if h.seed != seed {
    return corrupt(format!(
      "seed {} is not the level seed of {library} ({seed})",
      h.seed
    ));
  }
  let params = IndexParams {
    space: h.space,
    dim: h.dim,
    m: h.m,
    ef_construction: h.ef_construction,
  };
  if let Err(e) = params.validate() {
    return corrupt(format!("header parameters are invalid: {e}"));
  }
  for (name, hash) in [("graph_sha256", &h.graph_sha256), ("data_sha256", &h.data_sha256)] {
    if hash.len() != 64
      || !hash
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
      return corrupt(format!("{name} is not a lowercase hex SHA-256"));
    }
  }
  if h.format_version == FORMAT_VERSION {
    let want = h.count.checked_mul(h.dim).and_then(|x| x.checked_mul(4));
    if want.map(|w| w as u64) != Some(h.data_bytes) {
      return corrupt(format!(
        "data section is {} bytes, expected {} vectors × {} values × 4",
        h.data_bytes, h.count, h.dim
      ));
    }
  }
  let expected = body_start
    .checked_add(h.graph_bytes)
    .and_then(|x| x.checked_add(h.data_bytes));
  match expected {
    Some(len) if len == file_len => Ok(()),
    Some(len) if len > file_len => corrupt(format!(
      "truncated: header announces {len} bytes, the file has {file_len}"
    )),
    Some(len) => corrupt(format!(
      "{} unexpected bytes after the data section",
      file_len - len
    )),
    None => corrupt("section sizes overflow".into()),
  }
}

/// A `Read` over the next `left` bytes of `inner` that hashes everything it yields.
struct HashingReader<R> {
  inner: R,
  left: u64,
  hasher: Sha256,
}

impl<R: Read> Read for HashingReader<R> {
  fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
    let want = buf.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
    if want == 0 {
      return Ok(0);
    }
    let got = self.inner.read(&mut buf[..want])?;
    self.hasher.update(&buf[..got]);
    self.left -= got as u64;
    Ok(got)
  }
}

impl<R: Read> HashingReader<R> {
  /// Reads (and hashes) whatever is left; returns the hex digest and whether all
  /// announced bytes were there.
  fn finish(mut self) -> std::io::Result<(String, bool)> {
    std::io::copy(&mut self, &mut std::io::sink())?;
    Ok((hex::encode(self.hasher.finalize()), self.left == 0))
  }
}

/// Little-endian reader over the verified graph section; every read is bounds-checked.
struct Le<'a> {
  bytes: &'a [u8],
  at: usize,
}

impl Le<'_> {
  fn u8(&mut self) -> std::result::Result<u8, String> {
    let b = *self.bytes.get(self.at).ok_or("graph section ends early")?;
    self.at += 1;
    Ok(b)
  }
  fn u32(&mut self) -> std::result::Result<u32, String> {
    let b = self
      .bytes
      .get(self.at..self.at + 4)
      .ok_or("graph section ends early")?;
    self.at += 4;
    Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
  }
}

/// Parses a format-2 graph section (structure only; links are checked by `check_links`).
fn parse_graph(bytes: &[u8], m: usize, count: usize) -> std::result::Result<GraphParts, String> {
  let mut r = Le { bytes, at: 0 };
  let entry = r.u32()?;
  let top = r.u8()?;
  let mut l0 = Vec::with_capacity(count);
  let mut upper = std::collections::HashMap::new();
  for label in 0..count {
    let level = r.u8()?;
    if level > MAX_LEVEL {
      return Err(format!("point {label} has level {level} (at most {MAX_LEVEL})"));
    }
    let mut lists = Vec::with_capacity(level as usize + 1);
    for layer in 0..=level as usize {
      let n = r.u32()? as usize;
      let cap = if layer == 0 { 2 * m } else { m };
      if n > cap {
        return Err(format!(
          "point {label} has {n} links on layer {layer} (at most {cap})"
        ));
      }
      lists.push(
        (0..n)
          .map(|_| r.u32())
          .collect::<std::result::Result<Vec<u32>, String>>()?,
      );
    }
    l0.push(lists.remove(0));
    if level > 0 {
      upper.insert(label as u32, lists);
    }
  }
  if r.at != bytes.len() {
    return Err(format!("{} unexpected bytes after the graph", bytes.len() - r.at));
  }
  let entry = (entry != NO_ENTRY).then_some((entry, top));
  Ok(GraphParts { l0, upper, entry })
}

/// Checks what searches and insertion rely on, for either format: every link names a
/// stored point other than itself; the entry point exists, has the top level, and is absent
/// only when the index is empty. (hnsw_rs's upper layers can link to a point that lacks
/// the layer; searches treat it as a dead end and construction skips it, so it is allowed.)
fn check_links(parts: &GraphParts) -> std::result::Result<(), String> {
  let count = parts.l0.len();
  let level = |label: u32| parts.upper.get(&label).map_or(0, Vec::len);
  for (label, l0) in parts.l0.iter().enumerate() {
    let label = label as u32;
    let uppers = parts.upper.get(&label).map(Vec::as_slice).unwrap_or_default();
    for (layer, list) in std::iter::once(l0).chain(uppers).enumerate() {
      for &nb in list {
        if nb as usize >= count || nb == label {
          return Err(format!(
            "point {label} has an invalid link to {nb} on layer {layer}"
          ));
        }
      }
    }
  }
  let top = (0..count as u32).map(level).max();
  match (parts.entry, top) {
    (None, None) => Ok(()),
    (Some((e, l)), Some(top)) if (e as usize) < count && level(e) == l as usize && l as usize == top => {
      Ok(())
    }
    (entry, _) => Err(format!("entry point {entry:?} is not a point of the top level")),
  }
}

/// Reads and verifies an index file of either format; the graph with every point linked.
pub(crate) fn read(path: &Path, expected_dim: usize, expected_count: Option<usize>) -> Result<Graph> {
  remove_stale_scratch(&parent_of(path));
  let mut file = File::open(path).map_err(|e| HnswError::io(path, e))?;
  let file_len = file.metadata().map_err(|e| HnswError::io(path, e))?.len();
  let (header, body_start) = read_header(&mut file, path, file_len)?;
  check_header(&header, path, file_len, body_start)?;
  if header.dim != expected_dim {
    return Err(HnswError::DimensionMismatch {
      path: path.to_path_buf(),
      expected: expected_dim,
      found: header.dim,
    });
  }
  let corrupt = |reason: String| HnswError::corrupt(path, reason);
  let params = IndexParams {
    space: header.space,
    dim: header.dim,
    m: header.m,
    ef_construction: header.ef_construction,
  };
  let graph_len =
    usize::try_from(header.graph_bytes).map_err(|_| corrupt("graph section too large".into()))?;
  let mut graph = HashingReader {
    inner: BufReader::with_capacity(1 << 20, &file),
    left: header.graph_bytes,
    hasher: Sha256::new(),
  };
  let mut graph_bytes = Vec::with_capacity(graph_len);
  graph
    .read_to_end(&mut graph_bytes)
    .map_err(|e| HnswError::io(path, e))?;
  let (graph_hash, complete) = graph.finish().map_err(|e| HnswError::io(path, e))?;
  if !complete {
    return Err(corrupt("truncated inside the graph section".into()));
  }
  if graph_hash != header.graph_sha256 {
    return Err(corrupt(
      "graph section checksum mismatch (the file is damaged)".into(),
    ));
  }
  let mut data_file = File::open(path).map_err(|e| HnswError::io(path, e))?;
  data_file
    .seek(SeekFrom::Start(body_start + header.graph_bytes))
    .map_err(|e| HnswError::io(path, e))?;
  let mut data = HashingReader {
    inner: BufReader::with_capacity(1 << 20, data_file),
    left: header.data_bytes,
    hasher: Sha256::new(),
  };
  let vectors = if header.format_version == 1 {
    container_v1::parse_data(&mut data, header.dim, header.count)
  } else {
    read_f32s(&mut data, header.count * header.dim)
  };
  let (data_hash, complete) = data.finish().map_err(|e| HnswError::io(path, e))?;
  if !complete {
    return Err(corrupt("truncated inside the data section".into()));
  }
  if data_hash != header.data_sha256 {
    return Err(corrupt(
      "data section checksum mismatch (the file is damaged)".into(),
    ));
  }
  let vectors = vectors.map_err(|e| corrupt(format!("data section: {e}")))?;
  let parts = if header.format_version == 1 {
    container_v1::parse_graph(&graph_bytes, &params, header.count)
  } else {
    parse_graph(&graph_bytes, header.m, header.count)
  };
  let parts = parts
    .and_then(|p| check_links(&p).map(|()| p))
    .map_err(|e| corrupt(format!("graph section: {e}")))?;
  if let Some(want) = expected_count {
    if want != header.count {
      return Err(corrupt(format!(
        "holds {} vectors but {want} were expected (the id map disagrees)",
        header.count
      )));
    }
  }
  Ok(Graph::from_parts(params, vectors, parts))
}

/// `n` little-endian f32 values.
fn read_f32s(r: &mut impl Read, n: usize) -> std::result::Result<Vec<f32>, String> {
  let mut out = Vec::with_capacity(n);
  let mut buf = vec![0u8; 1 << 16];
  while out.len() < n {
    let want = ((n - out.len()) * 4).min(buf.len());
    r.read_exact(&mut buf[..want])
      .map_err(|e| format!("data section ends early ({e})"))?;
    out.extend(
      buf[..want]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))),
    );
  }
  Ok(out)
}

/// Reads only the header (after the same checks as `read`, minus the checksums), e.g. to
/// decide whether a stored index matches the configuration before loading it.
pub fn read_file_header(path: &Path) -> Result<FileHeader> {
  let mut file = File::open(path).map_err(|e| HnswError::io(path, e))?;
  let file_len = file.metadata().map_err(|e| HnswError::io(path, e))?.len();
  let (header, body_start) = read_header(&mut file, path, file_len)?;
  check_header(&header, path, file_len, body_start)?;
  Ok(header)
}
