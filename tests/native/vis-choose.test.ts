import { describe, expect, it } from 'vitest';
import { pagerank } from '../../ts/graph/index.js';
import { toDense } from '../../ts/model/adjacency.js';
import { BaseGraph } from '../../ts/model/graph-store.js';
import { NODE_TYPES } from '../../ts/model/types.js';
import { chooseNodes } from '../../ts/vis/choose.js';

/** A seeded connected graph: a random spanning tree plus extra random edges. */
function randomConnectedGraph(n: number, extra: number, seed: number): BaseGraph {
  let s = seed;
  const rand = () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
  const g = new BaseGraph();
  const id = (i: number) => `n${String(i).padStart(5, '0')}`;
  for (let i = 0; i < n; i++) g.bumpNode(id(i), NODE_TYPES[i % NODE_TYPES.length]!, 1);
  for (let i = 1; i < n; i++) g.bumpEdge(id(i), id(Math.floor(rand() * i)), 1, 1 + Math.floor(rand() * 3));
  for (let k = 0; k < extra; k++) {
    const a = Math.floor(rand() * n);
    const b = Math.floor(rand() * n);
    if (a !== b) g.bumpEdge(id(a), id(b), 1);
  }
  return g;
}

function components(nodes: string[], edges: { source: string; target: string }[]): number {
  const parent = new Map(nodes.map((n) => [n, n]));
  const find = (x: string): string => {
    while (parent.get(x) !== x) x = parent.get(x)!;
    return x;
  };
  for (const e of edges) parent.set(find(e.source), find(e.target));
  return new Set(nodes.map(find)).size;
}

describe('visualisation node choice (docs/method.md §7.5)', () => {
  it('keeps the top n by PageRank, adds linking nodes, leaves no isolated node, one component', async () => {
    const g = randomConnectedGraph(2000, 300, 7);
    const n = 40;
    const chosen = await chooseNodes(g, n);

    const dense = toDense(g);
    const { scores } = await pagerank({
      nodeCount: dense.ids.length,
      src: dense.src,
      dst: dense.dst,
      weight: dense.weight,
    });
    const expectedTop = Array.from({ length: dense.ids.length }, (_, i) => i)
      .sort((a, b) => scores[b]! - scores[a]! || a - b)
      .slice(0, n)
      .map((i) => dense.ids[i]);
    const ids = chosen.nodes.map((c) => c.id);
    expect(ids.slice(0, n)).toEqual(expectedTop);
    expect(chosen.nodes.filter((c) => !c.linking)).toHaveLength(n);

    const touched = new Set(chosen.edges.flatMap((e) => [e.source, e.target]));
    for (const id of ids) expect(touched.has(id)).toBe(true);
    expect(components(ids, chosen.edges)).toBe(1);
    expect(chosen.unreachableComponents).toBe(0);
  });

  it('keeps a disconnected part apart and reports it', async () => {
    const g = new BaseGraph();
    for (const id of ['a', 'b', 'c', 'x', 'y']) g.bumpNode(id, 'entity', 1);
    g.bumpEdge('a', 'b', 1);
    g.bumpEdge('b', 'c', 1);
    g.bumpEdge('x', 'y', 1);
    const chosen = await chooseNodes(g, 5);
    expect(chosen.nodes).toHaveLength(5);
    expect(chosen.unreachableComponents).toBe(1);
  });

  it('an empty graph draws nothing', async () => {
    expect(await chooseNodes(new BaseGraph(), 10)).toEqual({
      nodes: [],
      edges: [],
      unreachableComponents: 0,
    });
  });
});
