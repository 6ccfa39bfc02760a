//! Bindings for crates/noderag_graph.
//!
//! - `SearchGraph`: the loaded search graph (§6.1). `build` is async (libuv pool); the
//!   propagation (`topNodes`, `scores`) is sync: it only borrows the immutable graph (an
//!   `Arc`), so many queries can run without copying it, and a typical 2-step walk touches
//!   only the seeds' neighbourhood. `close()` drops the graph once running calls finish.
//! - whole-graph algorithms as async functions (`graphPagerank`, `graphConnect`,
//!   `graphShortestPath`, `graphCoreNumbers`, `graphBetweenness`, `graphLeiden`, `kmeans`):
//!   the input arrays are copied before the call returns, the work runs off the main thread.
//! - `PhraseMatcher`: the exact-phrase index of §6.3 (async build, sync `find`).
//!
//! Graphs cross as `nodeCount` plus parallel typed arrays `src`, `dst` (`Uint32Array`, node
//! indexes) and `weight` (`Float64Array`). Errors: NATIVE_INVALID_ARGUMENT (bad ids,
//! lengths, weights, parameters), NATIVE_CLOSED (use after close).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use noderag_graph::csr::{EdgeList, Graph};
use noderag_graph::search::{
  PropagationMode, PropagationParams, SearchGraph as CoreSearchGraph, Strategy, WALK_TOLERANCE,
};
use noderag_graph::{betweenness, kcore, kmeans as core_kmeans, leiden, pagerank, paths, phrase, GraphError};

use crate::convert::{Handle, NativeError};
use crate::error::{codes, err, guard};
use crate::task::Job;

/// Edge arrays copied out of JS (JS may reuse its buffers while the task runs).
struct EdgesInput {
  node_count: usize,
  src: Vec<u32>,
  dst: Vec<u32>,
  weight: Option<Vec<f64>>,
}

impl EdgesInput {
  fn new(node_count: u32, src: &[u32], dst: &[u32], weight: Option<&[f64]>) -> Self {
    EdgesInput {
      node_count: node_count as usize,
      src: src.to_vec(),
      dst: dst.to_vec(),
      weight: weight.map(<[f64]>::to_vec),
    }
  }

  fn graph(&self) -> std::result::Result<Graph, GraphError> {
    match &self.weight {
      Some(w) => Graph::from_edges(self.node_count, &self.src, &self.dst, w),
      None => Graph::from_unweighted(self.node_count, &self.src, &self.dst),
    }
  }
}

// ---------------------------------------------------------------------------------------
// Search graph
// ---------------------------------------------------------------------------------------

/// Propagation parameters (docs/method.md §6.4).
#[napi(object)]
pub struct PropagationOptions {
  /// α = `ppr_alpha`, within [0, 1].
  pub alpha: f64,
  /// `ppr_max_iter`: at most this many steps (the hop radius of eligibility).
  pub max_iter: u32,
  /// "walk" (default: lazy walk, p ← α·T·p + (1 − α)·p) or "restart" (p₀ instead of p).
  #[napi(ts_type = "'walk' | 'restart'")]
  pub mode: Option<String>,
  /// Stop when ‖Δp‖₂ falls below this (default 1e-5).
  pub tolerance: Option<f64>,
  /// Force the dense full-graph step (benchmarks; the result is the same).
  pub dense: Option<bool>,
}

fn to_params(o: &PropagationOptions) -> napi::Result<PropagationParams> {
  let mode = match o.mode.as_deref() {
    None | Some("walk") => PropagationMode::Walk,
    Some("restart") => PropagationMode::Restart,
    Some(other) => {
      return Err(err(
        codes::INVALID_ARGUMENT,
        format!("mode must be \"walk\" or \"restart\", got {other:?}"),
      ))
    }
  };
  Ok(PropagationParams {
    alpha: o.alpha,
    max_iter: o.max_iter,
    mode,
    tolerance: o.tolerance.unwrap_or(WALK_TOLERANCE),
    strategy: if o.dense.unwrap_or(false) {
      Strategy::Dense
    } else {
      Strategy::Auto
    },
  })
}

