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
  const kept = graph.sortedNodes().filter(([id, n]) => keep(id, n.type));
  const ids = kept.map(([id]) => id);
  const index = new Map(ids.map((id, i) => [id, i]));
  const types = Uint8Array.from(kept, ([, n]) => nodeTypeCode(n.type));
  // One lookup per end (not a test and then a lookup): 1.5M edges of a 10 MB index.
  const edges = graph.sortedEdges();
  const src = new Uint32Array(edges.length);
  const dst = new Uint32Array(edges.length);
  const weight = new Float64Array(edges.length);
  let m = 0;
  for (const e of edges) {
    const a = index.get(e.source);
    if (a === undefined) continue;
    const b = index.get(e.target);
    if (b === undefined) continue;
    src[m] = a;
    dst[m] = b;
    weight[m] = e.weight;
    m++;
  }
  return { ids, index, types, src: src.slice(0, m), dst: dst.slice(0, m), weight: weight.slice(0, m) };
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
