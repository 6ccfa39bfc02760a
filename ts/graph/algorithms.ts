/**
 * Whole-graph algorithms of the native core (crates/noderag_graph). Each runs off the main
 * thread; the input arrays are copied before the call returns.
 */
import { callNativeAsync, native } from '../native.js';
import { checkCount, type GraphEdges, requireWeights } from './edges.js';

export interface PageRankResult {
  /** Score of each node; they sum to 1. */
  scores: Float64Array;
  iterations: number;
  converged: boolean;
}

/** Global weighted PageRank (§7.5): damping 0.85, uniform teleport and dangling mass, L1 < 1e-9 or 100 iterations. */
export async function pagerank(edges: GraphEdges): Promise<PageRankResult> {
  const w = requireWeights(edges, 'pagerank');
  return callNativeAsync(() =>
    native.graphPagerank(checkCount('nodeCount', edges.nodeCount), edges.src, edges.dst, w),
  );
}

export interface ShortestPath {
  /** From a source to a target, both included. */
  nodes: Uint32Array;
  /** Σ 1/weight along the path. */
  length: number;
}

/** Bidirectional Dijkstra (edge length 1/weight) between two node sets; null when no path exists. */
export async function shortestPath(
  edges: GraphEdges,
  sources: Uint32Array,
  targets: Uint32Array,
): Promise<ShortestPath | null> {
  const w = requireWeights(edges, 'shortestPath');
  return callNativeAsync(() =>
    native.graphShortestPath(
      checkCount('nodeCount', edges.nodeCount),
      edges.src,
      edges.dst,
      w,
      sources,
      targets,
    ),
  );
}

export interface Connection {
  /** Linking nodes outside the selection, in the order they were added. */
  added: Uint32Array;
  /** Best node of each selection component no path could join (the graph is disconnected). */
  unreachable: Uint32Array;
  /** Components of the subgraph induced by the selection, before joining. */
  componentCount: number;
}

/**
 * §7.5 connect: `selection` in rank order (best first, distinct). Components of the induced
 * subgraph are joined to the best node's component one at a time by shortest paths on the
 * full graph (length 1/weight).
 */
export async function connect(edges: GraphEdges, selection: Uint32Array): Promise<Connection> {
  const w = requireWeights(edges, 'connect');
  return callNativeAsync(() =>
    native.graphConnect(checkCount('nodeCount', edges.nodeCount), edges.src, edges.dst, w, selection),
  );
}

/** k-core number of each node (degree peeling; weights and self-loops ignored). */
export async function coreNumbers(edges: GraphEdges): Promise<Uint32Array> {
  return callNativeAsync(() =>
    native.graphCoreNumbers(checkCount('nodeCount', edges.nodeCount), edges.src, edges.dst),
  );
}

/**
 * Betweenness (Brandes, unweighted): exact for ≤ 5,000 nodes, else 500 seeded pivots (scaled
 * by N/500). With `ids` (node i's id at i) the pivots are the ids of smallest seeded hash, the
 * same whatever the node order and mostly the same after a small change of the graph;
 * without, a seeded shuffle of the node indexes.
 */
export async function betweenness(
  edges: GraphEdges,
  seed = 42,
  ids?: readonly string[],
): Promise<Float64Array> {
  return callNativeAsync(() =>
    native.graphBetweenness(
      checkCount('nodeCount', edges.nodeCount),
      edges.src,
      edges.dst,
      checkCount('seed', seed),
      ids as string[] | undefined,
    ),
  );
}

export interface LeidenOptions {
  /** Use edge weights (default false: §3.7 ignores them). */
  weighted?: boolean;
  resolution?: number;
  maxIterations?: number;
  seed?: number;
}

export interface Communities {
  /** Community of each node, numbered by smallest member index. */
  membership: Uint32Array;
  count: number;
  modularity: number;
  iterations: number;
}

/** Leiden communities (modularity, resolution 1, nodes in index order, seed 42, ≤ 10 iterations). */
export async function leiden(edges: GraphEdges, options: LeidenOptions = {}): Promise<Communities> {
  const weight = options.weighted ? requireWeights(edges, 'leiden with weighted: true') : undefined;
  return callNativeAsync(() =>
    native.graphLeiden(checkCount('nodeCount', edges.nodeCount), edges.src, edges.dst, weight, options),
  );
}

export interface KMeansOptions {
  /** L2-normalise the vectors first (cosine space). */
  normalize?: boolean;
  maxIter?: number;
  seed?: number;
}

export interface KMeansResult {
  labels: Uint32Array;
  /** k × dim, row-major. */
  centroids: Float32Array;
  iterations: number;
  inertia: number;
}

/** k-means over `vectors` (rows × dim): seeded k-means++, ≤ 25 Lloyd iterations, early stop. */
export async function kmeans(
  vectors: Float32Array,
  dim: number,
  k: number,
  options: KMeansOptions = {},
): Promise<KMeansResult> {
  return callNativeAsync(() =>
    native.kmeans(vectors, checkCount('dim', dim, 1), checkCount('k', k, 1), options),
  );
}
