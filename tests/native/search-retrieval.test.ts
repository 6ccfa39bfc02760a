/**
 * Retrieval on small hand-built indexes (docs/method.md §6.1–§6.6): a case computed by hand,
 * then the Curie index against a plain re-implementation of the method (search graph,
 * lazy walk / restart, eligibility, typed quotas) under several configurations, then
 * single behaviours: retired labels, phrase matching, entity → attribute, title → element,
 * k clamping, zero quotas, no seed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeType } from '../../ts/model/types.js';
import { CONTEXT_SECTION_ORDER } from '../../ts/search/context.js';
import { LoadedIndex } from '../../ts/search/loaded-index.js';
import { type Retrieval, retrieve, type SearchParams } from '../../ts/search/retrieve.js';
import { curieSpec, type IndexSpec, writeSearchIndex } from '../helpers/search-index.js';

const dirs: string[] = [];
const loaded: LoadedIndex[] = [];

async function load(spec: IndexSpec, unbalanceAdjust: boolean): Promise<LoadedIndex> {
  const root = mkdtempSync(join(tmpdir(), 'noderag-search-'));
  dirs.push(root);
  await writeSearchIndex(root, spec);
  const index = await LoadedIndex.load(root, { dim: spec.dim, unbalanceAdjust });
  loaded.push(index);
  return index;
}

afterAll(() => {
  for (const i of loaded) i.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type ParamChanges = Partial<Omit<SearchParams, 'quotas' | 'propagation' | 'bridge'>> & {
  bridge?: Partial<SearchParams['bridge']>;
  quotas?: Partial<SearchParams['quotas']>;
  propagation?: Partial<SearchParams['propagation']>;
};

function params(changes: ParamChanges = {}): SearchParams {
  return {
    hnswResults: 10,
    efSearch: 64,
    similarityWeight: 1,
    accuracyWeight: 1,
    ...changes,
    propagation: { alpha: 0.5, maxIter: 2, mode: 'walk', ...changes.propagation },
    quotas: { crossNode: 10, entity: 10, relationship: 30, title: 10, ...changes.quotas },
    // The §6.2–6.6 checks below run without the bridge step; it has its own tests.
    bridge: { passages: 0, maxDegree: 10, ...changes.bridge },
  };
}

const summary = (r: Retrieval) => r.items.map((i) => `${i.type}:${i.id}`);

describe('a propagation computed by hand', () => {
  // E—U1 (2), E—U2, E—A, U1—T1; no similarity edges, no adjustment. Seed: the match on E.
  const spec: IndexSpec = {
    dim: 2,
    nodes: [
      { id: 'e-1', type: 'entity', text: 'ALPHA', chunk: 't-1' },
      { id: 'a-1', type: 'attribute', text: 'Alpha profile.', entity: 'e-1', vector: [1, 0] },
      { id: 'u-1', type: 'semantic_unit', text: 'Alpha did one thing.', chunk: 't-1', vector: [0, 1] },
      { id: 'u-2', type: 'semantic_unit', text: 'Alpha did another.', chunk: 't-1', vector: [1, 1] },
      { id: 't-1', type: 'text', text: 'Alpha did one thing.', doc: 'alpha.txt', vector: [2, 1] },
    ],
    edges: [
      ['e-1', 'u-1', 2],
      ['e-1', 'u-2'],
      ['e-1', 'a-1'],
      ['u-1', 't-1'],
    ],
    similarity: [],
  };
  let index: LoadedIndex;
  beforeAll(async () => {
    index = await load(spec, false);
  });
  const ask = (changes: Parameters<typeof params>[0]) =>
    retrieve(index, { vector: null, elements: ['alpha'] }, params({ hnswResults: 0, ...changes }));

  it('one step: E 1/2, U1 1/4, A and U2 1/8 (tie broken by id); T1 is two hops away', () => {
    const r = ask({ propagation: { alpha: 0.5, maxIter: 1 }, quotas: { crossNode: 10, entity: 1 } });
    expect(r.seeds).toEqual({ hits: [], matches: ['e-1'] });
    // E brings its attribute; A itself is then skipped; U1 and U2 fill the cross quota.
    expect(summary(r)).toEqual(['attribute:a-1', 'semantic_unit:u-1', 'semantic_unit:u-2']);
    const score = Object.fromEntries(r.items.map((i) => [i.id, i.score]));
    expect(score['a-1']).toBeCloseTo(0.5, 12); // the entity's score
    expect(score['u-1']).toBeCloseTo(0.25, 12);
    expect(score['u-2']).toBeCloseTo(0.125, 12);
    expect(r.items.every((i) => i.origin === 'propagation' && i.distance === null)).toBe(true);
    expect(r.items.find((i) => i.id === 'u-1')?.document).toBe('alpha.txt');
  });

  it('two steps reach T1 with 1/24; its units then leave the context (no text twice)', () => {
    const r = ask({ propagation: { alpha: 0.5, maxIter: 2 } });
    expect(summary(r)).toEqual(['attribute:a-1', 'text:t-1']);
    expect(r.items.find((i) => i.id === 't-1')?.score).toBeCloseTo(1 / 24, 12);
    expect(r.items.find((i) => i.id === 'a-1')?.score).toBeCloseTo(0.25 + 5 / 24, 12);
  });

  it('cross_node = 1 keeps the best cross node only; Enode = 0 lets A in as a cross node', () => {
    expect(summary(ask({ propagation: { alpha: 0.5, maxIter: 1 }, quotas: { crossNode: 1 } }))).toEqual([
      'attribute:a-1',
      'semantic_unit:u-1',
    ]);
    const r = ask({ propagation: { alpha: 0.5, maxIter: 1 }, quotas: { crossNode: 2, entity: 0 } });
    expect(summary(r)).toEqual(['attribute:a-1', 'semantic_unit:u-1']);
    expect(r.items[0]!.score).toBeCloseTo(0.125, 12); // its own score now
  });

  it('ppr_max_iter = 0 ranks the seeds only', () => {
    const r = ask({ propagation: { alpha: 0.5, maxIter: 0 } });
    expect(summary(r)).toEqual(['attribute:a-1']);
  });
});

// ----------------------------------------------------------------------------- reference

interface RefQuery {
  vector: number[] | null;
  /** The entity and title ids the elements must match (checked against the matcher). */
  matches: string[];
  elements: string[];
}

