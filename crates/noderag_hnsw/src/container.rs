//! `HNSW.bin`, one file (docs/method.md §5):
//!
//! ```text
//! "NRHNSW01"              8 bytes
//! header length           u32 little-endian
//! header                  UTF-8 JSON, see `FileHeader`
//! graph dump              hnsw_rs's `<name>.hnsw.graph`, `graph_bytes` long
//! data dump               hnsw_rs's `<name>.hnsw.data`, `data_bytes` long
//! ```
//!
//! hnsw_rs's loader asserts, unwraps and even calls `process::exit` on bad input, so
//! `load` verifies everything first: magic, header JSON (unknown or missing fields are
//! errors), every header value against what we know or can derive, exact file size,
//! SHA-256 of both dumps, and the crate's own description block against the header.
//!
//! Two ways to load:
//! - [`load_view`] (search): reads both dumps in place, straight from `HNSW.bin`, hashing
//!   as it reads, into the flat arrays the searches use. No hnsw_rs structure, no copy on
//!   disk: loading needs no free space and leaves nothing behind.
//! - [`load`] (a build that adds vectors): hnsw_rs's loader reads two files by name, so
//!   the verified dumps are copied to a private scratch folder next to the file first
//!   (named with the process id; folders of processes that no longer run, and those of
//!   older versions, are removed by every load, see [`remove_stale_scratch`]).

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use hnsw_rs::api::AnnT;
use hnsw_rs::hnsw::Hnsw;
use hnsw_rs::hnswio::{load_description, HnswIo};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::distance::{Space, SpaceDistance};
use crate::error::{HnswError, Result};
use crate::index::{IndexParams, LEVEL_SEED};
use crate::view::GraphParts;

pub const MAGIC: &[u8; 8] = b"NRHNSW01";
pub const FORMAT_VERSION: u32 = 1;
pub const LIBRARY: &str = "hnsw_rs";
/// The hnsw_rs version this crate is built with (a unit test checks it against
/// Cargo.lock). Its dump format is the library's internal business, so a file written by
/// another version is refused as unusable, which makes the caller rebuild the index.
pub const LIBRARY_VERSION: &str = "0.3.5";
/// Headers are a few hundred bytes; anything this large is not ours.
const MAX_HEADER_LEN: u32 = 64 * 1024;
/// hnsw_rs's magic at the start of a data dump (`hnswio::MAGICDATAP`, private there).
const HNSW_RS_DATA_MAGIC: u32 = 0xa67f_0000;
const DUMP_BASENAME: &str = "index";

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

const SCRATCH_PREFIX: &str = ".hnsw-scratch-";
const TEMP_SCRATCH_PREFIX: &str = "noderag-hnsw-";
const TMP_FILE_PREFIX: &str = ".HNSW.bin.tmp-";
/// Scratch folders of older versions carry no process id: once this old, no load or save
/// (seconds) can still be using one.
const LEGACY_SCRATCH_AGE: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// A private scratch folder next to `path` (same file system, so no surprise about space
/// in /tmp), or in the system temp folder when the index folder is read-only. Its name
/// carries the process id, so a folder left by a killed process can be told from one in use.
fn scratch_dir(path: &Path) -> Result<tempfile::TempDir> {
  let parent = parent_of(path);
  let pid = std::process::id();
  tempfile::Builder::new()
    .prefix(&format!("{SCRATCH_PREFIX}{pid}-"))
    .tempdir_in(&parent)
    .or_else(|_| {
      tempfile::Builder::new()
        .prefix(&format!("{TEMP_SCRATCH_PREFIX}{pid}-"))
        .tempdir()
    })
    .map_err(|e| HnswError::io(parent, e))
}

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

fn dump_paths(dir: &Path, basename: &str) -> (PathBuf, PathBuf) {
  (
    dir.join(format!("{basename}.hnsw.graph")),
    dir.join(format!("{basename}.hnsw.data")),
  )
}

