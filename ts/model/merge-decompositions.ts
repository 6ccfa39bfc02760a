/**
 * Graph pipeline (docs/method.md §3.4): merges the parsed decompositions of one generation into
 * the committed graph and tables. Pure and deterministic: chunks in `text_id` order, units
 * in output order; shared units, entities and relationships meet by id and grow in weight.
 */
import type { BaseGraph } from './graph-store.js';
import type { TextOps } from './text-ops.js';
import type { Counters, DecompositionRecord, EntityRow, RelationshipRow, SemanticUnitRow } from './types.js';

interface GraphTables {
  units: Map<string, SemanticUnitRow>;
  entities: Map<string, EntityRow>;
  relationships: Map<string, RelationshipRow>;
}

interface MergeStats {
  units: number;
  newUnits: number;
  newEntities: number;
  newRelationships: number;
}

export function mergeDecompositions(
  records: readonly DecompositionRecord[],
  g: number,
  graph: BaseGraph,
  tables: GraphTables,
  counters: Counters,
  ops: TextOps,
): MergeStats {
  const stats: MergeStats = { units: 0, newUnits: 0, newEntities: 0, newRelationships: 0 };
  const ordered = [...records].filter((r) => r.status === 'ok').sort((a, b) => a.text_id - b.text_id);
  for (const rec of ordered) {
    const chunk = rec.text_hash_id;
    for (const unit of rec.units) {
      const text = unit.semantic_unit.trim();
      if (!text) continue;
      stats.units++;
      const uid = ops.semanticUnitId(text);
      const known = tables.units.get(uid);
      if (known) {
        known.weight += 1;
        if (!known.textHashIds.includes(chunk)) known.textHashIds.push(chunk);
        known.updatedGeneration = g;
      } else {
        counters.semantic_unit_index += 1;
        tables.units.set(uid, {
          hashId: uid,
          humanReadableId: counters.semantic_unit_index,
          context: text,
          textHashId: chunk,
          textHashIds: [chunk],
          weight: 1,
          embedding: null,
          generation: g,
          updatedGeneration: g,
        });
        stats.newUnits++;
      }
      graph.bumpNode(uid, 'semantic_unit', g);

      // Entities (already norm_entity-ed and extended with relationship ends at parse time).
      const entityIds = new Map<string, string>();
      for (const name of unit.entities) {
        if (!name || entityIds.has(name)) continue;
        const eid = ops.entityIdOfNormalized(name);
        entityIds.set(name, eid);
        const e = tables.entities.get(eid);
        if (e) {
          e.weight += 1;
          e.updatedGeneration = g;
        } else {
          counters.entity_index += 1;
          tables.entities.set(eid, {
            hashId: eid,
            humanReadableId: counters.entity_index,
            context: name,
            textHashId: chunk,
            weight: 1,
            generation: g,
            updatedGeneration: g,
          });
          stats.newEntities++;
        }
        graph.bumpNode(eid, 'entity', g);
        graph.bumpEdge(uid, eid, g);
      }

      for (const rel of unit.relationships) {
        const s = entityIds.get(rel.source) ?? ops.entityIdOfNormalized(rel.source);
        const t = entityIds.get(rel.target) ?? ops.entityIdOfNormalized(rel.target);
        const rid = ops.relationshipId(s, t);
        if (rid === null) continue; // the same entity at both ends, docs/method.md §8 #26: connects nothing
        const [lo, hi] = s < t ? [s, t] : [t, s];
        const phrase = [rel.source, rel.relation, rel.target].join(' ');
        const r = tables.relationships.get(rid);
        if (r) {
          r.weight += 1;
          const folded = ops.fold(phrase);
          if (!r.relations.some((p) => ops.fold(p) === folded)) r.relations.push(phrase);
          r.updatedGeneration = g;
        } else {
          counters.relation_index += 1;
          tables.relationships.set(rid, {
            hashId: rid,
            humanReadableId: counters.relation_index,
            uniqueRelationship: [lo, hi],
            relations: [phrase],
            textHashId: chunk,
            weight: 1,
            generation: g,
            updatedGeneration: g,
          });
          stats.newRelationships++;
        }
        graph.bumpNode(rid, 'relationship', g);
        // Entity—relationship edges weigh 1 and are never incremented (docs/method.md §1).
        graph.ensureEdge(s, rid, g);
        graph.ensureEdge(rid, t, g);
      }
    }
  }
  return stats;
}

/** `context` of a relationship row: its phrases joined by `; ` (docs/method.md §5). */
export function relationshipContext(r: RelationshipRow): string {
  return r.relations.join('; ');
}
