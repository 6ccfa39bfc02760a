import { describe, expect, it } from 'vitest';
import { IndexFileError } from '../../ts/errors.js';
import {
  applyGraphDelta,
  copyGraphRows,
  diffGraph,
  graphDeltaSize,
  parseGraphDelta,
  serializeGraphDelta,
  trackedGraphDelta,
} from '../../ts/index-io/graph-delta.js';
import { BaseGraph } from '../../ts/model/graph-store.js';
import type { NodeType } from '../../ts/model/types.js';

const TYPES: NodeType[] = ['text', 'semantic_unit', 'entity', 'relationship', 'attribute'];

/**
 * A random graph over ids n0…n29, and an edit of it (weights, generations, nodes and edges
 * added or removed). `after` records its changes from the copy of `before` on.
 */
function graphs(seed: number): { before: BaseGraph; after: BaseGraph } {
  let s = seed;
  const next = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  const before = new BaseGraph();
  for (let i = 0; i < 30; i++) {
    if (next() < 0.7) before.bumpNode(`n${i}`, TYPES[i % TYPES.length]!, 1, 1 + Math.floor(next() * 3));
  }
  const ids = [...before.nodes.keys()];
  for (let k = 0; k < 40; k++) {
    const a = ids[Math.floor(next() * ids.length)]!;
    const b = ids[Math.floor(next() * ids.length)]!;
    if (a !== b) before.bumpEdge(a, b, 1);
  }
  const after = new BaseGraph();
  for (const [id, n] of copyGraphRows(before).nodes) after.nodes.set(id, n);
  for (const [key, e] of copyGraphRows(before).edges) after.edges.set(key, e);
  after.trackChanges();
  for (const id of ids) {
    const r = next();
    if (r < 0.15) after.nodes.delete(id);
    else if (r < 0.3) after.bumpNode(id, after.nodes.get(id)!.type, 2);
    else if (r < 0.4) after.touch(id, 2);
    else if (r < 0.45) after.editNode(id)!.weight += 2;
    else if (r < 0.5) {
      // Changed and changed back: not in the delta.
      after.editNode(id)!.weight += 1;
      after.editNode(id)!.weight -= 1;
    }
  }
  for (const key of [...after.edges.keys()]) {
    const r = next();
    if (r < 0.2) after.edges.delete(key);
    else if (r < 0.35) after.editEdge(key)!.weight += 1;
    else if (r < 0.4) after.bumpEdge(...(key.split('|') as [string, string]), 2);
  }
  for (let i = 30; i < 35; i++) after.bumpNode(`n${i}`, 'high_level_element', 2);
  after.bumpEdge('n30', 'n31', 2);
  // Added and removed again within the same changes: not in the delta either.
  after.bumpNode('n99', 'entity', 2);
  after.bumpEdge('n99', 'n30', 2);
  after.nodes.delete('n99');
  after.edges.delete('n30|n99');
  return { before, after };
}

const rows = (g: BaseGraph) => JSON.stringify([[...g.nodes].sort(), [...g.edges].sort()]);

describe('cache/graph_delta.json (ts/index-io/graph-delta.ts)', () => {
  it('turns the committed tables into the graph, through its file, for random edits', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const { before, after } = graphs(seed);
      const delta = diffGraph(before, after);
      const text = serializeGraphDelta(delta);
      const applied = new BaseGraph();
      for (const [id, n] of copyGraphRows(before).nodes) applied.nodes.set(id, n);
      for (const [key, e] of copyGraphRows(before).edges) applied.edges.set(key, e);
      applyGraphDelta(applied, parseGraphDelta(text, 'cache/graph_delta.json'));
      expect(rows(applied), `seed ${seed}`).toBe(rows(after));
      // Only what changed is listed, and the same graphs give the same bytes.
      expect(graphDeltaSize(delta)).toBeLessThan(before.nodes.size + before.edges.size + 10);
      expect(serializeGraphDelta(diffGraph(before, after))).toBe(text);
    }
    const { before } = graphs(7);
    expect(graphDeltaSize(diffGraph(before, before))).toBe(0);
  });

  it('the changes a graph records since trackChanges are the whole comparison, row for row', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const { before, after } = graphs(seed);
      expect(serializeGraphDelta(trackedGraphDelta(after)), `seed ${seed}`).toBe(
        serializeGraphDelta(diffGraph(before, after)),
      );
    }
    // Restarting makes the current rows the base.
    const { after } = graphs(3);
    after.trackChanges();
    expect(graphDeltaSize(trackedGraphDelta(after))).toBe(0);
    after.touch([...after.nodes.keys()][0]!, 9);
    expect(trackedGraphDelta(after).nodes).toHaveLength(1);
  });

  it('names the file and what is wrong when it is damaged', () => {
    const label = 'cache/graph_delta.json';
    const parse = (text: string) => () => parseGraphDelta(text, label);
    expect(parse('{"version":1')).toThrow(IndexFileError);
    expect(parse('{"version":1')).toThrow(/cache\/graph_delta\.json: not valid JSON/);
    expect(parse('{"version":2}')).toThrow(/expected an object with version 1/);
    expect(
      parse('{"version":1,"nodes":[["a","planet",1,1,1]],"removed_nodes":[],"edges":[],"removed_edges":[]}'),
    ).toThrow(/nodes: expected \[id, type, weight, generation, updated_generation\]/);
    expect(
      parse('{"version":1,"nodes":[],"removed_nodes":[],"edges":[["a","b","1",1]],"removed_edges":[]}'),
    ).toThrow(/edges: expected \[source, target, weight, generation\]/);
    expect(parse('{"version":1,"nodes":[],"removed_nodes":[],"edges":[]}')).toThrow(
      /removed_edges must be a list/,
    );
  });
});
