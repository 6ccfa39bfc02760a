import { describe, expect, it } from 'vitest';
import { BaseGraph } from '../../ts/model/graph-store.js';
import { mergeDecompositions, relationshipContext } from '../../ts/model/merge-decompositions.js';
import { restateForms } from '../../ts/model/restate-forms.js';
import { type DecompositionRecord, emptyCounters } from '../../ts/model/types.js';
import { jsTextOps } from '../helpers/js-text-ops.js';

const ops = jsTextOps;

function record(textId: number, units: DecompositionRecord['units']): DecompositionRecord {
  return {
    text_hash_id: `chunk${textId}`,
    text_id: textId,
    generation: 1,
    status: 'ok',
    response: null,
    units,
    dropped: [],
    error: null,
  };
}

describe('mergeDecompositions (docs/method.md §3.4)', () => {
  it('creates nodes, rows and edges, and merges repeats by id', () => {
    const graph = new BaseGraph();
    const tables = { units: new Map(), entities: new Map(), relationships: new Map() };
    const counters = emptyCounters();
    const recs = [
      record(2, [
        {
          semantic_unit: 'Marie Curie worked in Paris.',
          entities: ['MARIE CURIE', 'PARIS'],
          relationships: [{ source: 'MARIE CURIE', relation: 'worked in', target: 'PARIS' }],
        },
      ]),
      record(1, [
        {
          semantic_unit: 'Marie Curie worked in Paris.',
          entities: ['MARIE CURIE', 'PARIS'],
          relationships: [
            { source: 'MARIE CURIE', relation: 'WORKED IN', target: 'PARIS' },
            { source: 'PARIS', relation: 'hosted', target: 'MARIE CURIE' },
            { source: 'PARIS', relation: 'is', target: 'PARIS' },
          ],
        },
      ]),
    ];
    const stats = mergeDecompositions(recs, 1, graph, tables, counters, ops);
    expect(stats).toEqual({ units: 2, newUnits: 1, newEntities: 2, newRelationships: 1 });

    const uid = ops.semanticUnitId('Marie Curie worked in Paris.');
    const unit = tables.units.get(uid);
    // text_id order: chunk1 first, so it is the unit's first chunk.
    expect(unit?.textHashIds).toEqual(['chunk1', 'chunk2']);
    expect(unit?.weight).toBe(2);
    expect(unit?.humanReadableId).toBe(1);

    const curie = ops.entityIdOfNormalized('MARIE CURIE');
    const paris = ops.entityIdOfNormalized('PARIS');
    expect(tables.entities.get(curie)?.weight).toBe(2);
    expect(graph.edges.get(curie < uid ? `${curie}|${uid}` : `${uid}|${curie}`)?.weight).toBe(2);

    const [lo, hi] = curie < paris ? [curie, paris] : [paris, curie];
    const rid = ops.relationshipId(curie, paris)!;
    const rel = tables.relationships.get(rid);
    expect(rel?.uniqueRelationship).toEqual([lo, hi]);
    // Three mentions (the self-relationship is dropped); case-variants of a phrase are one phrase.
    expect(rel?.weight).toBe(3);
    expect(rel?.relations).toEqual(['MARIE CURIE WORKED IN PARIS', 'PARIS hosted MARIE CURIE']);
    expect(rel && relationshipContext(rel)).toBe('MARIE CURIE WORKED IN PARIS; PARIS hosted MARIE CURIE');
    // Entity—relationship edges weigh 1 and never grow.
    expect(graph.edges.get(curie < rid ? `${curie}|${rid}` : `${rid}|${curie}`)?.weight).toBe(1);
    // No self-loops, no unit—relationship edges.
    for (const e of graph.edges.values()) expect(e.source < e.target).toBe(true);
    expect(graph.hasEdge(uid, rid)).toBe(false);
    expect(counters).toMatchObject({ semantic_unit_index: 1, entity_index: 2, relation_index: 1 });
  });

  it('skips failed records and empty units', () => {
    const graph = new BaseGraph();
    const tables = { units: new Map(), entities: new Map(), relationships: new Map() };
    const failed = {
      ...record(1, [{ semantic_unit: 'x', entities: [], relationships: [] }]),
      status: 'failed' as const,
    };
    const empty = record(2, [{ semantic_unit: '   ', entities: ['A'], relationships: [] }]);
    mergeDecompositions([failed, empty], 1, graph, tables, emptyCounters(), ops);
    expect(graph.nodes.size).toBe(0);
  });
});

