import { describe, expect, it } from 'vitest';
import { BaseGraph } from '../../ts/model/graph-store.js';
import {
  communitiesWithMembers,
  communityNodeIds,
  linkMembers,
  mergeElements,
  reformCommunities,
} from '../../ts/model/summary.js';
import { emptyCounters } from '../../ts/model/types.js';
import { jsTextOps } from '../helpers/js-text-ops.js';

const ops = jsTextOps;

function sampleGraph(): BaseGraph {
  const g = new BaseGraph();
  g.bumpNode('u1', 'semantic_unit', 1);
  g.bumpNode('u2', 'semantic_unit', 1);
  g.bumpNode('e1', 'entity', 1);
  g.bumpNode('e2', 'entity', 1);
  g.bumpNode('lonely', 'entity', 1);
  g.bumpNode('old', 'semantic_unit', 0);
  g.bumpNode('t1', 'text', 1);
  g.bumpEdge('u1', 'e1', 1);
  g.bumpEdge('u2', 'e2', 1);
  g.bumpEdge('e2', 'old', 1);
  g.bumpEdge('u1', 't1', 1);
  return g;
}

describe('summary logic (docs/method.md §3.7)', () => {
  it('community graph: touched typed nodes with an edge among them', () => {
    expect(communityNodeIds(sampleGraph(), 1)).toEqual(['e1', 'e2', 'u1', 'u2']);
  });

  it('community graph: members of communities formed again are left out before isolated nodes', () => {
    // Without u2, e2 has no edge left among the kept nodes.
    expect(communityNodeIds(sampleGraph(), 1, new Set(['u2']))).toEqual(['e1', 'u1']);
  });

  it('forms again a dropped community whose members give its recorded input; not a live or changed one', () => {
    const texts: Record<string, string> = { u1: 'One.', u2: 'Two.', a1: 'Attr.', u3: 'Three.', u4: 'Four.' };
    const hashOf = (t: readonly string[]) => t.join('|');
    const recorded = new Map([
      ['Two.|One.', { members: ['u2', 'u1'] }], // dropped, members unchanged: formed again
      ['Attr.|Gone.', { members: ['a1', 'gone'] }], // a member went
      ['Three.', { members: ['u3'] }], // still has an element: left alone
      ['Four (old).', { members: ['u4'] }], // text changed: input differs
      ['Two.', { members: ['u2'] }], // overlaps the one taken before it (smaller first member id)
      ['old format', { members: [] }],
    ]);
    const out = reformCommunities(
      recorded,
      (hash) => hash === 'Three.',
      (id) => id in texts,
      (members) => members.map((m) => texts[m]!),
      hashOf,
    );
    expect(out).toEqual([
      {
        hash: 'Two.|One.',
        community: { members: ['u1', 'u2'], nodes: new Set(['u1', 'u2']) },
        texts: ['Two.', 'One.'],
      },
    ]);
  });

  it('communities without members are skipped; order by smallest member', () => {
    const g = sampleGraph();
    const ids = ['e1', 'e2', 'u1', 'u2'];
    const comms = communitiesWithMembers(g, ids, [7, 3, 7, 3]);
    expect(comms.map((c) => c.members)).toEqual([['u1'], ['u2']]);
    expect(communitiesWithMembers(g, ['e1', 'e2'], [0, 1])).toEqual([]);
  });

  it('merges elements by description id; repeats gain weight; one title per element', () => {
    const g = sampleGraph();
    const tables = { elements: new Map(), titles: new Map() };
    const counters = emptyCounters();
    const a = mergeElements(
      [
        { title: 'Physics', description: 'Radioactivity research.' },
        { title: 'Physics', description: 'Radioactivity  research. ' }, // same id after norm_text
        { title: ' ', description: 'dropped' },
      ],
      1,
      1,
      g,
      tables,
      counters,
      ops,
    );
    expect(a).toHaveLength(1);
    const again = mergeElements(
      [{ title: 'Other title', description: 'Radioactivity research.' }],
      2,
      1,
      g,
      tables,
      counters,
      ops,
    );
    expect(again).toEqual(a);
    const el = tables.elements.get(a[0]!)!;
    expect(el.weight).toBe(2);
    expect(tables.titles.get(el.titleHashId)).toMatchObject({
      context: 'Physics',
      weight: 2,
      humanReadableId: 1,
    });
    expect(g.hasEdge(a[0]!, el.titleHashId)).toBe(true);
    expect(counters.high_level_element_index).toBe(1);
  });

  it('links every member to each element when no clustering is needed', () => {
    const g = sampleGraph();
    const tables = { elements: new Map(), titles: new Map() };
    const [e] = mergeElements([{ title: 'T', description: 'D' }], 1, 1, g, tables, emptyCounters(), ops);
    const r = linkMembers(
      [{ community: { members: ['u1', 'u2'], nodes: new Set() }, elements: [e!] }],
      39,
      1,
      g,
      tables,
      () => {
        throw new Error('k-means must not run');
      },
    );
    expect(r).toEqual({ edges: 2, clustered: false });
    expect(tables.elements.get(e!)!.relatedNodes).toEqual(['u1', 'u2']);
  });

  it('with clustering links only same-cluster members, else the nearest member', () => {
    const g = sampleGraph();
    const tables = { elements: new Map(), titles: new Map() };
    const [e1, e2] = mergeElements(
      [
        { title: 'A', description: 'first' },
        { title: 'B', description: 'second' },
      ],
      1,
      1,
      g,
      tables,
      emptyCounters(),
      ops,
    );
    const clusterOf = new Map<string, number>([
      ['u1', 0],
      ['u2', 1],
      [e1!, 1],
      [e2!, 2],
    ]);
    const r = linkMembers(
      [{ community: { members: ['u1', 'u2'], nodes: new Set() }, elements: [e1!, e2!] }],
      0, // force clustering
      1,
      g,
      tables,
      () => ({ clusterOf, nearest: () => 'u1' }),
    );
    expect(r.clustered).toBe(true);
    expect(tables.elements.get(e1!)!.relatedNodes).toEqual(['u2']);
    expect(tables.elements.get(e2!)!.relatedNodes).toEqual(['u1']);
  });
});
