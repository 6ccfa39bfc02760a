//! Our graph code against petgraph's implementations of the same things, on the same graphs
//! (issue 17 item 5; the decision is in ARCHITECTURE.md "Why not petgraph"). Run by
//! `npm run bench -- graph`, which writes the graphs; by hand:
//! `cargo run --release -p noderag_graph --example petgraph_compare -- BIG SMALL...`.
//!
//! A graph file (little-endian): u32 node count, u32 base edge count m, u32 similarity pair
//! count k, then base src[m] u32, dst[m] u32, weight[m] f64, similarity src[k] u32, dst[k] u32
//! (weight 1). The graph is their union, duplicates merged by summing (our `Graph` rules).
//!
//! On BIG: CSR build (ours from the edge lists; petgraph's `Csr::from_sorted_edges`, which
//! needs both directions sorted and merged first) and a neighbour walk (y = A·x over every
//! row); single-source Dijkstra with length 1/w (ours `paths::distances`, petgraph's
//! `algo::dijkstra`); point-to-point shortest paths (our bidirectional `PathFinder`,
//! petgraph's `astar` with a zero heuristic, the only petgraph search that returns the path).
//! On each SMALL graph (petgraph's `page_rank` visits all n² node pairs per iteration, so it
//! cannot run on BIG): PageRank on the unweighted graph, damping 0.85, the same number of
//! iterations (ours `pagerank_with`, tolerance 0). petgraph 0.8.3 has no personalised
//! PageRank, no edge weights in `page_rank`, and nothing like our typed lazy walk.
//!
//! Timings alternate ours / petgraph in rounds and keep each side's minimum (the machine is
//! shared). Output: one `PETGRAPH key=value …` line per comparison.

// Numeric kernels read best with index loops over parallel arrays (as in the library).
#![allow(clippy::needless_range_loop)]

use std::time::Instant;

use noderag_graph::csr::{EdgeList, Graph};
use noderag_graph::pagerank::pagerank_with;
use noderag_graph::paths::{distances, PathFinder};
use noderag_graph::rng::SplitMix64;
use petgraph::csr::Csr;
use petgraph::Undirected;

type PgCsr = Csr<(), f64, Undirected, u32>;

const ROUNDS: usize = 3;
const SOURCES: usize = 8;
const PAIRS: usize = 200;
const PR_ITER: u32 = 10;

struct Input {
  n: usize,
  base: (Vec<u32>, Vec<u32>, Vec<f64>),
  sim: (Vec<u32>, Vec<u32>),
}

fn read_input(path: &str) -> Input {
  let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
  let mut at = 0;
  let mut u32s = |count: usize| -> Vec<u32> {
    let v = bytes[at..at + 4 * count]
      .chunks_exact(4)
      .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
      .collect();
    at += 4 * count;
    v
  };
  let head = u32s(3);
  let (n, m, k) = (head[0] as usize, head[1] as usize, head[2] as usize);
  let (src, dst) = (u32s(m), u32s(m));
  let wbytes = &bytes[12 + 8 * m..12 + 16 * m];
  let w = wbytes
    .chunks_exact(8)
    .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
    .collect();
  let rest = &bytes[12 + 16 * m..];
  assert_eq!(rest.len(), 8 * k, "{path}: size does not match its header");
  let words: Vec<u32> = rest
    .chunks_exact(4)
    .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
    .collect();
  Input {
    n,
    base: (src, dst, w),
    sim: (words[..k].to_vec(), words[k..].to_vec()),
  }
}

fn ours(input: &Input) -> Graph {
  let (s, d, w) = &input.base;
  Graph::from_edge_lists(
    input.n,
    &[
      EdgeList::weighted(s, d, w),
      EdgeList::constant(&input.sim.0, &input.sim.1, 1.0),
    ],
  )
  .expect("valid graph")
}

/// petgraph's CSR from the same edge lists: both directions, sorted by (row, column),
/// duplicates merged (stable sort: duplicates sum in edge order, as ours do).
fn petgraph_csr(input: &Input) -> PgCsr {
  let (s, d, w) = &input.base;
  let (ss, sd) = &input.sim;
  let mut entries: Vec<(u32, u32, f64)> = Vec::with_capacity(2 * (s.len() + ss.len()));
  let edges = (0..s.len())
    .map(|e| (s[e], d[e], w[e]))
    .chain((0..ss.len()).map(|e| (ss[e], sd[e], 1.0)));
  for (u, v, w) in edges {
    entries.push((u, v, w));
    if u != v {
      entries.push((v, u, w));
    }
  }
  entries.sort_by_key(|&(u, v, _)| (u, v));
  entries.dedup_by(|next, kept| {
    let same = next.0 == kept.0 && next.1 == kept.1;
    if same {
      kept.2 += next.2;
    }
    same
  });
  let mut csr = PgCsr::from_sorted_edges(&entries).expect("sorted");
  // from_sorted_edges sizes the graph by the largest id seen: add trailing isolated nodes.
  while csr.node_count() < input.n {
    csr.add_node(());
  }
  csr
}

