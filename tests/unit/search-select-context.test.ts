import { describe, expect, it } from 'vitest';
import { NODE_TYPES } from '../../ts/model/types.js';
import {
  type ContextItem,
  formatContext,
  formatContextJson,
  orderForContext,
  sectionHeader,
} from '../../ts/search/context.js';
import { NodeMarks } from '../../ts/search/node-marks.js';
import { type RankedNode, selectNodes, selectRanked } from '../../ts/search/select.js';

describe('selectNodes (docs/method.md §6.5)', () => {
  const attr = new Map([['e1', 'a1']]);
  const elem = new Map([['t1', 'h1']]);
  const select = (
    hits: string[],
    ranking: RankedNode[],
    q = { crossNode: 2, entity: 1, relationship: 1, title: 1 },
  ) =>
    selectNodes(
      hits,
      ranking,
      q,
      (id) => attr.get(id),
      (id) => elem.get(id),
    );

  it('fills quotas in ranking order, mapping entities to attributes and titles to elements', () => {
    const s = select(
      ['u0'],
      [
        { id: 'u0', type: 'semantic_unit' }, // already a hit: skipped, does not use quota
        { id: 'e1', type: 'entity' },
        { id: 'r1', type: 'relationship' },
        { id: 'e2', type: 'entity' }, // entity quota full
        { id: 't1', type: 'high_level_element_title' },
        { id: 'x1', type: 'text' },
        { id: 'r2', type: 'relationship' }, // relationship quota full
        { id: 'u1', type: 'semantic_unit' },
        { id: 'u2', type: 'semantic_unit' }, // cross quota full
      ],
    );
    expect(s.searchList).toEqual(['u0', 'a1', 'h1', 'x1', 'u1']);
    expect(s.relationships).toEqual(['r1']);
  });

  it('a quota of 0 disables its type; an entity without attribute adds nothing', () => {
    const s = select(
      [],
      [
        { id: 'e9', type: 'entity' },
        { id: 'r1', type: 'relationship' },
      ],
      { crossNode: 0, entity: 5, relationship: 0, title: 0 },
    );
    expect(s).toEqual({ searchList: [], relationships: [] });
  });
});

describe('formatContext (docs/method.md §6.6)', () => {
  it('writes sections in the fixed order with numbered, trimmed items', () => {
    const ctx = formatContext([
      { id: 'u1', type: 'semantic_unit', text: ' first unit \n line two ' },
      { id: 'h1', type: 'high_level_element', text: 'theme' },
      { id: 'r1', type: 'relationship', text: 'A knows B' },
      { id: 'u2', type: 'semantic_unit', text: 'second unit' },
    ]);
    expect(sectionHeader('semantic_unit')).toBe('------------semantic_unit-------------');
    expect(ctx).toBe(
      [
        '------------high_level_element-------------',
        '1. theme',
        '',
        '------------semantic_unit-------------',
        '1. first unit \n line two',
        '2. second unit',
        '',
        '------------relationship-------------',
        '1. A knows B',
        '',
        '',
      ].join('\n'),
    );
  });

  it('is empty for an empty retrieval', () => {
    expect(formatContext([])).toBe('');
  });
});

describe('formatContextJson: the JSON of the context from per-item pieces', () => {
  const escaped = (items: readonly ContextItem[]) => (i: number) =>
    Buffer.from(JSON.stringify(items[i]!.text.trim()).slice(1, -1), 'utf8');

  it('gives the UTF-8 of JSON.stringify(formatContext(items)), byte for byte, whatever the texts hold', () => {
    const texts = [
      ' plain \n\n second paragraph ',
      'quotes " and \\ backslashes \t tabs \r returns \u0001 \u001f controls',
      'non-ASCII: é ß 北京 🙂 and a lone surrogate \ud800 here, \udc00 there',
      'ends with a high surrogate \ud83d',
      '\u2028 line separators \u2029 are kept as they are',
      '',
    ];
    const types = ['high_level_element', 'attribute', 'semantic_unit', 'text', 'relationship'] as const;
    const items: ContextItem[] = [];
    texts.forEach((text, i) => {
      items.push({ id: `a${i}`, type: types[i % types.length]!, text });
      items.push({ id: `b${i}`, type: types[(i * 3) % types.length]!, text: `${text} again` });
    });
    const ordered = orderForContext(items);
    const text = formatContext(ordered);
    const bytes = Buffer.concat(formatContextJson(ordered, escaped(ordered)));
    expect(bytes.equals(Buffer.from(JSON.stringify(text), 'utf8'))).toBe(true);
    expect(JSON.parse(bytes.toString('utf8'))).toBe(text);
  });

  it('is "" for an empty retrieval', () => {
    expect(Buffer.concat(formatContextJson([], () => new Uint8Array(0))).toString()).toBe('""');
  });
});

describe('selectRanked: selectNodes on dense numbers', () => {
  it('gives the same lists as selectNodes, with the positions that brought each node', () => {
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let trial = 0; trial < 300; trial++) {
      const nodes = 60;
      const types = Array.from({ length: nodes }, () => rand(NODE_TYPES.length));
      const attribute = Array.from({ length: nodes }, () => (rand(3) === 0 ? -1 : rand(nodes)));
      const element = Array.from({ length: nodes }, () => (rand(3) === 0 ? -1 : rand(nodes)));
      const ids = Array.from(new Set(Array.from({ length: rand(40) }, () => rand(nodes))));
      const hits = Array.from({ length: rand(6) }, () => rand(nodes));
      const quotas = { crossNode: rand(6), entity: rand(6), relationship: rand(6), title: rand(3) };
      const attributeOf = (e: number) => (attribute[e]! >= 0 ? attribute[e] : undefined);
      const elementOf = (t: number) => (element[t]! >= 0 ? element[t] : undefined);
      const ranking: RankedNode<number>[] = ids.map((id) => ({ id, type: NODE_TYPES[types[id]!]! }));
      const added: [number, number][] = [];
      const expected = selectNodes(hits, ranking, quotas, attributeOf, elementOf, (id, p) =>
        added.push([id, p]),
      );
      const got = selectRanked(
        hits,
        { ids, types: ids.map((id) => types[id]!) },
        quotas,
        attributeOf,
        elementOf,
        new NodeMarks(nodes),
      );
      expect(got.searchList).toEqual(expected.searchList);
      expect(got.relationships).toEqual(expected.relationships);
      expect(got.searchList.map((id, i) => [id, got.searchPositions[i]])).toEqual(added);
      expect(got.relationshipPositions.map((p) => ids[p])).toEqual(got.relationships);
    }
  });
});
