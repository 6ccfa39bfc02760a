//! Bindings for crates/noderag_hnsw: the `HnswIndex` class and `exactSearch`.
//!
//! Vectors cross as one flat `Float32Array` (rows × dim); results as parallel typed
//! arrays. Sync or async by cost: searches, `add` of a few vectors, `retire`,
//! `layer0Edges` and `readHeader` are sync; `build`, `addBatch`, `save` and `load` work
//! on the whole index and run on the libuv pool (`AsyncTask`).
//!
//! The index lives behind an `RwLock<Option<_>>` shared with running tasks: `None` once
//! closed. A sync call never waits for a running `addBatch` (that would freeze the event
//! loop): it fails with NATIVE_INVALID_ARGUMENT "busy" instead.

use std::path::PathBuf;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use noderag_hnsw::{
  exact_search as core_exact_search, read_file_header, ErrorKind, HnswError, HnswIndex as CoreIndex,
  IndexParams, SearchResult, Space,
};

use crate::error::{codes, err, guard};

fn hnsw_error(e: HnswError) -> napi::Error {
  let code = match e.kind() {
    ErrorKind::InvalidArgument => codes::INVALID_ARGUMENT,
    ErrorKind::Io => codes::IO,
    ErrorKind::Corrupt => codes::CORRUPT_FILE,
    ErrorKind::DimensionMismatch => codes::DIMENSION_MISMATCH,
    ErrorKind::Internal => codes::INTERNAL,
  };
  err(code, e)
}

fn parse_space(space: &str) -> napi::Result<Space> {
  Space::parse(space).ok_or_else(|| {
    err(
      codes::INVALID_ARGUMENT,
      format!("space must be \"l2\" or \"cosine\", got {space:?}"),
    )
  })
}

fn params(space: &str, dim: u32, m: u32, ef_construction: u32) -> napi::Result<IndexParams> {
  Ok(IndexParams {
    space: parse_space(space)?,
    dim: dim as usize,
    m: m as usize,
    ef_construction: ef_construction as usize,
  })
}

/// Top-k hits, best first: `labels[i]` is at `distances[i]` (squared L2, or 1 − cos).
#[napi(object)]
pub struct NativeSearchResult {
  pub labels: Uint32Array,
  pub distances: Float32Array,
}

impl From<SearchResult> for NativeSearchResult {
  fn from(r: SearchResult) -> Self {
    NativeSearchResult {
      labels: Uint32Array::new(r.labels),
      distances: Float32Array::new(r.distances),
    }
  }
}

/// Directed layer-0 links: `src[i] → dst[i]`, sorted by `src`.
#[napi(object)]
pub struct NativeEdges {
  pub src: Uint32Array,
  pub dst: Uint32Array,
}

/// The header of an index file, read without loading the index.
#[napi(object)]
pub struct NativeIndexHeader {
  #[napi(ts_type = "'l2' | 'cosine'")]
  pub space: String,
  pub dim: u32,
  pub m: u32,
  pub ef_construction: u32,
  pub count: u32,
  pub library: String,
  pub library_version: String,
}

type Shared = Arc<RwLock<Option<CoreIndex>>>;

const CLOSED_MSG: &str = "the vector index is closed";
const BUSY_MSG: &str = "the vector index is busy (an addBatch or save is running); await it first";
const POISONED_MSG: &str = "the vector index is unusable after an internal error; close it and load it again";

fn read(shared: &Shared) -> napi::Result<RwLockReadGuard<'_, Option<CoreIndex>>> {
  match shared.try_read() {
    Ok(g) => Ok(g),
    Err(TryLockError::WouldBlock) => Err(err(codes::INVALID_ARGUMENT, BUSY_MSG)),
    Err(TryLockError::Poisoned(_)) => Err(err(codes::INTERNAL, POISONED_MSG)),
  }
}