/// Eligible nodes in ranking order (score desc, index asc), at most `quotas[type]` per type:
/// `ids[i]` has `scores[i]` and `types[i]`.
#[napi(object)]
pub struct NativeTopNodes {
  pub ids: Uint32Array,
  pub scores: Float64Array,
  pub types: Uint8Array,
  /// Steps performed (the hop radius of eligibility).
  pub steps: u32,
  /// Eligible nodes of all types (before quotas).
  pub eligible: u32,
  /// Lower bound of the bytes the steps moved (for the bandwidth bound of the benchmark).
  pub bytes_touched: f64,
  /// The same traffic counted by 64-byte line for random accesses (a realistic bound).
  pub line_bytes: f64,
  pub sparse_steps: u32,
  pub dense_steps: u32,
}

/// Full score vector (length nodeCount) and eligibility (1/0), for diagnostics and tests.
#[napi(object)]
pub struct NativeScores {
  pub scores: Float64Array,
  pub eligible: Uint8Array,
  pub steps: u32,
}

const GRAPH_CLOSED: &str = "the search graph is closed";

/// The search graph of docs/method.md §6.1: base edges + similarity edges (+1 on an existing
/// edge, else 1), optional `unbalance_adjust`, the implicit transition matrix.
#[napi]
pub struct SearchGraph {
  inner: Handle<CoreSearchGraph>,
}

#[napi]
impl SearchGraph {
  /// Builds the search graph. Async. `nodeTypes[i]` is node i's type code (its length is the
  /// node count); base edges `src`/`dst`/`weight` (weights > 0, duplicates summed);
  /// similarity pairs `simSrc`/`simDst` (each pair adds 1). The arrays are copied first.
  #[napi(ts_return_type = "Promise<SearchGraph>")]
  pub fn build(
    node_types: Uint8Array,
    src: Uint32Array,
    dst: Uint32Array,
    weight: Float64Array,
    sim_src: Uint32Array,
    sim_dst: Uint32Array,
    unbalance_adjust: bool,
  ) -> napi::Result<AsyncTask<Job<CoreSearchGraph, SearchGraph>>> {
    guard(|| {
      let types = node_types.to_vec();
      let (src, dst, weight) = (src.to_vec(), dst.to_vec(), weight.to_vec());
      let (sim_src, sim_dst) = (sim_src.to_vec(), sim_dst.to_vec());
      Ok(Job::task(
        move || {
          CoreSearchGraph::build(
            types,
            EdgeList::weighted(&src, &dst, &weight),
            &sim_src,
            &sim_dst,
            unbalance_adjust,
          )
        },
        |g| SearchGraph {
          inner: Handle::new(g, GRAPH_CLOSED),
        },
      ))
    })
  }

  /// The propagation of §6.4 from the seeds (weights normalised to sum 1; zero weights
  /// ignored; no seed → empty result), then the best eligible nodes per type. Sync.
  #[napi]
  pub fn top_nodes(
    &self,
    seed_ids: Uint32Array,
    seed_weights: Float64Array,
    quotas: Uint32Array,
    options: PropagationOptions,
  ) -> napi::Result<NativeTopNodes> {
    guard(|| {
      let g = self.inner.get()?;
      let params = to_params(&options)?;
      let r = g
        .top_nodes(&seed_ids, &seed_weights, &params, &quotas)
        .map_err(GraphError::into_napi)?;
      Ok(NativeTopNodes {
        bytes_touched: r.work.bytes_touched as f64,
        line_bytes: r.work.line_bytes as f64,
        sparse_steps: r.work.sparse_steps,
        dense_steps: r.work.dense_steps,
        ids: Uint32Array::new(r.ids),
        scores: Float64Array::new(r.scores),
        types: Uint8Array::new(r.types),
        steps: r.steps,
        eligible: r.eligible,
      })
    })
  }

  /// The full score vector of the same propagation (O(nodeCount) output). Sync.
  #[napi]
  pub fn scores(
    &self,
    seed_ids: Uint32Array,
    seed_weights: Float64Array,
    options: PropagationOptions,
  ) -> napi::Result<NativeScores> {
    guard(|| {
      let g = self.inner.get()?;
      let r = g
        .scores(&seed_ids, &seed_weights, &to_params(&options)?)
        .map_err(GraphError::into_napi)?;
      Ok(NativeScores {
        scores: Float64Array::new(r.scores),
        eligible: Uint8Array::new(r.eligible.into_iter().map(u8::from).collect()),
        steps: r.steps,
      })
    })
  }