describe('restateForms (a sync gives shared units and phrases the form of a clean build)', () => {
  const plain = {
    semantic_unit: 'Edith Pryce found the first comet.',
    entities: ['EDITH PRYCE', 'COMET'],
    relationships: [{ source: 'EDITH PRYCE', relation: 'found the first', target: 'COMET' }],
  };
  const ligature = {
    semantic_unit: 'Edith Pryce found the ﬁrst comet.',
    entities: ['EDITH PRYCE', 'COMET'],
    relationships: [{ source: 'EDITH PRYCE', relation: 'found the ﬁrst', target: 'COMET' }],
  };
  /** The tables after merging `plain` (chunk 1) then `ligature` (chunk 2), as a sync would. */
  function merged() {
    const graph = new BaseGraph();
    const tables = { units: new Map(), entities: new Map(), relationships: new Map() };
    mergeDecompositions([record(1, [plain]), record(2, [ligature])], 1, graph, tables, emptyCounters(), ops);
    for (const u of tables.units.values()) u.embedding = new Float32Array([1]);
    return { graph, tables, recs: [record(1, [plain]), record(2, [ligature])] };
  }

  it('takes the form of the first chunk in clean-build order, and clears the vector made from the other', () => {
    const { graph, tables, recs } = merged();
    const [unit] = [...tables.units.values()];
    const [rel] = [...tables.relationships.values()];
    expect(unit.context).toBe(plain.semantic_unit);
    expect(rel.relations).toEqual(['EDITH PRYCE found the first COMET']);
    // In a clean build chunk2 comes first (its file sorts first).
    const out = restateForms(
      recs,
      new Map([
        ['chunk2', 0],
        ['chunk1', 1],
      ]),
      tables,
      graph,
      3,
      ops,
    );
    expect(out).toEqual({ units: [unit.hashId], relationships: [rel.hashId] });
    expect(unit.context).toBe(ligature.semantic_unit);
    expect(unit.embedding).toBeNull();
    expect(unit.generation).toBe(3);
    expect(rel.relations).toEqual(['EDITH PRYCE found the ﬁrst COMET']);
    expect(graph.nodes.get(unit.hashId)!.updatedGeneration).toBe(3);
  });

  it('changes nothing when the stored forms are those of the first chunks', () => {
    const { graph, tables, recs } = merged();
    const before = JSON.stringify([...tables.units.values(), ...tables.relationships.values()], (_k, v) =>
      v instanceof Float32Array ? [...v] : v,
    );
    const out = restateForms(
      recs,
      new Map([
        ['chunk1', 0],
        ['chunk2', 1],
      ]),
      tables,
      graph,
      3,
      ops,
    );
    expect(out).toEqual({ units: [], relationships: [] });
    expect(
      JSON.stringify([...tables.units.values(), ...tables.relationships.values()], (_k, v) =>
        v instanceof Float32Array ? [...v] : v,
      ),
    ).toBe(before);
  });

  it('tells apart two relationships whose phrases join to the same string ("A MET | B C" and "A MET B | C")', () => {
    const graph = new BaseGraph();
    const tables = { units: new Map(), entities: new Map(), relationships: new Map() };
    const unit = (text: string, source: string, relation: string, target: string) => ({
      semantic_unit: text,
      entities: [source, target],
      relationships: [{ source, relation, target }],
    });
    const recs = [
      record(1, [unit('One.', 'A', 'met B', 'C')]),
      record(2, [unit('Two.', 'A', 'MET B', 'C')]),
      record(3, [unit('Three.', 'A', 'MET', 'B C')]),
    ];
    mergeDecompositions(recs, 1, graph, tables, emptyCounters(), ops);
    const ac = tables.relationships.get(
      ops.relationshipId(ops.entityIdOfNormalized('A'), ops.entityIdOfNormalized('C'))!,
    )!;
    expect(ac.relations).toEqual(['A met B C']);
    // A clean build meets chunk 2 first: A–C keeps "A MET B C", the very string of A–(B C)'s phrase.
    restateForms(
      recs,
      new Map([
        ['chunk2', 0],
        ['chunk1', 1],
        ['chunk3', 2],
      ]),
      tables,
      graph,
      2,
      ops,
    );
    expect(ac.relations).toEqual(['A MET B C']);
  });

  it('a chunk no longer in the index does not count (its form goes with it)', () => {
    const { graph, tables, recs } = merged();
    const [unit] = [...tables.units.values()];
    restateForms(recs, new Map([['chunk2', 0]]), tables, graph, 3, ops);
    expect(unit.context).toBe(ligature.semantic_unit);
  });
});
