import { describe, expect, it } from 'vitest';
import { BaseGraph } from '../../ts/model/graph-store.js';
import { mergeDecompositions, relationshipContext } from '../../ts/model/merge-decompositions.js';
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