  #[napi(getter)]
  pub fn node_count(&self) -> napi::Result<u32> {
    guard(|| Ok(self.inner.get()?.node_count() as u32))
  }

  /// Distinct undirected edges (self-loops included).
  #[napi(getter)]
  pub fn edge_count(&self) -> napi::Result<f64> {
    guard(|| Ok(self.inner.get()?.edge_count() as f64))
  }

  /// Bytes of the CSR arrays.
  #[napi(getter)]
  pub fn memory_bytes(&self) -> napi::Result<f64> {
    guard(|| Ok(self.inner.get()?.heap_bytes() as f64))
  }

  /// Weight of edge {u, v} after similarity edges and adjustment, or null.
  #[napi]
  pub fn edge_weight(&self, u: u32, v: u32) -> napi::Result<Option<f64>> {
    guard(|| {
      let g = self.inner.get()?;
      let n = g.node_count() as u32;
      if u >= n || v >= n {
        return Err(err(
          codes::INVALID_ARGUMENT,
          format!("node {} is out of range for {n} nodes", u.max(v)),
        ));
      }
      Ok(g.edge_weight(u, v))
    })
  }

  /// Frees the graph (running queries keep it alive until they return). Idempotent.
  #[napi]
  pub fn close(&self) -> napi::Result<()> {
    guard(|| self.inner.close())
  }

  #[napi(getter)]
  pub fn closed(&self) -> bool {
    self.inner.is_closed()
  }
}

// ---------------------------------------------------------------------------------------
// Whole-graph algorithms
// ---------------------------------------------------------------------------------------

#[napi(object)]
pub struct NativePageRank {
  pub scores: Float64Array,
  pub iterations: u32,
  pub converged: bool,
}

/// Global weighted PageRank (§7.5: damping 0.85, uniform teleport and dangling mass,
/// L1 change < 1e-9 or 100 iterations). Async.
#[napi(ts_return_type = "Promise<NativePageRank>")]
pub fn graph_pagerank(
  node_count: u32,
  src: Uint32Array,
  dst: Uint32Array,
  weight: Float64Array,
) -> napi::Result<AsyncTask<Job<pagerank::PageRank, NativePageRank>>> {
  guard(|| {
    let input = EdgesInput::new(node_count, &src, &dst, Some(&weight));
    Ok(Job::task(
      move || input.graph().map(|g| pagerank::pagerank(&g)),
      |r| NativePageRank {
        scores: Float64Array::new(r.scores),
        iterations: r.iterations,
        converged: r.converged,
      },
    ))
  })
}

#[napi(object)]
pub struct NativePath {
  /// From a source to a target, both included.
  pub nodes: Uint32Array,
  /// Σ 1/weight along the path.
  pub length: f64,
}

/// Shortest path (edge length 1/weight) from any of `sources` to any of `targets` by
/// bidirectional Dijkstra; null when none exists. Async.
#[napi(ts_return_type = "Promise<NativePath | null>")]
pub fn graph_shortest_path(
  node_count: u32,
  src: Uint32Array,
  dst: Uint32Array,
  weight: Float64Array,
  sources: Uint32Array,
  targets: Uint32Array,
) -> napi::Result<AsyncTask<Job<Option<paths::Path>, Option<NativePath>>>> {
  guard(|| {
    let input = EdgesInput::new(node_count, &src, &dst, Some(&weight));
    let (sources, targets) = (sources.to_vec(), targets.to_vec());
    Ok(Job::task(
      move || paths::shortest_path(&input.graph()?, &sources, &targets),
      |p| {
        p.map(|p| NativePath {
          nodes: Uint32Array::new(p.nodes),
          length: p.length,
        })
      },
    ))
  })
}

#[napi(object)]
pub struct NativeConnection {
  /// Linking nodes outside the selection, in the order they were added.
  pub added: Uint32Array,
  /// Best node of each component that could not be joined (disconnected graph).
  pub unreachable: Uint32Array,
  /// Components of the subgraph induced by the selection before joining.
  pub component_count: u32,
}

