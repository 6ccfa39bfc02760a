/**
 * The forms a clean build gives shared semantic units and relation phrases (docs/method.md
 * §4.5), restored after a sync.
 *
 * A unit's id hashes its normalised text (NFKC, whitespace collapsed), so two chunks may
 * produce one unit in two forms ("ﬁrst" and "first", a line break and a space); likewise a
 * relationship keeps one phrase per fold. The merge keeps the form it met first, in text_id
 * order. A clean build numbers chunks by document path, so its first form is that of the
 * first chunk by path; a sync numbers new chunks after the old ones and prunes removed ones, so
 * the form it kept may be of a chunk that is now later, or gone. Walking every current
 * decomposition in clean-build chunk order gives each unit and phrase the form a clean build
 * would give it; the rows whose form differs take it.
 *
 * The walk hashes only occurrences whose text is not a stored form: a stored context names
 * its unit (and a stored phrase its relationship) directly, and those are nearly all of them.
 */
import type { BaseGraph } from './graph-store.js';
import type { TextOps } from './text-ops.js';
import type { DecompositionRecord, EntityRow, RelationshipRow, SemanticUnitRow } from './types.js';

export interface RestatedForms {
  /** Units whose context changed (their vector is cleared: it was made from the other form). */
  units: string[];
  /** Relationships one of whose phrases changed form. */
  relationships: string[];
}

export function restateForms(
  records: Iterable<DecompositionRecord>,
  /** Rank of each current chunk (text hash id) in a clean build's text_id order. */
  chunkRank: ReadonlyMap<string, number>,
  tables: {
    units: Map<string, SemanticUnitRow>;
    entities: ReadonlyMap<string, EntityRow>;
    relationships: Map<string, RelationshipRow>;
  },
  graph: BaseGraph,
  g: number,
  ops: TextOps,
): RestatedForms {
  const ordered = [...records]
    .filter((r) => r.status === 'ok' && chunkRank.has(r.text_hash_id))
    .sort((a, b) => chunkRank.get(a.text_hash_id)! - chunkRank.get(b.text_hash_id)!);

  // A unit or relationship all of whose occurrences are in a stored form has its clean-build
  // form already (the merge keeps one phrase per fold): only the others are worked out.
  const unitOfText = new Map<string, string>();
  for (const u of tables.units.values()) unitOfText.set(u.context, u.hashId);
  // A phrase joins "source relation target" with spaces, so two triples can give one string
  // ("A met | B C" and "A met B | C"): the key names the two ends as well.
  const phraseKey = (a: string, b: string, phrase: string) =>
    a < b ? `${a}\u0000${b}\u0000${phrase}` : `${b}\u0000${a}\u0000${phrase}`;
  const relationshipOfPhrase = new Map<string, string | null>();
  for (const r of tables.relationships.values()) {
    const [lo, hi] = r.uniqueRelationship.map((id) => tables.entities.get(id)?.context ?? '');
    for (const p of r.relations) relationshipOfPhrase.set(phraseKey(lo!, hi!, p), r.hashId);
  }
  const suspectUnits = new Set<string>();
  const suspectRelationships = new Set<string>();
  const noteUnit = (text: string): void => {
    if (unitOfText.has(text)) return;
    const id = ops.semanticUnitId(text);
    unitOfText.set(text, id);
    suspectUnits.add(id);
  };
  type Triple = { source: string; relation: string; target: string };
  const phrase = (rel: Triple) => [rel.source, rel.relation, rel.target].join(' ');
  const keyOf = (rel: Triple) => phraseKey(rel.source, rel.target, phrase(rel));
  const noteRelationship = (rel: Triple): void => {
    const key = keyOf(rel);
    if (relationshipOfPhrase.has(key)) return;
    // The same entity at both ends: no relationship (null).
    const id = ops.relationshipId(ops.entityIdOfNormalized(rel.source), ops.entityIdOfNormalized(rel.target));
    relationshipOfPhrase.set(key, id);
    if (id !== null) suspectRelationships.add(id);
  };
  for (const rec of ordered) {
    for (const unit of rec.units) {
      const text = unit.semantic_unit.trim();
      if (!text) continue;
      noteUnit(text);
      for (const rel of unit.relationships) noteRelationship(rel);
    }
  }
  if (suspectUnits.size === 0 && suspectRelationships.size === 0) return { units: [], relationships: [] };

  const unitForm = new Map<string, string>();
  /** relationship id → fold → first phrase. */
  const phraseForm = new Map<string, Map<string, string>>();
  for (const rec of ordered) {
    for (const unit of rec.units) {
      const text = unit.semantic_unit.trim();
      if (!text) continue;
      const uid = unitOfText.get(text)!;
      if (suspectUnits.has(uid) && !unitForm.has(uid)) unitForm.set(uid, text);
      for (const rel of unit.relationships) {
        const rid = relationshipOfPhrase.get(keyOf(rel));
        if (rid === null || rid === undefined || !suspectRelationships.has(rid)) continue;
        const p = phrase(rel);
        let forms = phraseForm.get(rid);
        if (!forms) {
          forms = new Map();
          phraseForm.set(rid, forms);
        }
        const folded = ops.fold(p);
        if (!forms.has(folded)) forms.set(folded, p);
      }
    }
  }

  const out: RestatedForms = { units: [], relationships: [] };
  for (const [id, form] of unitForm) {
    const u = tables.units.get(id);
    if (!u || form === u.context) continue;
    u.context = form;
    u.embedding = null;
    u.generation = g;
    u.updatedGeneration = g;
    graph.touch(u.hashId, g);
    out.units.push(u.hashId);
  }
  for (const [id, forms] of phraseForm) {
    const r = tables.relationships.get(id);
    if (!r) continue;
    let changed = false;
    const relations = r.relations.map((p) => {
      const form = forms.get(ops.fold(p));
      if (form === undefined || form === p) return p;
      changed = true;
      return form;
    });
    if (!changed) continue;
    r.relations = relations;
    r.updatedGeneration = g;
    graph.touch(r.hashId, g);
    out.relationships.push(r.hashId);
  }
  return out;
}
