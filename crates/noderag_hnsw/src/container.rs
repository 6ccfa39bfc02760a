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
//! Only then does hnsw_rs see the bytes, copied to a private temporary folder because its
//! loader reads two files by name.

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

/// A private scratch folder next to `path` (same file system, so no surprise about space
/// in /tmp), or in the system temp folder when the index folder is read-only.
fn scratch_dir(path: &Path) -> Result<tempfile::TempDir> {
  let parent = parent_of(path);
  tempfile::Builder::new()
    .prefix(".hnsw-scratch-")
    .tempdir_in(&parent)
    .or_else(|_| tempfile::Builder::new().prefix("noderag-hnsw-").tempdir())
    .map_err(|e| HnswError::io(parent, e))
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
    .prefix(".HNSW.bin.tmp-")
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