fn write(shared: &Shared) -> napi::Result<RwLockWriteGuard<'_, Option<CoreIndex>>> {
  match shared.try_write() {
    Ok(g) => Ok(g),
    Err(TryLockError::WouldBlock) => Err(err(codes::INVALID_ARGUMENT, BUSY_MSG)),
    Err(TryLockError::Poisoned(_)) => Err(err(codes::INTERNAL, POISONED_MSG)),
  }
}

fn open(g: &Option<CoreIndex>) -> napi::Result<&CoreIndex> {
  g.as_ref().ok_or_else(|| err(codes::CLOSED, CLOSED_MSG))
}

/// An HNSW vector index (noderag_hnsw: parallel, deterministic construction). Labels are
/// 0..len in insertion order.
#[napi]
pub struct HnswIndex {
  inner: Shared,
}

impl HnswIndex {
  fn wrap(index: CoreIndex) -> HnswIndex {
    HnswIndex {
      inner: Arc::new(RwLock::new(Some(index))),
    }
  }

  fn with<T>(&self, f: impl FnOnce(&CoreIndex) -> napi::Result<T>) -> napi::Result<T> {
    {
      let g = read(&self.inner)?;
      let index = open(&g)?;
      if !index.view_is_stale() {
        return f(index);
      }
    }
    // Vectors were added with `deferView`: remake the search view first (on this thread;
    // `addBatch` with an empty array does it off the main thread).
    let mut g = write(&self.inner)?;
    let index = g.as_mut().ok_or_else(|| err(codes::CLOSED, CLOSED_MSG))?;
    index.refresh_view().map_err(hnsw_error)?;
    f(index)
  }
}

#[napi]
#[allow(clippy::len_without_is_empty)] // `len` is a JS getter; JS has no is_empty convention
impl HnswIndex {
  /// An empty index. Sync. `space` is "l2" (squared Euclidean) or "cosine" (1 − cos);
  /// `m` in 2..=256 (layer 0 keeps 2·m links).
  #[napi(factory)]
  pub fn create(space: String, dim: u32, m: u32, ef_construction: u32) -> napi::Result<HnswIndex> {
    guard(|| {
      Ok(HnswIndex::wrap(
        CoreIndex::new(params(&space, dim, m, ef_construction)?).map_err(hnsw_error)?,
      ))
    })
  }

  /// Builds an index from `vectors` (rows × dim), labels 0..n. Async (libuv pool).
  /// The vectors are copied before the call returns.
  #[napi(ts_return_type = "Promise<HnswIndex>")]
  pub fn build(
    space: String,
    dim: u32,
    m: u32,
    ef_construction: u32,
    vectors: Float32Array,
  ) -> napi::Result<AsyncTask<BuildTask>> {
    guard(|| {
      Ok(AsyncTask::new(BuildTask {
        params: params(&space, dim, m, ef_construction)?,
        vectors: vectors.to_vec(),
      }))
    })
  }

  /// Loads an index file written by `save`. Async. The file is fully validated before
  /// use; `expectedCount` (when given) must equal the number of stored vectors.
  /// Without `forUpdate` the file is read in place for searching (nothing is written, no
  /// free space needed; `add` and `save` then fail); with it, vectors can be added.
  /// Errors: NATIVE_IO (missing/unreadable), NATIVE_CORRUPT_FILE, NATIVE_DIMENSION_MISMATCH.
  #[napi(ts_return_type = "Promise<HnswIndex>")]
  pub fn load(
    path: String,
    expected_dim: u32,
    expected_count: Option<u32>,
    for_update: Option<bool>,
  ) -> napi::Result<AsyncTask<LoadTask>> {
    guard(|| {
      Ok(AsyncTask::new(LoadTask {
        path: PathBuf::from(path),
        expected_dim,
        expected_count,
        for_update: for_update.unwrap_or(false),
      }))
    })
  }