/// Streams `from` into `to` (if any) while hashing; returns (bytes, hex sha256).
fn copy_hashing(
  from: &mut impl Read,
  mut to: Option<&mut dyn Write>,
  limit: u64,
) -> std::io::Result<(u64, String)> {
  let mut hasher = Sha256::new();
  let mut buf = vec![0u8; 1 << 20];
  let mut left = limit;
  let mut total = 0u64;
  while left > 0 {
    let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
    let got = from.read(&mut buf[..want])?;
    if got == 0 {
      break;
    }
    hasher.update(&buf[..got]);
    if let Some(w) = to.as_deref_mut() {
      w.write_all(&buf[..got])?;
    }
    left -= got as u64;
    total += got as u64;
  }
  Ok((total, hex::encode(hasher.finalize())))
}

pub(crate) fn save(
  hnsw: &Hnsw<'static, f32, SpaceDistance>,
  params: &IndexParams,
  count: usize,
  path: &Path,
) -> Result<()> {
  remove_stale_scratch(&parent_of(path));
  let scratch = scratch_dir(path)?;
  let basename = hnsw
    .file_dump(scratch.path(), DUMP_BASENAME)
    .map_err(|e| HnswError::Library(format!("hnsw_rs could not dump the index: {e}")))?;
  let (graph_path, data_path) = dump_paths(scratch.path(), &basename);
  let hash_file = |p: &Path| -> Result<(u64, String)> {
    let mut f = BufReader::new(File::open(p).map_err(|e| HnswError::io(p, e))?);
    copy_hashing(&mut f, None, u64::MAX).map_err(|e| HnswError::io(p, e))
  };
  let (graph_bytes, graph_sha256) = hash_file(&graph_path)?;
  let (data_bytes, data_sha256) = hash_file(&data_path)?;
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
    graph_bytes,
    data_bytes,
    graph_sha256,
    data_sha256,
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
    for (p, expected) in [(&graph_path, graph_bytes), (&data_path, data_bytes)] {
      let mut f = BufReader::new(File::open(p).map_err(|e| HnswError::io(p, e))?);
      let copied = std::io::copy(&mut f, &mut w).map_err(io)?;
      if copied != expected {
        return Err(HnswError::Library(format!(
          "dump file {} changed while saving",
          p.display()
        )));
      }
    }
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

/// Checks every header value that can be checked without the dumps.
fn check_header(h: &FileHeader, path: &Path, file_len: u64, body_start: u64) -> Result<()> {
  let corrupt = |reason: String| Err(HnswError::corrupt(path, reason));
  if h.format_version != FORMAT_VERSION {
    return corrupt(format!(
      "format_version {} is not supported (expected {FORMAT_VERSION})",
      h.format_version
    ));
  }
  if h.library != LIBRARY {
    return corrupt(format!(
      "written by library {:?}, expected {LIBRARY:?}",
      h.library
    ));
  }
  if h.library_version != LIBRARY_VERSION {
    return corrupt(format!(
      "written by {LIBRARY} {}, this build uses {LIBRARY_VERSION}; rebuild the index",
      h.library_version
    ));
  }
  if h.seed != LEVEL_SEED {
    return corrupt(format!(
      "seed {} is not the level seed of {LIBRARY} ({LEVEL_SEED})",
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
  let expected = body_start
    .checked_add(h.graph_bytes)
    .and_then(|x| x.checked_add(h.data_bytes));
  match expected {
    Some(len) if len == file_len => Ok(()),
    Some(len) if len > file_len => corrupt(format!(
      "truncated: header announces {len} bytes, the file has {file_len}"
    )),
    Some(len) => corrupt(format!("{} unexpected bytes after the data dump", file_len - len)),
    None => corrupt("section sizes overflow".into()),
  }
}

/// Checks the start of both dumps against the header (hnsw_rs's own description block,
/// native-endian as hnsw_rs writes it).
fn check_dumps(h: &FileHeader, path: &Path, graph_path: &Path, data_path: &Path) -> Result<()> {
  let corrupt = |reason: String| Err(HnswError::corrupt(path, reason));
  let mut g = BufReader::new(File::open(graph_path).map_err(|e| HnswError::io(graph_path, e))?);
  let d = match load_description(&mut g) {
    Ok(d) => d,
    Err(e) => return corrupt(format!("graph dump description is unreadable: {e}")),
  };
  if d.dimension != h.dim
    || d.nb_point != h.count
    || d.max_nb_connection as usize != h.m
    || d.ef != h.ef_construction
  {
    return corrupt(format!(
            "graph dump (dim {}, {} points, m {}, ef {}) disagrees with the header (dim {}, {} points, m {}, ef {})",
            d.dimension, d.nb_point, d.max_nb_connection, d.ef, h.dim, h.count, h.m, h.ef_construction
        ));
  }
  if d.distname != std::any::type_name::<SpaceDistance>() || d.t_name != std::any::type_name::<f32>() {
    return corrupt(format!(
      "graph dump is for distance {:?} over {:?}",
      d.distname, d.t_name
    ));
  }
  let mut data = File::open(data_path).map_err(|e| HnswError::io(data_path, e))?;
  let mut head = [0u8; 4 + std::mem::size_of::<usize>()];
  if data.read_exact(&mut head).is_err() {
    return corrupt("data dump is too short".into());
  }
  let magic = u32::from_ne_bytes(head[..4].try_into().expect("4 bytes"));
  let dim = usize::from_ne_bytes(head[4..].try_into().expect("usize bytes"));
  if magic != HNSW_RS_DATA_MAGIC || dim != h.dim {
    return corrupt(format!(
      "data dump starts with magic {magic:#x} and dimension {dim}"
    ));
  }
  Ok(())
}

pub(crate) fn load(
  path: &Path,
  expected_dim: usize,
  expected_count: Option<usize>,
) -> Result<(Hnsw<'static, f32, SpaceDistance>, IndexParams)> {
  let mut file = File::open(path).map_err(|e| HnswError::io(path, e))?;
  let file_len = file.metadata().map_err(|e| HnswError::io(path, e))?.len();
  let (header, body_start) = read_header(&mut file, path, file_len)?;
  check_header(&header, path, file_len, body_start)?;

  // Copy both dumps out while hashing them, then compare.
  remove_stale_scratch(&parent_of(path));
  let scratch = scratch_dir(path)?;
  let (graph_path, data_path) = dump_paths(scratch.path(), DUMP_BASENAME);
  file
    .seek(SeekFrom::Start(body_start))
    .map_err(|e| HnswError::io(path, e))?;
  let mut reader = BufReader::with_capacity(1 << 20, file);
  for (out_path, bytes, want, what) in [
    (&graph_path, header.graph_bytes, &header.graph_sha256, "graph"),
    (&data_path, header.data_bytes, &header.data_sha256, "data"),
  ] {
    let out = File::create(out_path).map_err(|e| HnswError::io(out_path, e))?;
    let mut w = BufWriter::with_capacity(1 << 20, out);
    let (got_bytes, got_hash) =
      copy_hashing(&mut reader, Some(&mut w), bytes).map_err(|e| HnswError::io(path, e))?;
    w.flush().map_err(|e| HnswError::io(out_path, e))?;
    if got_bytes != bytes {
      return Err(HnswError::corrupt(
        path,
        format!("truncated inside the {what} dump"),
      ));
    }
    if &got_hash != want {
      return Err(HnswError::corrupt(
        path,
        format!("{what} dump checksum mismatch (the file is damaged)"),
      ));
    }
  }
  check_dumps(&header, path, &graph_path, &data_path)?;

  // The file is intact; now compare with what the caller expects.
  if header.dim != expected_dim {
    return Err(HnswError::DimensionMismatch {
      path: path.to_path_buf(),
      expected: expected_dim,
      found: header.dim,
    });
  }
  if let Some(want) = expected_count {
    if want != header.count {
      return Err(HnswError::corrupt(
        path,
        format!(
          "holds {} vectors but {want} were expected (the id map disagrees)",
          header.count
        ),
      ));
    }
  }

  // hnsw_rs ties the loaded index's lifetime to its loader; with mmap off the index owns
  // all its data, so the loader (a few paths, about a hundred bytes) is leaked to get a
  // 'static index rather than transmuting lifetimes.
  let io: &'static HnswIo = Box::leak(Box::new(HnswIo::new(scratch.path(), DUMP_BASENAME)));
  let hnsw = io
    .load_hnsw_with_dist(SpaceDistance { space: header.space })
    .map_err(|e| HnswError::corrupt(path, format!("{LIBRARY} could not load it: {e}")))?;
  if hnsw.get_nb_point() != header.count {
    return Err(HnswError::corrupt(
      path,
      format!(
        "{LIBRARY} loaded {} of {} vectors",
        hnsw.get_nb_point(),
        header.count
      ),
    ));
  }
  let params = IndexParams {
    space: header.space,
    dim: header.dim,
    m: header.m,
    ef_construction: header.ef_construction,
  };
  Ok((hnsw, params))
}

/// hnsw_rs's dump magics and its layer count (`hnswio.rs`, private there).
const HNSW_RS_POINT_MAGIC: u32 = 0x000a_678f;
const HNSW_RS_LAYER_MAGIC: u32 = 0x000a_676f;
const HNSW_RS_LAYERS: usize = 16;

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

/// Little cursor over the verified graph dump; every read is bounds-checked.
struct Cursor<'a> {
  bytes: &'a [u8],
  at: usize,
}

impl Cursor<'_> {
  fn take<const N: usize>(&mut self) -> std::result::Result<[u8; N], String> {
    let end = self.at.checked_add(N).filter(|&e| e <= self.bytes.len());
    let end = end.ok_or_else(|| format!("graph dump ends early (at byte {})", self.at))?;
    let out: [u8; N] = self.bytes[self.at..end].try_into().expect("N bytes");
    self.at = end;
    Ok(out)
  }
  fn u8(&mut self) -> std::result::Result<u8, String> {
    Ok(self.take::<1>()?[0])
  }
  fn u32(&mut self) -> std::result::Result<u32, String> {
    Ok(u32::from_ne_bytes(self.take()?))
  }
  fn i32(&mut self) -> std::result::Result<i32, String> {
    Ok(i32::from_ne_bytes(self.take()?))
  }
  fn f32(&mut self) -> std::result::Result<f32, String> {
    Ok(f32::from_ne_bytes(self.take()?))
  }
  fn usize(&mut self) -> std::result::Result<usize, String> {
    Ok(usize::from_ne_bytes(self.take()?))
  }
}

/// One point of the graph dump: its label and, per layer, (neighbour position, distance).
struct DumpPoint {
  label: usize,
  level: u8,
  hood: Vec<Vec<((u8, i32), f32)>>,
}

/// Parses hnsw_rs's graph dump (full mode, as `file_dump` writes it) into the lists of a
/// [`GraphParts`]. Neighbours are resolved through their (layer, rank) position and sorted
/// by distance, exactly as hnsw_rs's own loader does, so searches see the same graph.
fn parse_graph(bytes: &[u8], dim: usize, count: usize) -> std::result::Result<GraphParts, String> {
  let mut c = Cursor { bytes, at: 0 };
  let d = load_description(&mut &bytes[..]).map_err(|e| format!("description is unreadable: {e}"))?;
  // The description's own length: re-read it field by field to find where it ends.
  c.take::<4>()?; // magic
  let mode = c.u8()?;
  c.u8()?; // max_nb_connection
  if d.format_version == 4 {
    c.take::<8>()?; // level scale
  }
  let nb_layer = c.u8()? as usize;
  c.usize()?; // ef
  c.usize()?; // nb_point
  c.usize()?; // dimension
  for _ in 0..2 {
    let len = c.usize()?;
    if len > 256 {
      return Err("a type name in the description is too long".into());
    }
    c.at = c
      .at
      .checked_add(len)
      .filter(|&e| e <= bytes.len())
      .ok_or("graph dump ends inside the description")?;
  }
  if mode != 1 {
    return Err(format!("dump mode {mode} is not the full mode (1)"));
  }
  if d.dimension != dim || d.nb_point != count {
    return Err("description disagrees with the header".into());
  }
  let layers = c.u8()? as usize;
  if layers > HNSW_RS_LAYERS || nb_layer > HNSW_RS_LAYERS {
    return Err(format!("{layers} layers (at most {HNSW_RS_LAYERS})"));
  }
  // by_position[layer][rank] = index into `points`.
  let mut by_position: Vec<Vec<usize>> = Vec::with_capacity(layers);
  let mut points: Vec<DumpPoint> = Vec::with_capacity(count);
  for layer in 0..layers {
    if c.u32()? != HNSW_RS_LAYER_MAGIC {
      return Err(format!("bad magic at the start of layer {layer}"));
    }
    let in_layer = c.usize()?;
    if in_layer > count - points.len().min(count) {
      return Err(format!("layer {layer} announces {in_layer} points"));
    }
    let mut ranks = Vec::with_capacity(in_layer);
    for rank in 0..in_layer {
      if c.u32()? != HNSW_RS_POINT_MAGIC {
        return Err(format!("bad magic at point {rank} of layer {layer}"));
      }
      let label = c.usize()?;
      let level = c.u8()?;
      let at_rank = c.i32()?;
      if level as usize != layer || at_rank as i64 != rank as i64 {
        return Err(format!(
          "point {rank} of layer {layer} says it is at ({level}, {at_rank})"
        ));
      }
      let mut hood = Vec::with_capacity(nb_layer);
      for _ in 0..nb_layer {
        let n = c.usize()?;
        if n > 2 * 256 + 1 {
          return Err(format!("a point has {n} neighbours on one layer"));
        }
        let mut list = Vec::with_capacity(n);
        for _ in 0..n {
          c.usize()?; // label, resolved through the position below
          let nl = c.u8()?;
          let nr = c.i32()?;
          let dist = c.f32()?;
          if dist.is_nan() {
            return Err("a neighbour distance is NaN".into());
          }
          list.push(((nl, nr), dist));
        }
        hood.push(list);
      }
      ranks.push(points.len());
      points.push(DumpPoint { label, level, hood });
    }
    by_position.push(ranks);
  }
  let ep_label = c.usize()?;
  let ep_layer = c.u8()?;
  let ep_rank = c.i32()?;
  if c.at != bytes.len() {
    return Err(format!("{} unexpected bytes after the graph", bytes.len() - c.at));
  }
  if points.len() != count {
    return Err(format!(
      "graph dump holds {} points, expected {count}",
      points.len()
    ));
  }
  let resolve = |(l, r): (u8, i32)| -> std::result::Result<usize, String> {
    usize::try_from(r)
      .ok()
      .and_then(|r| by_position.get(l as usize)?.get(r).copied())
      .map(|i| points[i].label)
      .ok_or_else(|| format!("a neighbour at ({l}, {r}) does not exist"))
  };
  let mut seen = vec![false; count];
  let mut l0 = vec![Vec::new(); count];
  let mut upper = std::collections::HashMap::new();
  for p in &points {
    if p.label >= count || std::mem::replace(&mut seen[p.label], true) {
      return Err(format!("labels are not exactly 0..{count} (label {})", p.label));
    }
    let mut lists = Vec::with_capacity(p.level as usize + 1);
    for l in 0..=p.level as usize {
      let dumped = p.hood.get(l).map(Vec::as_slice).unwrap_or_default();
      // hnsw_rs's loader sorts each list by distance with `sort_unstable` over 8-byte
      // elements (`Arc`s); sorting 8-byte (distance, index) pairs with the same comparison
      // takes the same path through the sort, so ties end up in the same order.
      let mut order: Vec<(f32, u32)> = dumped.iter().enumerate().map(|(i, n)| (n.1, i as u32)).collect();
      order.sort_unstable_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
      let list = order
        .into_iter()
        .map(|(_, i)| resolve(dumped[i as usize].0).map(|x| x as u32))
        .collect::<std::result::Result<Vec<u32>, String>>()?;
      lists.push(list);
    }
    l0[p.label] = lists.remove(0);
    if p.level > 0 {
      upper.insert(p.label as u32, lists);
    }
  }
  let entry = match usize::try_from(ep_rank)
    .ok()
    .and_then(|r| by_position.get(ep_layer as usize)?.get(r))
  {
    Some(&i) if points[i].label == ep_label => Some((ep_label as u32, ep_layer)),
    _ if count == 0 => None,
    _ => {
      return Err(format!(
        "entry point {ep_label} at ({ep_layer}, {ep_rank}) does not exist"
      ))
    }
  };
  Ok(GraphParts { l0, upper, entry })
}

/// Reads the data dump (one record per point: magic, label, byte length, the values) into
/// a flat buffer, row = label. Stops at the first malformed record.
fn parse_data(data: &mut impl Read, dim: usize, count: usize) -> std::result::Result<Vec<f32>, String> {
  let io = |e: std::io::Error| format!("data dump ends early ({e})");
  let mut head = [0u8; 4 + std::mem::size_of::<usize>()];
  data.read_exact(&mut head).map_err(io)?;
  let mut flat = vec![0f32; count * dim];
  let mut filled = vec![false; count];
  let mut record = [0u8; 20];
  let mut row = vec![0u8; dim * 4];
  for _ in 0..count {
    data.read_exact(&mut record).map_err(io)?;
    let magic = u32::from_ne_bytes(record[..4].try_into().expect("4 bytes"));
    let label = u64::from_ne_bytes(record[4..12].try_into().expect("8 bytes"));
    let len = u64::from_ne_bytes(record[12..20].try_into().expect("8 bytes"));
    if magic != HNSW_RS_DATA_MAGIC || len != (dim * 4) as u64 {
      return Err(format!("data record has magic {magic:#x} and {len} bytes"));
    }
    let label = usize::try_from(label).ok().filter(|&l| l < count);
    let label = label.ok_or("a data record has a label out of range")?;
    if std::mem::replace(&mut filled[label], true) {
      return Err(format!("label {label} is stored twice"));
    }
    data.read_exact(&mut row).map_err(io)?;
    for (v, b) in flat[label * dim..(label + 1) * dim]
      .iter_mut()
      .zip(row.chunks_exact(4))
    {
      *v = f32::from_ne_bytes(b.try_into().expect("4 bytes"));
    }
  }
  Ok(flat)
}

/// What [`load_view`] reads: the graph, the vectors (row = label) and the parameters.
pub(crate) struct FlatIndex {
  pub(crate) parts: GraphParts,
  pub(crate) vectors: Vec<f32>,
  pub(crate) params: IndexParams,
  pub(crate) count: usize,
}

/// Reads an index file in place for searching: the same checks as [`load`] (header, sizes,
/// both checksums, dimension, count), without hnsw_rs and without writing anything.
pub(crate) fn load_view(
  path: &Path,
  expected_dim: usize,
  expected_count: Option<usize>,
) -> Result<FlatIndex> {
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
  let graph_len = usize::try_from(header.graph_bytes).map_err(|_| corrupt("graph dump too large".into()))?;
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
    return Err(corrupt("truncated inside the graph dump".into()));
  }
  if graph_hash != header.graph_sha256 {
    return Err(corrupt(
      "graph dump checksum mismatch (the file is damaged)".into(),
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
  let vectors = parse_data(&mut data, header.dim, header.count);
  let (data_hash, complete) = data.finish().map_err(|e| HnswError::io(path, e))?;
  if !complete {
    return Err(corrupt("truncated inside the data dump".into()));
  }
  if data_hash != header.data_sha256 {
    return Err(corrupt(
      "data dump checksum mismatch (the file is damaged)".into(),
    ));
  }
  let vectors = vectors.map_err(|e| corrupt(format!("data dump: {e}")))?;
  let parts =
    parse_graph(&graph_bytes, header.dim, header.count).map_err(|e| corrupt(format!("graph dump: {e}")))?;
  if let Some(want) = expected_count {
    if want != header.count {
      return Err(corrupt(format!(
        "holds {} vectors but {want} were expected (the id map disagrees)",
        header.count
      )));
    }
  }
  Ok(FlatIndex {
    parts,
    vectors,
    params: IndexParams {
      space: header.space,
      dim: header.dim,
      m: header.m,
      ef_construction: header.ef_construction,
    },
    count: header.count,
  })
}

/// Reads only the header (after the same checks as `load`, minus the checksums), e.g. to
/// decide whether a stored index matches the configuration before loading it.
pub fn read_file_header(path: &Path) -> Result<FileHeader> {
  let mut file = File::open(path).map_err(|e| HnswError::io(path, e))?;
  let file_len = file.metadata().map_err(|e| HnswError::io(path, e))?.len();
  let (header, body_start) = read_header(&mut file, path, file_len)?;
  check_header(&header, path, file_len, body_start)?;
  Ok(header)
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn library_version_matches_cargo_lock() {
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock")).unwrap();
    let at = lock.find("name = \"hnsw_rs\"").expect("hnsw_rs in Cargo.lock");
    let version_line = lock[at..].lines().nth(1).unwrap();
    assert_eq!(version_line, format!("version = \"{LIBRARY_VERSION}\""));
  }
}
