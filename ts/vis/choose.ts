/**
 * Which nodes the visualisation draws (docs/method.md §7.5): the top n of the base graph by
 * global PageRank (score desc, id asc), plus the linking nodes that join the selection's
 * components by shortest paths on the full graph (edge length 1/weight). The output can
 * therefore exceed n; a component the corpus graph itself cannot reach stays apart.
 */
import { connect, pagerank } from '../graph/index.js';
import { toDense } from '../model/adjacency.js';
import type { BaseGraph } from '../model/graph-store.js';
import type { NodeType } from '../model/types.js';

interface ChosenGraph {
  /** Drawn nodes: the top n in rank order, then the linking nodes in the order they were added. */
  nodes: { id: string; type: NodeType; score: number; linking: boolean }[];
  /** Base-graph edges between drawn nodes. */
  edges: { source: string; target: string; weight: number }[];
  /** Selection components no path could join (the corpus graph is disconnected there). */
  unreachableComponents: number;
}

export async function chooseNodes(graph: BaseGraph, n: number): Promise<ChosenGraph> {
  const dense = toDense(graph);
  const count = dense.ids.length;
  if (count === 0) return { nodes: [], edges: [], unreachableComponents: 0 };
  const edges = { nodeCount: count, src: dense.src, dst: dense.dst, weight: dense.weight };
  const { scores } = await pagerank(edges);
  // Dense indexes follow ascending id, so ties broken by index are ties broken by id.
  const order = Array.from({ length: count }, (_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);
  const top = order.slice(0, Math.min(n, count));
  const { added, unreachable } = await connect(edges, Uint32Array.from(top));

  const drawn = new Set<number>(top);
  for (const i of added) drawn.add(i);
  const nodes = [
    ...top.map((i) => ({ i, linking: false })),
    ...Array.from(added, (i) => ({ i, linking: true })),
  ].map(({ i, linking }) => ({
    id: dense.ids[i]!,
    type: graph.nodes.get(dense.ids[i]!)!.type,
    score: scores[i]!,
    linking,
  }));
  const chosenEdges: ChosenGraph['edges'] = [];
  for (let e = 0; e < dense.src.length; e++) {
    const a = dense.src[e]!;
    const b = dense.dst[e]!;
    if (drawn.has(a) && drawn.has(b)) {
      chosenEdges.push({ source: dense.ids[a]!, target: dense.ids[b]!, weight: dense.weight[e]! });
    }
  }
  return { nodes, edges: chosenEdges, unreachableComponents: unreachable.length };
}
