/**
 * The base graph (docs/method.md §1) as the pipeline edits it: typed, weighted nodes and
 * weighted undirected edges keyed by the ordered pair. Integer weights at rest.
 * Iteration order is made deterministic by the writers (sorted by id), not by insertion.
 */
import type { GraphEdge, GraphNode, NodeType } from './types.js';

export function edgeKey(a: string, b: string): string {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}

export class BaseGraph {
  readonly nodes = new Map<string, GraphNode>();
  readonly edges = new Map<string, GraphEdge>();

  hasNode(id: string): boolean {
    return this.nodes.has(id);
  }

  /** Adds a node with `weight` or, if present, adds `weight` to it; marks it touched in `g`. */
  bumpNode(id: string, type: NodeType, g: number, weight = 1): GraphNode {
    const n = this.nodes.get(id);
    if (n) {
      if (n.type !== type) throw new Error(`node ${id} is a ${n.type}, not a ${type}`);
      n.weight += weight;
      n.updatedGeneration = g;
      return n;
    }
    const created: GraphNode = { type, weight, generation: g, updatedGeneration: g };
    this.nodes.set(id, created);
    return created;
  }

  /** Marks a node as changed in generation `g` without changing its weight. */
  touch(id: string, g: number): void {
    const n = this.nodes.get(id);
    if (n) n.updatedGeneration = g;
  }

  /** Adds `weight` to the undirected edge a—b, creating it if absent. Self-loops are refused. */
  bumpEdge(a: string, b: string, g: number, weight = 1): void {
    if (a === b) throw new Error(`refusing a self-loop on ${a}`);
    const key = edgeKey(a, b);
    const e = this.edges.get(key);
    if (e) {
      e.weight += weight;
      return;
    }
    const [source, target] = a < b ? [a, b] : [b, a];
    this.edges.set(key, { source, target, weight, generation: g });
  }

  /** Creates the edge with `weight` if absent; an existing edge is left as it is ("never incremented"). */
  ensureEdge(a: string, b: string, g: number, weight = 1): boolean {
    const key = edgeKey(a, b);
    if (this.edges.has(key)) return false;
    this.bumpEdge(a, b, g, weight);
    return true;
  }

  hasEdge(a: string, b: string): boolean {
    return this.edges.has(edgeKey(a, b));
  }

  /** Nodes sorted by id: the row order of graph_nodes.parquet. */
  sortedNodes(): [string, GraphNode][] {
    return [...this.nodes.entries()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  }

  /** Edges sorted by (source, target): the row order of graph_edges.parquet. */
  sortedEdges(): GraphEdge[] {
    return [...this.edges.values()].sort((x, y) =>
      x.source < y.source
        ? -1
        : x.source > y.source
          ? 1
          : x.target < y.target
            ? -1
            : x.target > y.target
              ? 1
              : 0,
    );
  }
}