/// Runs `a` and `b` alternately `ROUNDS` times; the minimum milliseconds of each.
fn ab<A, B>(mut a: impl FnMut() -> A, mut b: impl FnMut() -> B) -> (f64, f64, A, B) {
  let (mut ta, mut tb) = (f64::INFINITY, f64::INFINITY);
  let mut last = (None, None);
  for _ in 0..ROUNDS {
    let t = Instant::now();
    let x = a();
    ta = ta.min(t.elapsed().as_secs_f64() * 1e3);
    let t = Instant::now();
    let y = b();
    tb = tb.min(t.elapsed().as_secs_f64() * 1e3);
    last = (Some(x), Some(y));
  }
  (ta, tb, last.0.expect("ran"), last.1.expect("ran"))
}

/// Our rows as slices (`neighbours`/`weights`), the same loop as petgraph's below.
fn walk_ours(g: &Graph, x: &[f64], y: &mut [f64]) {
  for u in 0..y.len() {
    let mut acc = 0.0;
    for (v, w) in g.neighbours(u as u32).iter().zip(g.weights(u as u32)) {
      acc += w * x[*v as usize];
    }
    y[u] = acc;
  }
}

/// The loop of `pagerank.rs` (entry indexes into the raw arrays: a bounds check per read).
fn walk_ours_indexed(g: &Graph, x: &[f64], y: &mut [f64]) {
  let (offsets, nb, wt) = g.raw();
  for u in 0..y.len() {
    let mut acc = 0.0;
    for e in offsets[u]..offsets[u + 1] {
      acc += wt[e] * x[nb[e] as usize];
    }
    y[u] = acc;
  }
}

fn walk_petgraph(g: &PgCsr, x: &[f64], y: &mut [f64]) {
  for u in 0..y.len() {
    let a = u as u32; // petgraph's Csr names nodes by their index type
    let mut acc = 0.0;
    for (v, w) in g.neighbors_slice(a).iter().zip(g.edges_slice(a)) {
      acc += w * x[*v as usize];
    }
    y[u] = acc;
  }
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
  a.iter()
    .zip(b)
    .map(|(x, y)| if x == y { 0.0 } else { (x - y).abs() })
    .fold(0.0, f64::max)
}