/** The method, written out plainly over the spec (no native code). */
function reference(spec: IndexSpec, q: RefQuery, p: SearchParams, unbalanceAdjust: boolean) {
  const byId = new Map(spec.nodes.map((n) => [n.id, n]));
  const ids = [...byId.keys()].sort();
  // Hits: exact search over the active vectors, ties by id.
  const vectorNodes = spec.nodes.filter((n) => n.vector);
  const k = Math.min(p.hnswResults, vectorNodes.length);
  const dist = (v: readonly number[]) => v.reduce((s, x, i) => s + (x - q.vector![i]!) ** 2, 0);
  const hits = q.vector
    ? vectorNodes
        .map((n) => ({ id: n.id, d: dist(n.vector!) }))
        .sort((a, b) => a.d - b.d || (a.id < b.id ? -1 : 1))
        .slice(0, k)
        .map((h) => h.id)
    : [];

  // Search graph: base edges, similarity +1 or new 1, then min(w, 1/deg(u), 1/deg(v)).
  const adj = new Map<string, Map<string, number>>(ids.map((id) => [id, new Map()]));
  const add = (a: string, b: string, w: number) => {
    adj.get(a)!.set(b, (adj.get(a)!.get(b) ?? 0) + w);
    adj.get(b)!.set(a, (adj.get(b)!.get(a) ?? 0) + w);
  };
  for (const [a, b, w] of spec.edges) add(a, b, w ?? 1);
  for (const [a, b] of spec.similarity ?? []) add(a, b, 1);
  if (unbalanceAdjust) {
    const deg = new Map(ids.map((id) => [id, adj.get(id)!.size]));
    for (const [a, nb] of adj)
      for (const [b, w] of nb) nb.set(b, Math.min(w, 1 / deg.get(a)!, 1 / deg.get(b)!));
  }
  const colSum = new Map(ids.map((id) => [id, [...adj.get(id)!.values()].reduce((s, w) => s + w, 0)]));

  // Seeds and the walk.
  const seeds = new Map<string, number>();
  for (const h of hits) if (p.similarityWeight > 0) seeds.set(h, p.similarityWeight);
  for (const m of q.matches) if (p.accuracyWeight > 0) seeds.set(m, p.accuracyWeight);
  const total = [...seeds.values()].reduce((s, w) => s + w, 0);
  const p0 = new Map(ids.map((id) => [id, (seeds.get(id) ?? 0) / (total || 1)]));
  let cur = new Map(p0);
  const { alpha, maxIter, mode } = p.propagation;
  let steps = 0;
  for (let s = 1; s <= maxIter && seeds.size > 0; s++) {
    const next = new Map(
      ids.map((id) => [id, (1 - alpha) * (mode === 'restart' ? p0.get(id)! : cur.get(id)!)]),
    );
    for (const j of ids) {
      const pj = cur.get(j)!;
      if (pj === 0) continue;
      if (colSum.get(j)! > 0) {
        for (const [i, w] of adj.get(j)!) next.set(i, next.get(i)! + (alpha * w * pj) / colSum.get(j)!);
      } else {
        for (const i of ids) if (i !== j) next.set(i, next.get(i)! + (alpha * pj) / (ids.length - 1));
      }
    }
    const delta = Math.sqrt(ids.reduce((s2, id) => s2 + (next.get(id)! - cur.get(id)!) ** 2, 0));
    cur = next;
    steps = s;
    if (delta < 1e-5) break;
  }
  // Eligible: positive and within `steps` hops of a seed.
  const hops = new Map<string, number>([...seeds.keys()].map((s) => [s, 0]));
  let frontier = [...seeds.keys()];
  for (let h = 1; h <= steps; h++) {
    const nextFrontier: string[] = [];
    for (const u of frontier)
      for (const v of adj.get(u)!.keys())
        if (!hops.has(v)) {
          hops.set(v, h);
          nextFrontier.push(v);
        }
    frontier = nextFrontier;
  }
  const ranking = ids
    .filter((id) => seeds.size > 0 && cur.get(id)! > 0 && hops.has(id))
    .sort((a, b) => cur.get(b)! - cur.get(a)! || (a < b ? -1 : 1));

  // Selection.
  const list: string[] = [];
  for (const h of hits) if (!list.includes(h)) list.push(h);
  const rels: string[] = [];
  const used = { cross: 0, entity: 0, rel: 0, title: 0 };
  const { crossNode, entity, relationship, title } = p.quotas;
  for (const id of ranking) {
    if (used.cross >= crossNode && used.entity >= entity && used.rel >= relationship && used.title >= title)
      break;
    if (list.includes(id)) continue;
    const n = byId.get(id)!;
    if (n.type === 'entity') {
      if (used.entity++ >= entity) continue;
      const attr = spec.nodes.find((a) => a.type === 'attribute' && a.entity === id);
      if (attr && !list.includes(attr.id)) list.push(attr.id);
    } else if (n.type === 'relationship') {
      if (used.rel++ >= relationship) continue;
      rels.push(id);
    } else if (n.type === 'high_level_element_title') {
      if (used.title++ >= title) continue;
      if (!list.includes(n.element!)) list.push(n.element!);
    } else {
      if (used.cross++ >= crossNode) continue;
      list.push(id);
    }
  }
  const typeOf = (id: string) => byId.get(id)!.type;
  // §6.6: a semantic unit whose chunk is in the context is left out (no text twice).
  const deduped = list.filter((id) => {
    const n = byId.get(id)!;
    return n.type !== 'semantic_unit' || !n.chunk || !list.includes(n.chunk);
  });
  const ordered: string[] = [];
  for (const section of CONTEXT_SECTION_ORDER)
    for (const id of [...deduped, ...rels]) if (typeOf(id) === section) ordered.push(id);
  return { hits, items: ordered.map((id) => `${typeOf(id)}:${id}`), scores: cur };
}

