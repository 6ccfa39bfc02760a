import { describe, expect, it } from 'vitest';
import { ClosedError, InvalidArgumentError } from '../../ts/errors.js';
import {
  betweenness,
  connect,
  coreNumbers,
  type GraphEdges,
  kmeans,
  leiden,
  PhraseMatcher,
  pagerank,
  phraseTokens,
  SearchGraph,
  shortestPath,
} from '../../ts/graph/index.js';

function edges(nodeCount: number, pairs: [number, number, number?][]): GraphEdges {
  return {
    nodeCount,
    src: Uint32Array.from(pairs.map((p) => p[0])),
    dst: Uint32Array.from(pairs.map((p) => p[1])),
    weight: Float64Array.from(pairs.map((p) => p[2] ?? 1)),
  };
}

const walk = { alpha: 0.5, maxIter: 2 };

describe('SearchGraph', () => {
  it('propagates the lazy walk and returns typed arrays in ranking order', async () => {
    const g = await SearchGraph.build({
      nodeTypes: Uint8Array.from([0, 1, 1]),
      edges: edges(3, [
        [0, 1],
        [1, 2],
      ]),
      unbalanceAdjust: false,
    });
    expect(g.nodeCount).toBe(3);
    expect(g.edgeCount).toBe(2);
    const seeds = { ids: Uint32Array.from([0]), weights: Float64Array.from([1]) };
    const top = g.topNodes(seeds, Uint32Array.from([5, 5]), walk);
    expect(top.ids).toBeInstanceOf(Uint32Array);
    expect(top.scores).toBeInstanceOf(Float64Array);
    expect(top.types).toBeInstanceOf(Uint8Array);
    expect(Array.from(top.ids)).toEqual([1, 0, 2]);
    expect(Array.from(top.scores)).toEqual([0.5, 0.375, 0.125]);
    expect(Array.from(top.types)).toEqual([1, 0, 1]);
    expect(top.steps).toBe(2);
    expect(top.eligible).toBe(3);
    // per-type quota: one node of type 1, none of type 0
    const capped = g.topNodes(seeds, Uint32Array.from([0, 1]), walk);
    expect(Array.from(capped.ids)).toEqual([1]);
    const full = g.scores(seeds, { ...walk, maxIter: 1 });
    expect(Array.from(full.scores)).toEqual([0.5, 0.5, 0]);
    expect(Array.from(full.eligible)).toEqual([1, 1, 0]);
    // restart mode and the forced dense step agree with the same definitions
    const dense = g.topNodes(seeds, Uint32Array.from([5, 5]), { ...walk, dense: true });
    expect(Array.from(dense.scores)).toEqual(Array.from(top.scores));
    const restart = g.topNodes(seeds, Uint32Array.from([5, 5]), { ...walk, mode: 'restart', maxIter: 50 });
    expect(restart.ids[0]).toBe(0);
    g.close();
  });

  it('adds similarity edges and applies unbalance_adjust', async () => {
    const g = await SearchGraph.build({
      nodeTypes: new Uint8Array(4),
      edges: edges(4, [
        [0, 1, 3],
        [0, 2, 5],
      ]),
      similarity: { src: Uint32Array.from([1, 3]), dst: Uint32Array.from([0, 0]) },
      unbalanceAdjust: true,
    });
    // deg(0) = 3 after the similarity edge 0-3: every edge of 0 is clamped to 1/3
    expect(g.edgeWeight(0, 1)).toBeCloseTo(1 / 3, 15);
    expect(g.edgeWeight(3, 0)).toBeCloseTo(1 / 3, 15);
    expect(g.edgeWeight(1, 2)).toBeNull();
    g.close();
  });

  it('rejects bad input with InvalidArgumentError and use after close with ClosedError', async () => {
    await expect(
      SearchGraph.build({ nodeTypes: new Uint8Array(2), edges: edges(2, [[0, 2]]), unbalanceAdjust: false }),
    ).rejects.toThrow(InvalidArgumentError);
    await expect(
      SearchGraph.build({ nodeTypes: new Uint8Array(3), edges: edges(2, [[0, 1]]), unbalanceAdjust: false }),
    ).rejects.toThrow(/nodeTypes has 3 entries/);
    await expect(
      SearchGraph.build({
        nodeTypes: new Uint8Array(2),
        edges: edges(2, [[0, 1, -1]]),
        unbalanceAdjust: false,
      }),
    ).rejects.toThrow(/weight\[0\]/);
    const g = await SearchGraph.build({
      nodeTypes: new Uint8Array(2),
      edges: edges(2, [[0, 1]]),
      unbalanceAdjust: false,
    });
    const quotas = Uint32Array.from([3]);
    expect(() =>
      g.topNodes({ ids: Uint32Array.from([7]), weights: Float64Array.from([1]) }, quotas, walk),
    ).toThrow(InvalidArgumentError);
    expect(() =>
      g.topNodes({ ids: Uint32Array.from([0]), weights: Float64Array.from([1]) }, quotas, {
        ...walk,
        alpha: 2,
      }),
    ).toThrow(/alpha/);
    const empty = g.topNodes({ ids: new Uint32Array(0), weights: new Float64Array(0) }, quotas, walk);
    expect(empty.ids.length).toBe(0);
    g.close();
    g.close(); // idempotent
    expect(g.closed).toBe(true);
    expect(() =>
      g.topNodes({ ids: Uint32Array.from([0]), weights: Float64Array.from([1]) }, quotas, walk),
    ).toThrow(ClosedError);
    expect(() => g.nodeCount).toThrow(ClosedError);
  });
});