/// §7.5 connect: joins the components of the selection (rank order, best first) to the
/// component of the best node, one set-to-set bidirectional Dijkstra per component. Async.
#[napi(ts_return_type = "Promise<NativeConnection>")]
pub fn graph_connect(
  node_count: u32,
  src: Uint32Array,
  dst: Uint32Array,
  weight: Float64Array,
  selection: Uint32Array,
) -> napi::Result<AsyncTask<Job<paths::Connection, NativeConnection>>> {
  guard(|| {
    let input = EdgesInput::new(node_count, &src, &dst, Some(&weight));
    let selection = selection.to_vec();
    Ok(Job::task(
      move || paths::connect(&input.graph()?, &selection),
      |c| NativeConnection {
        added: Uint32Array::new(c.added),
        unreachable: Uint32Array::new(c.unreachable),
        component_count: c.component_count,
      },
    ))
  })
}

/// k-core numbers by degree peeling (weights and self-loops ignored). Async.
#[napi(ts_return_type = "Promise<Uint32Array>")]
pub fn graph_core_numbers(
  node_count: u32,
  src: Uint32Array,
  dst: Uint32Array,
) -> napi::Result<AsyncTask<Job<Vec<u32>, Uint32Array>>> {
  guard(|| {
    let input = EdgesInput::new(node_count, &src, &dst, None);
    Ok(Job::task(
      move || input.graph().map(|g| kcore::core_numbers(&g)),
      Uint32Array::new,
    ))
  })
}

/// Betweenness (Brandes, unweighted, undirected; exact for ≤ 5,000 nodes, else 500
/// pivots: with `ids` (one per node) those of smallest hash seeded with `seed`, default 42,
/// whatever the node order; without, from a seeded shuffle of the node indexes). Async.
#[napi(ts_return_type = "Promise<Float64Array>")]
pub fn graph_betweenness(
  node_count: u32,
  src: Uint32Array,
  dst: Uint32Array,
  seed: Option<u32>,
  ids: Option<Vec<String>>,
) -> napi::Result<AsyncTask<Job<Vec<f64>, Float64Array>>> {
  guard(|| {
    if let Some(ids) = &ids {
      if ids.len() != node_count as usize {
        return Err(err(
          codes::INVALID_ARGUMENT,
          format!(
            "graphBetweenness: ids has {} entries, expected one per node ({node_count})",
            ids.len()
          ),
        ));
      }
    }
    let input = EdgesInput::new(node_count, &src, &dst, None);
    let seed = seed.map_or(noderag_graph::SEED, u64::from);
    Ok(Job::task(
      move || {
        input.graph().map(|g| match &ids {
          Some(ids) => betweenness::betweenness_by_id(&g, ids, seed),
          None => betweenness::betweenness(&g, seed),
        })
      },
      Float64Array::new,
    ))
  })
}

#[napi(object)]
pub struct LeidenOptions {
  /// Use `weight` (default false: docs/method.md §3.7 ignores weights).
  pub weighted: Option<bool>,
  /// Default 1.
  pub resolution: Option<f64>,
  /// Default 10.
  pub max_iterations: Option<u32>,
  /// Default 42.
  pub seed: Option<u32>,
}

#[napi(object)]
pub struct NativeCommunities {
  /// Community of each node, numbered by smallest member.
  pub membership: Uint32Array,
  pub count: u32,
  pub modularity: f64,
  pub iterations: u32,
}

/// Leiden communities (modularity, nodes in id order, seeded, deterministic). Async.
/// `weight` may be omitted unless `options.weighted`.
#[napi(ts_return_type = "Promise<NativeCommunities>")]
pub fn graph_leiden(
  node_count: u32,
  src: Uint32Array,
  dst: Uint32Array,
  weight: Option<Float64Array>,
  options: Option<LeidenOptions>,
) -> napi::Result<AsyncTask<Job<leiden::Communities, NativeCommunities>>> {
  guard(|| {
    let o = options.unwrap_or(LeidenOptions {
      weighted: None,
      resolution: None,
      max_iterations: None,
      seed: None,
    });
    let defaults = leiden::LeidenOptions::default();
    let opts = leiden::LeidenOptions {
      weighted: o.weighted.unwrap_or(false),
      resolution: o.resolution.unwrap_or(defaults.resolution),
      max_iterations: o.max_iterations.unwrap_or(defaults.max_iterations),
      seed: o.seed.map_or(defaults.seed, u64::from),
      randomness: defaults.randomness,
    };
    if opts.weighted && weight.is_none() {
      return Err(err(
        codes::INVALID_ARGUMENT,
        "options.weighted needs the weight array",
      ));
    }
    if !(opts.resolution.is_finite() && opts.resolution > 0.0) {
      return Err(err(
        codes::INVALID_ARGUMENT,
        format!("resolution must be > 0, got {}", opts.resolution),
      ));
    }
    let input = EdgesInput::new(
      node_count,
      &src,
      &dst,
      if opts.weighted { weight.as_deref() } else { None },
    );
    Ok(Job::task(
      move || input.graph().map(|g| leiden::leiden(&g, &opts)),
      |c| NativeCommunities {
        membership: Uint32Array::new(c.membership),
        count: c.count,
        modularity: c.modularity,
        iterations: c.iterations,
      },
    ))
  })
}