  /// Reads and checks the header of an index file without loading it. Sync (reads a few
  /// hundred bytes); checksums are verified only by `load`.
  #[napi]
  pub fn read_header(path: String) -> napi::Result<NativeIndexHeader> {
    guard(|| {
      let h = read_file_header(std::path::Path::new(&path)).map_err(hnsw_error)?;
      let too_big = |what: &str| {
        err(
          codes::CORRUPT_FILE,
          format!("{path}: {what} does not fit in 32 bits"),
        )
      };
      Ok(NativeIndexHeader {
        space: h.space.name().to_string(),
        dim: u32::try_from(h.dim).map_err(|_| too_big("dim"))?,
        m: u32::try_from(h.m).map_err(|_| too_big("m"))?,
        ef_construction: u32::try_from(h.ef_construction).map_err(|_| too_big("ef_construction"))?,
        count: u32::try_from(h.count).map_err(|_| too_big("count"))?,
        library: h.library,
        library_version: h.library_version,
      })
    })
  }

  /// Appends vectors (rows × dim) and returns the first new label. Sync: for a few
  /// vectors; use `addBatch` for many.
  #[napi]
  pub fn add(&self, vectors: Float32Array) -> napi::Result<u32> {
    guard(|| {
      let mut g = write(&self.inner)?;
      let index = g.as_mut().ok_or_else(|| err(codes::CLOSED, CLOSED_MSG))?;
      index.add(&vectors).map_err(hnsw_error)
    })
  }

  /// Appends vectors (rows × dim) off the main thread; resolves to the first new label.
  /// The vectors are copied before the call returns. Other calls fail as busy until it settles.
  /// With `deferView` the search view is not remade (for an insertion split into many
  /// batches); the next call without it (an empty array will do) or the next search does it.
  #[napi(ts_return_type = "Promise<number>")]
  pub fn add_batch(
    &self,
    vectors: Float32Array,
    defer_view: Option<bool>,
  ) -> napi::Result<AsyncTask<AddTask>> {
    guard(|| {
      open(&*read(&self.inner)?)?;
      Ok(AsyncTask::new(AddTask {
        inner: Arc::clone(&self.inner),
        vectors: vectors.to_vec(),
        defer_view: defer_view.unwrap_or(false),
      }))
    })
  }

  /// Links the vectors of an incomplete batch (vectors added with `deferView` wait for a full
  /// batch of 256), off the main thread, without remaking the search view: what `save` does
  /// first. The HNSW stage's overlapped insertion calls it where the stage would save a
  /// checkpoint, so its graph is the stage's own.
  #[napi(ts_return_type = "Promise<void>")]
  pub fn link_pending(&self) -> napi::Result<AsyncTask<LinkTask>> {
    guard(|| {
      open(&*read(&self.inner)?)?;
      Ok(AsyncTask::new(LinkTask {
        inner: Arc::clone(&self.inner),
      }))
    })
  }

  /// The `k` nearest live vectors to `query`, sorted by (distance, label). Sync.
  /// `k` is clamped to the number of live vectors; the beam is max(efSearch, k).
  #[napi]
  pub fn search(&self, query: Float32Array, k: u32, ef_search: u32) -> napi::Result<NativeSearchResult> {
    guard(|| {
      self.with(|i| {
        Ok(
          i.search(&query, k as usize, ef_search as usize)
            .map_err(hnsw_error)?
            .into(),
        )
      })
    })
  }

  /// Exact search over the stored vectors (same result shape as `search`). Sync.
  #[napi]
  pub fn search_exact(&self, query: Float32Array, k: u32) -> napi::Result<NativeSearchResult> {
    guard(|| self.with(|i| Ok(i.search_exact(&query, k as usize).map_err(hnsw_error)?.into())))
  }

  /// Marks labels as retired: searches walk through them but never return them.
  /// Not saved in the index file (the id map is the source of truth). Sync.
  #[napi]
  pub fn retire(&self, labels: Uint32Array) -> napi::Result<()> {
    guard(|| {
      let mut g = write(&self.inner)?;
      let index = g.as_mut().ok_or_else(|| err(codes::CLOSED, CLOSED_MSG))?;
      index.retire(&labels).map_err(hnsw_error)
    })
  }

