//! Atomic file replacement: readers see either the old file or the complete new one,
//! never a half-written file, even if the process dies mid-write.
//!
//! Recipe: write to a temp file in the destination folder (same filesystem, so the
//! rename is atomic), fsync it, rename it over the destination, then fsync the folder
//! so the rename itself survives a power cut. On any error (or panic) before the rename
//! the temp file is removed and the old file is untouched. Only a hard kill can leave a
//! `.<name>.*.tmp` file behind; it is never mistaken for data (different name).

#[cfg(unix)]
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::error::{Result, StoreError};

/// Writes `path` atomically: `write` fills a buffered temp file; if it returns `Ok`, the
/// temp file replaces `path`. The error of `write` is returned as is.
pub fn write_atomically(
  path: &Path,
  write: impl FnOnce(&mut (dyn Write + Send)) -> Result<()>,
) -> Result<()> {
  let dir = match path.parent() {
    Some(d) if !d.as_os_str().is_empty() => d,
    _ => Path::new("."),
  };
  let name = path
    .file_name()
    .ok_or_else(|| StoreError::invalid(path, "the path has no file name"))?
    .to_string_lossy()
    .into_owned();
  // `tmp` deletes itself when dropped, which covers every early return and unwinding.
  let tmp = tempfile::Builder::new()
    .prefix(&format!(".{name}."))
    .suffix(".tmp")
    .tempfile_in(dir)
    .map_err(|e| StoreError::io(dir, e))?;
  {
    let mut out = BufWriter::with_capacity(1 << 20, tmp.as_file());
    write(&mut out)?;
    out.flush().map_err(|e| StoreError::io(path, e))?;
  }
  tmp.as_file().sync_all().map_err(|e| StoreError::io(path, e))?;
  tmp.persist(path).map_err(|e| StoreError::io(path, e.error))?;
  sync_dir(dir)
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> Result<()> {
  File::open(dir)
    .and_then(|d| d.sync_all())
    .map_err(|e| StoreError::io(dir, e))
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> Result<()> {
  // Windows has no directory fsync; the rename (MoveFileEx) is already durable enough.
  Ok(())
}

#[cfg(test)]
mod tests {
  use super::*;

  fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
      .unwrap()
      .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
      .collect();
    v.sort();
    v
  }

  #[test]
  fn replaces_the_file_and_leaves_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.bin");
    std::fs::write(&p, b"old").unwrap();
    write_atomically(&p, |f| {
      f.write_all(b"new content").map_err(|e| StoreError::io(&p, e))
    })
    .unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"new content");
    assert_eq!(entries(dir.path()), vec!["t.bin"]);
  }

  #[test]
  fn an_error_midway_keeps_the_old_file_and_removes_the_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.bin");
    std::fs::write(&p, b"old").unwrap();
    let r = write_atomically(&p, |f| {
      f.write_all(&vec![7u8; 3 << 20]).unwrap(); // more than the buffer: bytes reach the temp file
      Err(StoreError::invalid(&p, "boom"))
    });
    assert!(matches!(r, Err(StoreError::InvalidTable { .. })));
    assert_eq!(std::fs::read(&p).unwrap(), b"old");
    assert_eq!(entries(dir.path()), vec!["t.bin"]);
  }

  #[test]
  fn a_panic_midway_keeps_the_old_file_and_removes_the_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.bin");
    std::fs::write(&p, b"old").unwrap();
    let r = std::panic::catch_unwind(|| {
      let _ = write_atomically(&p, |f| {
        f.write_all(b"partial").unwrap();
        panic!("simulated crash");
      });
    });
    assert!(r.is_err());
    assert_eq!(std::fs::read(&p).unwrap(), b"old");
    assert_eq!(entries(dir.path()), vec!["t.bin"]);
  }

  #[test]
  fn a_missing_folder_is_not_found_naming_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("nope").join("t.bin");
    let e = write_atomically(&p, |_| Ok(())).unwrap_err();
    assert!(matches!(e, StoreError::NotFound { .. }), "{e:?}");
    assert!(e.to_string().contains("nope"), "{e}");
  }
}