describe('the Curie index against a plain re-implementation of §6', () => {
  const curie = curieSpec();
  // Similarity edges fixed by hand, so the reference knows them.
  const similarity: [string, string][] = [
    ['u-born', 'u-moved'],
    ['u-born', 'a-marie'],
    ['u-married', 'h-paris'],
    ['t-a', 'u-born'],
    ['u-capital', 'a-warsaw'],
    ['t-c', 'u-cafe'],
    ['u-married', 'e-marie'], // also a base edge: weight 2 + 1
  ];
  const spec: IndexSpec = { ...curie, similarity };
  const withoutRetired: IndexSpec = {
    ...spec,
    nodes: spec.nodes.map(({ retiredVector: _r, ...n }) => n),
  };
  let adjusted: LoadedIndex;
  let plain: LoadedIndex;
  beforeAll(async () => {
    adjusted = await load(spec, true);
    plain = await load(spec, false);
  });

  const cases: { name: string; q: RefQuery; p: SearchParams; adjust: boolean }[] = [
    {
      name: 'defaults, hits and matches',
      q: {
        vector: [0.9, 0.1, 0, 0],
        elements: ['Paris', 'Marie Curie'],
        matches: ['e-marie', 'e-paris', 'ht-paris'],
      },
      p: params(),
      adjust: true,
    },
    {
      name: 'tight quotas, no adjustment',
      q: { vector: [0.2, 0.8, 0.1, 0], elements: ['Warsaw'], matches: ['e-warsaw'] },
      p: params({ hnswResults: 2, quotas: { crossNode: 3, entity: 1, relationship: 1, title: 1 } }),
      adjust: false,
    },
    {
      name: 'true personalized PageRank',
      q: {
        vector: [0, 0.9, 0.1, 0],
        elements: ['Pierre Curie', 'Poland'],
        matches: ['e-pierre', 'e-poland'],
      },
      p: params({
        hnswResults: 3,
        propagation: { alpha: 0.85, maxIter: 30, mode: 'restart' },
        quotas: { crossNode: 4 },
      }),
      adjust: true,
    },
    {
      name: 'matches only, weighted',
      q: { vector: null, elements: ['the curies'], matches: ['ht-paris'] },
      p: params({ hnswResults: 0, accuracyWeight: 2, propagation: { alpha: 0.7, maxIter: 3 } }),
      adjust: true,
    },
    {
      name: 'hits only, three steps',
      q: { vector: [0, 0, 1, 0], elements: [], matches: [] },
      p: params({
        hnswResults: 1,
        propagation: { alpha: 0.5, maxIter: 3 },
        quotas: { crossNode: 5, relationship: 2 },
      }),
      adjust: false,
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const index = c.adjust ? adjusted : plain;
      const vector = c.q.vector ? Float32Array.from(c.q.vector) : null;
      const r = retrieve(index, { vector, elements: c.q.elements }, c.p);
      const ref = reference(withoutRetired, c.q, c.p, c.adjust);
      expect(r.seeds.matches).toEqual(c.q.matches);
      expect(r.seeds.hits).toEqual(ref.hits);
      expect(summary(r)).toEqual(ref.items);
      for (const item of r.items) {
        if (
          item.origin === 'propagation' &&
          item.type !== 'attribute' &&
          item.type !== 'high_level_element'
        ) {
          expect(item.score).toBeCloseTo(ref.scores.get(item.id)!, 10);
        }
      }
      expect(r.items.length).toBeGreaterThan(0);
    });
  }
});