  /// Layer-0 neighbour lists as (src, dst) label pairs. Sync (a copy of the links). Read
  /// from the graph when no vectors wait to be linked (after `save`), so a build that saves
  /// and then exports never makes the search view; otherwise they are linked first.
  #[napi]
  pub fn layer0_edges(&self) -> napi::Result<NativeEdges> {
    guard(|| {
      let edges = |i: &CoreIndex| {
        let (src, dst) = i.layer0_edges();
        Ok(NativeEdges {
          src: Uint32Array::new(src),
          dst: Uint32Array::new(dst),
        })
      };
      {
        let g = read(&self.inner)?;
        let index = open(&g)?;
        if !index.has_pending() {
          return edges(index);
        }
      }
      self.with(edges)
    })
  }

  /// Writes the index to `path` atomically (temp file in the same folder, fsync, rename).
  /// Async. Searches may run meanwhile; `add` fails as busy until it settles.
  #[napi(ts_return_type = "Promise<void>")]
  pub fn save(&self, path: String) -> napi::Result<AsyncTask<SaveTask>> {
    guard(|| {
      open(&*read(&self.inner)?)?;
      Ok(AsyncTask::new(SaveTask {
        inner: Arc::clone(&self.inner),
        path: PathBuf::from(path),
      }))
    })
  }

  /// Number of stored vectors, retired ones included.
  #[napi(getter)]
  pub fn len(&self) -> napi::Result<u32> {
    guard(|| self.with(|i| Ok(i.len() as u32)))
  }

  /// Number of retired labels.
  #[napi(getter)]
  pub fn retired_count(&self) -> napi::Result<u32> {
    guard(|| self.with(|i| Ok(i.retired_count() as u32)))
  }

  #[napi(getter)]
  pub fn dim(&self) -> napi::Result<u32> {
    guard(|| self.with(|i| Ok(i.dim() as u32)))
  }

  #[napi(getter, ts_return_type = "'l2' | 'cosine'")]
  pub fn space(&self) -> napi::Result<String> {
    guard(|| self.with(|i| Ok(i.params().space.name().to_string())))
  }

  #[napi(getter)]
  pub fn m(&self) -> napi::Result<u32> {
    guard(|| self.with(|i| Ok(i.params().m as u32)))
  }

  #[napi(getter)]
  pub fn ef_construction(&self) -> napi::Result<u32> {
    guard(|| self.with(|i| Ok(i.params().ef_construction as u32)))
  }

  /// How many threads link vectors in `add`/`addBatch` (default: the available
  /// parallelism). The graph and the saved bytes are the same for any value.
  #[napi]
  pub fn set_build_threads(&self, threads: u32) -> napi::Result<()> {
    guard(|| {
      let mut g = write(&self.inner)?;
      let index = g.as_mut().ok_or_else(|| err(codes::CLOSED, CLOSED_MSG))?;
      index.set_build_threads(threads as usize);
      Ok(())
    })
  }

  /// Frees the index. Idempotent; any later use fails with NATIVE_CLOSED.
  #[napi]
  pub fn close(&self) -> napi::Result<()> {
    guard(|| {
      let mut g = write(&self.inner)?;
      g.take();
      Ok(())
    })
  }
}

pub struct BuildTask {
  params: IndexParams,
  vectors: Vec<f32>,
}

impl Task for BuildTask {
  type Output = CoreIndex;
  type JsValue = HnswIndex;

  fn compute(&mut self) -> napi::Result<CoreIndex> {
    guard(|| CoreIndex::build(self.params, &std::mem::take(&mut self.vectors)).map_err(hnsw_error))
  }

  fn resolve(&mut self, _env: Env, index: CoreIndex) -> napi::Result<HnswIndex> {
    Ok(HnswIndex::wrap(index))
  }
}

pub struct LoadTask {
  path: PathBuf,
  expected_dim: u32,
  expected_count: Option<u32>,
  for_update: bool,
}

impl Task for LoadTask {
  type Output = CoreIndex;
  type JsValue = HnswIndex;

