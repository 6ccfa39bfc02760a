import { describe, expect, it } from 'vitest';
import { adjacency, denseEdges, toDense } from '../../ts/model/adjacency.js';
import { BaseGraph } from '../../ts/model/graph-store.js';
import { insertText } from '../../ts/model/insert-text.js';
import { rankMaterial, trimToBudget } from '../../ts/model/material.js';
import type { SemanticUnitRow, TextRow } from '../../ts/model/types.js';

const text = (hashId: string, generation: number): TextRow => ({
  textId: 1,
  hashId,
  context: hashId,
  docId: 1,
  docHashId: 'd',
  chunkIndex: 0,
  tokenCount: 1,
  embedding: null,
  generation,
});
const unit = (hashId: string, textHashIds: string[], updatedGeneration: number): SemanticUnitRow => ({
  hashId,
  humanReadableId: 1,
  context: hashId,
  textHashId: textHashIds[0]!,
  textHashIds,
  weight: 1,
  embedding: null,
  generation: 1,
  updatedGeneration,
});

describe('insertText (docs/method.md §3.8)', () => {
  it('adds text nodes of generation g and links touched units to unlinked chunks', () => {
    const g = new BaseGraph();
    g.bumpNode('t1', 'text', 1);
    g.bumpNode('u1', 'semantic_unit', 1);
    g.ensureEdge('u1', 't1', 1);
    g.bumpNode('u2', 'semantic_unit', 2);
    const r = insertText(
      2,
      g,
      [text('t1', 1), text('t2', 2)],
      [unit('u1', ['t1', 't2'], 2), unit('u2', ['t2'], 2)],
    );
    expect(r).toEqual({ textNodes: 1, edges: 2 });
    expect(g.nodes.get('t2')).toMatchObject({ type: 'text', weight: 1, generation: 2 });
    expect(g.edges.get('t1|u1')?.weight).toBe(1); // existing edge not incremented
    expect(g.hasEdge('u1', 't2') && g.hasEdge('u2', 't2')).toBe(true);
  });
});

describe('material ranking and budget (docs/method.md §3.5)', () => {
  it('ranks by primary desc, secondary desc, id asc and skips items that do not fit', () => {
    const items = [
      { id: 'b', text: 'x'.repeat(5), primary: 1, secondary: 1 },
      { id: 'a', text: 'x'.repeat(5), primary: 1, secondary: 1 },
      { id: 'c', text: 'x'.repeat(50), primary: 3, secondary: 0 },
      { id: 'd', text: 'x'.repeat(2), primary: 1, secondary: 2 },
    ];
    const ranked = rankMaterial(items);
    expect(ranked.map((i) => i.id)).toEqual(['c', 'd', 'a', 'b']);
    const count = (ts: string[]) => ts.map((t) => t.length);
    expect(trimToBudget(ranked, 10, count).map((i) => i.id)).toEqual(['d', 'a']);
  });
});

describe('dense views', () => {
  it('numbers nodes in ascending id order and keeps only induced edges', () => {
    const g = new BaseGraph();
    for (const id of ['c', 'a', 'b']) g.bumpNode(id, 'entity', 1);
    g.bumpNode('z', 'text', 1);
    g.bumpEdge('a', 'b', 1, 2);
    g.bumpEdge('c', 'z', 1);
    const d = toDense(g, (_id, t) => t === 'entity');
    expect(d.ids).toEqual(['a', 'b', 'c']);
    expect([...d.src]).toEqual([0]);
    expect([...d.dst]).toEqual([1]);
    expect([...d.weight]).toEqual([2]);
    expect(adjacency(g).get('z')).toEqual([{ id: 'c', weight: 1 }]);
  });

  it('lists the edges in (source, target) id order whatever order they were added in', () => {
    const g = new BaseGraph();
    for (const id of ['e', 'd', 'c', 'b', 'a']) g.bumpNode(id, 'entity', 1);
    // Added out of order, as a sync appends its edges after the committed ones.
    g.bumpEdge('d', 'e', 1, 5);
    g.bumpEdge('a', 'c', 1, 2);
    g.bumpEdge('b', 'd', 2, 4);
    g.bumpEdge('a', 'b', 2, 1);
    g.bumpEdge('c', 'e', 2, 3);
    const d = toDense(g);
    expect(d.ids).toEqual(['a', 'b', 'c', 'd', 'e']);
    const rows = [...d.src].map((s, i) => `${d.ids[s]}-${d.ids[d.dst[i]!]}:${d.weight[i]}`);
    expect(rows).toEqual(['a-b:1', 'a-c:2', 'b-d:4', 'c-e:3', 'd-e:5']);
    expect([...d.types]).toEqual([...Array(5)].map(() => d.types[0]));
    // The same order over a subset (the community graph's).
    const some = denseEdges(g, new Map(['a', 'c', 'e'].map((id, i) => [id, i])));
    expect([...some.src]).toEqual([0, 1]);
    expect([...some.dst]).toEqual([1, 2]);
    expect([...some.weight]).toEqual([2, 3]);
  });

  it('gives the lists of the nodes asked for, each as the whole adjacency has it', () => {
    const g = new BaseGraph();
    for (const id of ['a', 'b', 'c', 'd']) g.bumpNode(id, 'entity', 1);
    g.bumpEdge('a', 'b', 1, 2);
    g.bumpEdge('c', 'a', 1, 3);
    g.bumpEdge('b', 'c', 1);
    g.bumpEdge('a', 'd', 1, 5);
    const all = adjacency(g);
    const some = adjacency(g, new Set(['a', 'c']));
    expect([...some.keys()].sort()).toEqual(['a', 'c']);
    expect(some.get('a')).toEqual(all.get('a'));
    expect(some.get('a')!.map((n) => n.id)).toEqual(['b', 'c', 'd']);
    expect(some.get('c')).toEqual(all.get('c'));
  });
});