describe('single behaviours on the Curie index', () => {
  let index: LoadedIndex;
  beforeAll(async () => {
    index = await load(curieSpec(), true);
  });
  const ask = (vector: number[] | null, elements: string[], changes: Parameters<typeof params>[0] = {}) =>
    retrieve(index, { vector: vector && Float32Array.from(vector), elements }, params(changes));
  const ofType = (r: Retrieval, t: NodeType) => r.items.filter((i) => i.type === t).map((i) => i.id);

  it('a retired label is never a hit (its old vector equals the query)', () => {
    const r = ask([0, 0, 0, 1], [], { hnswResults: 1 });
    // Old a-warsaw vector is at distance 0 but retired; h-paris (1.39) is the nearest active one.
    expect(r.seeds.hits).toEqual(['h-paris']);
    expect(r.items.find((i) => i.id === 'h-paris')).toMatchObject({ origin: 'vector', score: null });
    expect(r.items.find((i) => i.id === 'h-paris')!.distance).toBeCloseTo(1.39, 5);
    expect(index.activeVectors).toBe(11);
    expect(index.labelNode.length).toBe(12);
  });

  it('hits are ordered by distance, then id; k is clamped to the active vectors', () => {
    const r = ask([0, 0, 0, 0], [], {
      hnswResults: 1000,
      quotas: { crossNode: 0, entity: 0, relationship: 0, title: 0 },
    });
    expect(r.seeds.hits).toHaveLength(11);
    const d = r.items.filter((i) => i.origin === 'vector').map((i) => [i.distance!, i.id] as const);
    // Every hit is an item, but units whose chunk is a hit too (no text twice).
    const unitsOfHitChunks = r.seeds.hits.filter((id) => id.startsWith('u-') && !d.some((x) => x[1] === id));
    expect(d.length + unitsOfHitChunks.length).toBe(11);
    expect(unitsOfHitChunks.length).toBeGreaterThan(0);
    // Items are grouped by section; within the hit list, distance then id.
    const sorted = [...d].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1)).map((x) => x[1]);
    expect(r.seeds.hits.filter((id) => !unitsOfHitChunks.includes(id))).toEqual(sorted);
  });

  it('exact matching: whole phrases, case-insensitive, names and titles only', () => {
    expect(ask(null, ['paris']).seeds.matches).toEqual(['e-paris', 'ht-paris']);
    expect(ask(null, ['PARISIAN']).seeds.matches).toEqual(['e-parisian']);
    // "curie" is not the token "curies" of the title "The Curies in Paris".
    expect(ask(null, ['curie']).seeds.matches).toEqual(['e-marie', 'e-pierre']);
    expect(ask(null, ['curies in']).seeds.matches).toEqual(['ht-paris']);
    expect(ask(null, ['', '  ', 'Warsaw', 'warsaw']).seeds.matches).toEqual(['e-warsaw']);
    expect(ask(null, ['born']).seeds.matches).toEqual([]); // unit and relationship texts are not names
  });

  it('an entity brings its attribute; an entity without one brings nothing', () => {
    // One step from an entity reaches no other entity; two steps reach WARSAW through a unit.
    const onlyEntities = { quotas: { crossNode: 0, relationship: 0, title: 0, entity: 10 } };
    const step = (maxIter: number) => ({ ...onlyEntities, propagation: { alpha: 0.5, maxIter } });
    expect(summary(ask(null, ['Marie Curie'], step(1)))).toEqual(['attribute:a-marie']);
    expect(summary(ask(null, ['Marie Curie'], step(2)))).toEqual(['attribute:a-marie', 'attribute:a-warsaw']);
    expect(summary(ask(null, ['Pierre Curie'], step(1)))).toEqual([]);
  });

  it('a title brings its element; relationships keep ranking order', () => {
    const r = ask(null, ['The Curies'], { quotas: { crossNode: 0, entity: 0, relationship: 0, title: 1 } });
    expect(summary(r)).toEqual(['high_level_element:h-paris']);
    const rels = ask(null, ['Marie Curie'], {
      quotas: { crossNode: 0, entity: 0, title: 0, relationship: 30 },
    });
    const scores = rels.items.map((i) => i.score!);
    expect(ofType(rels, 'relationship').length).toBeGreaterThan(1);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('quotas of 0 leave the hits alone; no seed gives the empty retrieval', () => {
    const none = { quotas: { crossNode: 0, entity: 0, relationship: 0, title: 0 } };
    // The two hits are u-born and its own chunk t-a: the unit adds nothing and is left out.
    expect(summary(ask([1, 0, 0, 0], [], { ...none, hnswResults: 2 }))).toEqual(['text:t-a']);
    const empty = ask(null, ['Nobody Here'], { hnswResults: 0 });
    expect(empty.items).toEqual([]);
    expect(empty.context).toBe('');
  });

  it('sources: chunks name their document, attributes their entity’s, elements none', () => {
    const r = ask([1, 0, 0, 0], ['Marie Curie', 'The Curies'], { hnswResults: 11 });
    const doc = Object.fromEntries(r.items.map((i) => [i.id, i.document]));
    expect(doc['t-b']).toBe('b.txt');
    expect(doc['t-c']).toBe('c.txt');
    expect(doc['a-marie']).toBe('a.txt');
    expect(doc['h-paris']).toBeNull();
  });
});