  fn compute(&mut self) -> napi::Result<CoreIndex> {
    guard(|| {
      let load = if self.for_update {
        CoreIndex::load
      } else {
        CoreIndex::load_for_search
      };
      load(
        &self.path,
        self.expected_dim as usize,
        self.expected_count.map(|c| c as usize),
      )
      .map_err(hnsw_error)
    })
  }

  fn resolve(&mut self, _env: Env, index: CoreIndex) -> napi::Result<HnswIndex> {
    Ok(HnswIndex::wrap(index))
  }
}

pub struct AddTask {
  inner: Shared,
  vectors: Vec<f32>,
  defer_view: bool,
}

impl Task for AddTask {
  type Output = u32;
  type JsValue = u32;

  fn compute(&mut self) -> napi::Result<u32> {
    guard(|| {
      // Off the main thread, waiting for the lock is fine.
      let mut g = self
        .inner
        .write()
        .map_err(|_| err(codes::INTERNAL, POISONED_MSG))?;
      let index = g.as_mut().ok_or_else(|| err(codes::CLOSED, CLOSED_MSG))?;
      let first = index
        .add_deferred(&std::mem::take(&mut self.vectors))
        .map_err(hnsw_error)?;
      if !self.defer_view {
        index.refresh_view().map_err(hnsw_error)?;
      }
      Ok(first)
    })
  }

  fn resolve(&mut self, _env: Env, first: u32) -> napi::Result<u32> {
    Ok(first)
  }
}

/// Links the vectors that wait in an incomplete batch, under a short write lock.
fn link_pending(inner: &Shared) -> napi::Result<()> {
  let mut g = inner.write().map_err(|_| err(codes::INTERNAL, POISONED_MSG))?;
  let index = g.as_mut().ok_or_else(|| err(codes::CLOSED, CLOSED_MSG))?;
  if index.has_pending() {
    index.link_pending();
  }
  Ok(())
}

pub struct LinkTask {
  inner: Shared,
}

impl Task for LinkTask {
  type Output = ();
  type JsValue = ();

  fn compute(&mut self) -> napi::Result<()> {
    guard(|| link_pending(&self.inner))
  }

  fn resolve(&mut self, _env: Env, _output: ()) -> napi::Result<()> {
    Ok(())
  }
}

pub struct SaveTask {
  inner: Shared,
  path: PathBuf,
}

impl Task for SaveTask {
  type Output = ();
  type JsValue = ();

  fn compute(&mut self) -> napi::Result<()> {
    guard(|| {
      // Vectors of an incomplete batch are linked first (a short write lock), then the
      // file is written under a read lock, so searches may run meanwhile.
      link_pending(&self.inner)?;
      let g = self
        .inner
        .read()
        .map_err(|_| err(codes::INTERNAL, POISONED_MSG))?;
      open(&g)?.save(&self.path).map_err(hnsw_error)
    })
  }

  fn resolve(&mut self, _env: Env, _output: ()) -> napi::Result<()> {
    Ok(())
  }
}

/// Exact (brute-force) search of `query` over `vectors` (rows × dim; row i has label i),
/// sorted by (distance, label); `k` is clamped to the number of rows. Sync: O(rows × dim).
/// For "cosine" neither side needs to be normalised.
#[napi]
pub fn exact_search(
  vectors: Float32Array,
  dim: u32,
  #[napi(ts_arg_type = "'l2' | 'cosine'")] space: String,
  query: Float32Array,
  k: u32,
) -> napi::Result<NativeSearchResult> {
  guard(|| {
    let space = parse_space(&space)?;
    Ok(
      core_exact_search(&vectors, dim as usize, space, &query, k as usize)
        .map_err(hnsw_error)?
        .into(),
    )
  })
}

/// "release" or "debug": how the addon was compiled (benchmarks refuse a debug build,
/// whose timings mean nothing).
#[napi]
pub fn native_build_profile() -> String {
  if cfg!(debug_assertions) {
    "debug"
  } else {
    "release"
  }
  .to_string()
}