describe('whole-graph algorithms', () => {
  const star = edges(5, [
    [0, 1],
    [0, 2],
    [0, 3],
    [0, 4],
  ]);

  it('pagerank sums to 1 and ranks the hub first', async () => {
    // A star is bipartite: the power iteration oscillates (×0.85 per step) and needs more
    // than 100 iterations for an L1 change < 1e-9, so it stops at the cap.
    const pr = await pagerank(star);
    expect(pr.scores).toBeInstanceOf(Float64Array);
    expect(pr.converged).toBe(false);
    expect(pr.iterations).toBe(100);
    const triangle = await pagerank(
      edges(4, [
        [0, 1],
        [1, 2],
        [2, 0],
        [0, 3],
      ]),
    );
    expect(triangle.converged).toBe(true);
    expect(triangle.iterations).toBeLessThan(100);
    expect(pr.scores.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(pr.scores[0]).toBeGreaterThan(pr.scores[1]!);
  });

  it('shortest paths prefer strong edges; connect joins components', async () => {
    const g = edges(6, [
      [0, 1, 10],
      [1, 2, 10],
      [2, 4, 10],
      [0, 3, 1],
      [3, 4, 1],
    ]);
    const p = await shortestPath(g, Uint32Array.from([0]), Uint32Array.from([4]));
    expect(Array.from(p!.nodes)).toEqual([0, 1, 2, 4]);
    expect(p!.length).toBeCloseTo(0.3, 12);
    expect(await shortestPath(g, Uint32Array.from([0]), Uint32Array.from([5]))).toBeNull();
    const c = await connect(g, Uint32Array.from([0, 4, 5]));
    expect(Array.from(c.added)).toEqual([2, 1]);
    expect(Array.from(c.unreachable)).toEqual([5]);
    expect(c.componentCount).toBe(3);
    await expect(connect(g, Uint32Array.from([0, 0]))).rejects.toThrow(InvalidArgumentError);
  });

  it('k-core numbers and betweenness', async () => {
    const g = edges(6, [
      [0, 1],
      [0, 2],
      [0, 3],
      [1, 2],
      [1, 3],
      [2, 3],
      [3, 4],
      [4, 5],
    ]);
    expect(Array.from(await coreNumbers(g))).toEqual([3, 3, 3, 3, 1, 1]);
    expect(Array.from(await betweenness(star))).toEqual([6, 0, 0, 0, 0]);
  });

  it('leiden on the karate club: modularity >= 0.41, same result on every run', async () => {
    // prettier-ignore
    const k: [number, number][] = [
      [0, 1],
      [0, 2],
      [0, 3],
      [0, 4],
      [0, 5],
      [0, 6],
      [0, 7],
      [0, 8],
      [0, 10],
      [0, 11],
      [0, 12],
      [0, 13],
      [0, 17],
      [0, 19],
      [0, 21],
      [0, 31],
      [1, 2],
      [1, 3],
      [1, 7],
      [1, 13],
      [1, 17],
      [1, 19],
      [1, 21],
      [1, 30],
      [2, 3],
      [2, 7],
      [2, 8],
      [2, 9],
      [2, 13],
      [2, 27],
      [2, 28],
      [2, 32],
      [3, 7],
      [3, 12],
      [3, 13],
      [4, 6],
      [4, 10],
      [5, 6],
      [5, 10],
      [5, 16],
      [6, 16],
      [8, 30],
      [8, 32],
      [8, 33],
      [9, 33],
      [13, 33],
      [14, 32],
      [14, 33],
      [15, 32],
      [15, 33],
      [18, 32],
      [18, 33],
      [19, 33],
      [20, 32],
      [20, 33],
      [22, 32],
      [22, 33],
      [23, 25],
      [23, 27],
      [23, 29],
      [23, 32],
      [23, 33],
      [24, 25],
      [24, 27],
      [24, 31],
      [25, 31],
      [26, 29],
      [26, 33],
      [27, 33],
      [28, 31],
      [28, 33],
      [29, 32],
      [29, 33],
      [30, 32],
      [30, 33],
      [31, 32],
      [31, 33],
      [32, 33],
    ];
    const g = edges(34, k);
    const a = await leiden(g);
    expect(a.modularity).toBeGreaterThanOrEqual(0.41);
    expect(a.membership).toBeInstanceOf(Uint32Array);
    const b = await leiden(g);
    expect(Array.from(b.membership)).toEqual(Array.from(a.membership));
    await expect(leiden({ ...g, weight: undefined }, { weighted: true })).rejects.toThrow(
      InvalidArgumentError,
    );
  });

  it('kmeans separates two blobs deterministically', async () => {
    const v = new Float32Array(40 * 3);
    for (let i = 0; i < 40; i++) {
      const base = i % 2 === 0 ? 0 : 50;
      v.set([base + (i % 5) * 0.1, base - (i % 3) * 0.1, base], i * 3);
    }
    const r = await kmeans(v, 3, 2);
    expect(r.labels).toBeInstanceOf(Uint32Array);
    expect(r.centroids).toBeInstanceOf(Float32Array);
    expect(r.centroids.length).toBe(6);
    for (let i = 2; i < 40; i++) expect(r.labels[i]).toBe(r.labels[i % 2]);
    expect(r.labels[0]).not.toBe(r.labels[1]);
    expect(Array.from((await kmeans(v, 3, 2)).labels)).toEqual(Array.from(r.labels));
    await expect(kmeans(v, 7, 2)).rejects.toThrow(/multiple of dim/);
    await expect(kmeans(v, 3, 41)).rejects.toThrow(InvalidArgumentError);
  });
});

describe('PhraseMatcher', () => {
  it('matches whole tokens case-insensitively, with punctuation and CJK runs', async () => {
    const m = await PhraseMatcher.build([
      'PARIS AGREEMENT',
      'PARISIAN',
      'C++ TEMPLATES',
      'U.S. CONGRESS',
      '北京 大学',
      '北京大学',
    ]);
    expect(m.nameCount).toBe(6);
    expect(m.find(['paris'])).toEqual([0]);
    expect(m.find(['c++', 'U.S.'])).toEqual([2, 3]);
    expect(m.find(['北京'])).toEqual([4]);
    expect(m.find(['', '  '])).toEqual([]);
    m.close();
    expect(() => m.find(['paris'])).toThrow(ClosedError);
    const withIds = await PhraseMatcher.buildWithIds([
      ['e1', 'Marie Curie'],
      ['e2', 'Pierre Curie'],
    ]);
    expect(withIds.find(['CURIE'])).toEqual(['e1', 'e2']);
    withIds.close();
    expect(phraseTokens('C++ 和 U.S.')).toEqual(['c', '+', '+', '和', 'u', '.', 's', '.']);
  });
});