#[napi(object)]
pub struct KMeansOptions {
  /// L2-normalise the vectors first (cosine space). Default false.
  pub normalize: Option<bool>,
  /// Default 25.
  pub max_iter: Option<u32>,
  /// Default 42.
  pub seed: Option<u32>,
}

#[napi(object)]
pub struct NativeKMeans {
  pub labels: Uint32Array,
  /// k × dim, row-major.
  pub centroids: Float32Array,
  pub iterations: u32,
  pub inertia: f64,
}

/// k-means (seeded k-means++, ≤ 25 Lloyd iterations, early stop) over `vectors`
/// (rows × dim, flat). Async.
#[napi(ts_return_type = "Promise<NativeKMeans>")]
pub fn kmeans(
  vectors: Float32Array,
  dim: u32,
  k: u32,
  options: Option<KMeansOptions>,
) -> napi::Result<AsyncTask<Job<core_kmeans::KMeans, NativeKMeans>>> {
  guard(|| {
    let data = vectors.to_vec();
    let defaults = core_kmeans::KMeansOptions::default();
    let opts = match options {
      Some(o) => core_kmeans::KMeansOptions {
        normalize: o.normalize.unwrap_or(false),
        max_iter: o.max_iter.unwrap_or(defaults.max_iter),
        seed: o.seed.map_or(defaults.seed, u64::from),
      },
      None => defaults,
    };
    Ok(Job::task(
      move || core_kmeans::kmeans(&data, dim as usize, k as usize, &opts),
      |r| NativeKMeans {
        labels: Uint32Array::new(r.labels),
        centroids: Float32Array::new(r.centroids),
        iterations: r.iterations,
        inertia: r.inertia,
      },
    ))
  })
}

// ---------------------------------------------------------------------------------------
// Phrase matcher
// ---------------------------------------------------------------------------------------

const MATCHER_CLOSED: &str = "the phrase matcher is closed";

/// Exact-phrase index over names (§6.3): whole tokens, case-insensitive, Unicode-aware.
#[napi]
pub struct PhraseMatcher {
  inner: Handle<phrase::PhraseMatcher>,
}

#[napi]
impl PhraseMatcher {
  /// Indexes `names` (name i is reported as i). Async.
  #[napi(ts_return_type = "Promise<PhraseMatcher>")]
  pub fn build(names: Vec<String>) -> napi::Result<AsyncTask<Job<phrase::PhraseMatcher, PhraseMatcher>>> {
    guard(|| {
      Ok(Job::task(
        move || Ok::<_, std::convert::Infallible>(phrase::PhraseMatcher::new(&names)),
        |m| PhraseMatcher {
          inner: Handle::new(m, MATCHER_CLOSED),
        },
      ))
    })
  }

  /// Indexes of the names containing any of `phrases` as whole tokens; sorted, distinct.
  /// Phrases without tokens match nothing. Sync.
  #[napi]
  pub fn find(&self, phrases: Vec<String>) -> napi::Result<Uint32Array> {
    guard(|| Ok(Uint32Array::new(self.inner.get()?.find(&phrases))))
  }

  #[napi(getter)]
  pub fn name_count(&self) -> napi::Result<u32> {
    guard(|| Ok(self.inner.get()?.name_count() as u32))
  }

  #[napi]
  pub fn close(&self) -> napi::Result<()> {
    guard(|| self.inner.close())
  }
}

/// The tokens the phrase matcher sees for `text` (fold, then tokenise). Sync; diagnostics.
#[napi]
pub fn phrase_tokens(text: String) -> napi::Result<Vec<String>> {
  guard(|| Ok(phrase::phrase_tokens(&text)))
}