describe('bridge passages (§6.7)', () => {
  // t-kerry names the town YOUNG (a specific entity: few neighbours) and the word AMERICAN
  // (a generic one: six filler units mention it). t-young is about the town; t-far only
  // shares AMERICAN; t-young2 is about the town too but farther from the question.
  const fillers = Array.from({ length: 6 }, (_, i) => i);
  const spec: IndexSpec = {
    dim: 2,
    nodes: [
      { id: 't-kerry', type: 'text', text: 'Kerry was born in Young.', doc: 'kerry.txt', vector: [1, 0] },
      {
        id: 'u-kerry',
        type: 'semantic_unit',
        text: 'Kerry was born in Young, an American-style town.',
        chunk: 't-kerry',
      },
      {
        id: 't-young',
        type: 'text',
        text: 'Young had 6,960 people in 2011.',
        doc: 'young.txt',
        vector: [0.6, 0.8],
      },
      { id: 'u-young', type: 'semantic_unit', text: 'Young had 6,960 people.', chunk: 't-young' },
      {
        id: 't-young2',
        type: 'text',
        text: 'Young lies on a river.',
        doc: 'young2.txt',
        vector: [-0.6, 0.8],
      },
      { id: 'u-young2', type: 'semantic_unit', text: 'Young lies on a river.', chunk: 't-young2' },
      { id: 't-far', type: 'text', text: 'An American film.', doc: 'far.txt', vector: [0.8, 0.6] },
      { id: 'u-far', type: 'semantic_unit', text: 'An American film.', chunk: 't-far' },
      { id: 'e-young', type: 'entity', text: 'YOUNG', chunk: 't-kerry' },
      { id: 'e-american', type: 'entity', text: 'AMERICAN', chunk: 't-kerry' },
      ...fillers.map((i) => ({
        id: `u-filler-${i}`,
        type: 'semantic_unit' as const,
        text: `American thing ${i}.`,
        chunk: 't-far',
      })),
    ],
    edges: [
      ['u-kerry', 't-kerry'],
      ['u-young', 't-young'],
      ['u-young2', 't-young2'],
      ['u-far', 't-far'],
      ['e-young', 'u-kerry'],
      ['e-young', 'u-young'],
      ['e-young', 'u-young2'],
      ['e-american', 'u-kerry'],
      ['e-american', 'u-far'],
      ...fillers.map((i) => ['e-american', `u-filler-${i}`] as [string, string]),
    ],
    similarity: [],
  };
  let index: LoadedIndex;
  beforeAll(async () => {
    index = await load(spec, false);
  });
  // One hit (t-kerry, the closest text), no propagation: the context is t-kerry alone.
  const ask = (passages: number, maxDegree: number) =>
    retrieve(
      index,
      { vector: Float32Array.from([1, 0]), elements: [] },
      params({
        hnswResults: 1,
        quotas: { crossNode: 0, entity: 0, relationship: 0, title: 0 },
        bridge: { passages, maxDegree },
      }),
    );

  it('adds the passages of the specific entities the context names, closest to the question first', () => {
    const r = ask(1, 5);
    expect(summary(r)).toEqual(['text:t-kerry', 'text:t-young']);
    const bridge = r.items.find((i) => i.id === 't-young')!;
    expect(bridge.origin).toBe('bridge');
    expect(bridge.document).toBe('young.txt');
    expect(summary(ask(2, 5))).toEqual(['text:t-kerry', 'text:t-young', 'text:t-young2']);
  });

  it('leaves out generic entities (more neighbours than bridge_max_degree); 0 passages disables it', () => {
    // AMERICAN has 8 neighbours: t-far comes only once the cap lets AMERICAN through.
    expect(summary(ask(5, 5))).not.toContain('text:t-far');
    expect(summary(ask(5, 8))).toContain('text:t-far');
    expect(summary(ask(0, 100))).toEqual(['text:t-kerry']);
  });
});
