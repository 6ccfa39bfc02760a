/**
 * Dense views of the base graph for the native algorithms and for neighbourhood walks:
 * node ids ↔ u32 indexes in ascending id order (docs/method.md §6.1 "nodes in ascending id
 * order"), edges as parallel typed arrays.
 */
import type { BaseGraph } from './graph-store.js';
import { type NodeType, nodeTypeCode } from './types.js';

interface DenseGraph {
  ids: string[];
  index: Map<string, number>;
  types: Uint8Array;
  src: Uint32Array;
  dst: Uint32Array;
  weight: Float64Array;
}

/** The subgraph induced by the nodes `keep` accepts (all nodes by default), densely numbered. */
export function toDense(
  graph: BaseGraph,
  keep: (id: string, type: NodeType) => boolean = () => true,
): DenseGraph {
  // The kept ids alone, sorted as strings (code-unit order: graph_nodes.parquet's row order);
  // [id, node] pairs of every node, sorted, took 0.15–0.18 s of a 10 MB index's 440k nodes.
  const ids: string[] = [];
  for (const [id, n] of graph.nodes) if (keep(id, n.type)) ids.push(id);
  ids.sort();
  const index = new Map<string, number>();
  const types = new Uint8Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    index.set(ids[i]!, i);
    types[i] = nodeTypeCode(graph.nodes.get(ids[i]!)!.type);
  }
  return { ids, index, types, ...denseEdges(graph, index) };
}

/**
 * The edges with both ends in `index` (id → dense index, ascending with the id), as parallel
 * arrays in (source, target) order, the row order of graph_edges.parquet: the pairs of node
 * indexes sort as the ids do. Sorting the kept pairs (only when out of order), not every edge
 * object by its ids: the core graph of a 10 MB index took 1.0–1.5 s, now 0.88–0.92 s.
 */
export function denseEdges(
  graph: BaseGraph,
  index: ReadonlyMap<string, number>,
): { src: Uint32Array; dst: Uint32Array; weight: Float64Array } {
  const size = graph.edges.size;
  const a = new Uint32Array(size);
  const b = new Uint32Array(size);
  const w = new Float64Array(size);
  let m = 0;
  let sorted = true;
  for (const e of graph.edges.values()) {
    const x = index.get(e.source);
    if (x === undefined) continue;
    const y = index.get(e.target);
    if (y === undefined) continue;
    if (m > 0 && (x < a[m - 1]! || (x === a[m - 1]! && y < b[m - 1]!))) sorted = false;
    a[m] = x;
    b[m] = y;
    w[m] = e.weight;
    m++;
  }
  if (sorted) return { src: a.slice(0, m), dst: b.slice(0, m), weight: w.slice(0, m) };
  // Edges keep the order they were added in (the tables' order, then this cycle's): mostly
  // sorted runs, which the merge sort takes whole.
  const order = Array.from({ length: m }, (_, i) => i).sort((i, j) => a[i]! - a[j]! || b[i]! - b[j]!);
  return {
    src: Uint32Array.from(order, (i) => a[i]!),
    dst: Uint32Array.from(order, (i) => b[i]!),
    weight: Float64Array.from(order, (i) => w[i]!),
  };
}

interface Neighbour {
  id: string;
  weight: number;
}

/**
 * Adjacency lists of the base graph (built once per stage; the graph is not mutated
 * meanwhile): of every node, or only of the nodes in `of`. Each list is in edge order either
 * way. A sync that adds one file to a 10 MB index needs the lists of a few hundred entities;
 * the lists of all 800k nodes took 1.7 s and their garbage more.
 */
export function adjacency(graph: BaseGraph, of?: ReadonlySet<string>): Map<string, Neighbour[]> {
  const adj = new Map<string, Neighbour[]>();
  const add = (a: string, b: string, w: number) => {
    if (of && !of.has(a)) return;
    let list = adj.get(a);
    if (!list) {
      list = [];
      adj.set(a, list);
    }
    list.push({ id: b, weight: w });
  };
  for (const e of graph.edges.values()) {
    add(e.source, e.target, e.weight);
    add(e.target, e.source, e.weight);
  }
  return adj;
}