fn big(path: &str) {
  let input = read_input(path);
  let (build_ours, build_pg, g, pg) = ab(|| ours(&input), || petgraph_csr(&input));
  assert_eq!(g.entry_count(), pg.edge_count(), "same number of CSR entries");
  // From already sorted entries, petgraph's build alone (what it costs when the input is sorted).
  let sorted: Vec<(u32, u32, f64)> = (0..g.node_count() as u32)
    .flat_map(|u| g.row(u).map(move |(v, w)| (u, v, w)))
    .collect();
  let (_, pg_sorted_only, _, _) = ab(|| (), || PgCsr::from_sorted_edges(&sorted).expect("sorted"));
  drop(sorted);

  let n = g.node_count();
  let x: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64).collect();
  let mut y = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
  let reps = 10;
  // Three variants, round-robin over more rounds than the others: each is one sweep of memory.
  let mut best = [f64::INFINITY; 3];
  for _ in 0..3 * ROUNDS {
    for (k, best) in best.iter_mut().enumerate() {
      let t = Instant::now();
      for _ in 0..reps {
        match k {
          0 => walk_ours(&g, &x, &mut y[0]),
          1 => walk_petgraph(&pg, &x, &mut y[1]),
          _ => walk_ours_indexed(&g, &x, &mut y[2]),
        }
      }
      *best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
  }
  let [walk_o, walk_p, walk_i] = best;
  assert_eq!(max_diff(&y[0], &y[1]), 0.0, "the walks agree");
  assert_eq!(max_diff(&y[0], &y[2]), 0.0, "the walks agree");
  println!(
    "PETGRAPH csr nodes={n} entries={} build_ours_ms={build_ours:.1} build_petgraph_ms={build_pg:.1} \
     build_petgraph_presorted_ms={pg_sorted_only:.1} walk_ours_ms={:.2} walk_petgraph_ms={:.2} \
     walk_ours_indexed_ms={:.2}",
    g.entry_count(),
    walk_o / reps as f64,
    walk_p / reps as f64,
    walk_i / reps as f64
  );

  let mut rng = SplitMix64::new(42);
  let sources: Vec<u32> = (0..SOURCES).map(|_| rng.below(n as u64) as u32).collect();
  let (sssp_o, sssp_p, d_ours, d_pg) = ab(
    || {
      sources
        .iter()
        .map(|&s| distances(&g, &[s]).expect("valid ids"))
        .collect::<Vec<_>>()
    },
    || {
      sources
        .iter()
        .map(|&s| petgraph::algo::dijkstra(&pg, s, None, |e| 1.0 / *e.weight()))
        .collect::<Vec<_>>()
    },
  );
  let mut diff: f64 = 0.0;
  for (mine, theirs) in d_ours.iter().zip(&d_pg) {
    assert_eq!(
      mine.iter().filter(|d| d.is_finite()).count(),
      theirs.len(),
      "same reach"
    );
    for (node, d) in theirs {
      diff = diff.max((mine[*node as usize] - d).abs());
    }
  }
  println!(
    "PETGRAPH dijkstra sources={SOURCES} ours_ms={:.1} petgraph_ms={:.1} max_abs_diff={diff:.1e}",
    sssp_o / SOURCES as f64,
    sssp_p / SOURCES as f64
  );

  let pairs: Vec<(u32, u32)> = (0..PAIRS)
    .map(|_| (rng.below(n as u64) as u32, rng.below(n as u64) as u32))
    .collect();
  let mut finder = PathFinder::new(&g);
  let (p2p_o, p2p_p, len_ours, len_pg) = ab(
    || {
      pairs
        .iter()
        .map(|&(s, t)| finder.shortest_path(&[s], &[t]).map(|p| p.length))
        .collect::<Vec<_>>()
    },
    || {
      pairs
        .iter()
        .map(|&(s, t)| {
          petgraph::algo::astar(&pg, s, |v| v == t, |e| 1.0 / *e.weight(), |_| 0.0).map(|(len, _)| len)
        })
        .collect::<Vec<_>>()
    },
  );
  let mut diff: f64 = 0.0;
  for (a, b) in len_ours.iter().zip(&len_pg) {
    match (a, b) {
      (Some(a), Some(b)) => diff = diff.max((a - b).abs()),
      (None, None) => {}
      _ => panic!("reachability differs"),
    }
  }
  println!(
    "PETGRAPH path pairs={PAIRS} ours_ms={:.3} petgraph_ms={:.3} max_abs_diff={diff:.1e}",
    p2p_o / PAIRS as f64,
    p2p_p / PAIRS as f64
  );
}

/// PageRank on the unweighted simple graph of `path` (merged duplicates count once).
fn small(path: &str) {
  let input = read_input(path);
  let merged = ours(&input);
  let n = merged.node_count();
  let (mut s, mut d) = (vec![], vec![]);
  for u in 0..n as u32 {
    for &v in merged.neighbours(u) {
      if u <= v {
        s.push(u);
        d.push(v);
      }
    }
  }
  let g = Graph::from_unweighted(n, &s, &d).expect("valid graph");
  let mut entries: Vec<(u32, u32, f64)> = (0..n as u32)
    .flat_map(|u| g.row(u).map(move |(v, w)| (u, v, w)))
    .collect();
  entries.sort_by_key(|&(u, v, _)| (u, v));
  let mut pg = PgCsr::from_sorted_edges(&entries).expect("sorted");
  while pg.node_count() < n {
    pg.add_node(());
  }
  let (t_ours, t_pg, pr_ours, pr_pg) = ab(
    || pagerank_with(&g, 0.85, 0.0, PR_ITER),
    || petgraph::algo::page_rank(&pg, 0.85_f64, PR_ITER as usize),
  );
  assert_eq!(pr_ours.iterations, PR_ITER);
  println!(
    "PETGRAPH pagerank nodes={n} edges={} iterations={PR_ITER} ours_ms={t_ours:.2} petgraph_ms={t_pg:.1} \
     max_abs_diff={:.1e}",
    s.len(),
    max_diff(&pr_ours.scores, &pr_pg)
  );
}

fn main() {
  let args: Vec<String> = std::env::args().skip(1).collect();
  let (first, rest) = args
    .split_first()
    .expect("usage: petgraph_compare BIG SMALL... (graph files, see the header)");
  big(first);
  for path in rest {
    small(path);
  }
}
