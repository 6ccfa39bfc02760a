/**
 * Removal of chunks from the index (docs/method.md §4.5): what a deleted or changed document
 * takes with it. Pure and exact: the semantic units, entities and relationships the removed
 * chunks' decomposition records name, and the base-graph edges touching them, are replayed
 * from the records of the remaining chunks that support them (mergeDecompositions over fresh
 * maps), and the committed rows are brought to that result: rows no remaining chunk supports
 * go, the others get the replayed weights, chunk lists, first chunks and relation phrases.
 * Nodes the removed chunks never named keep their support and are not looked at. Numbers,
 * generations and vectors are kept; a row whose support changed is marked
 * `updated_generation = g`, so the Attribute and Summary stages of the cycle revisit it. Nodes derived from removed or changed nodes go with them:
 * text nodes of removed chunks, attributes of removed or changed entities, every high-level
 * element of a community that lost or changed a member (and their titles), and every graph
 * edge touching a removed node.
 */
import { IndexFileError } from '../errors.js';
import { BaseGraph } from './graph-store.js';
import { mergeDecompositions } from './merge-decompositions.js';
import type { TextOps } from './text-ops.js';
import {
  type AttributeRow,
  type DecompositionRecord,
  type EntityRow,
  emptyCounters,
  type HighLevelElementRow,
  type NodeType,
  type RelationshipRow,
  type SemanticUnitRow,
  type TextRow,
  type TitleRow,
} from './types.js';

export interface PruneTables {
  texts: Map<string, TextRow>;
  units: Map<string, SemanticUnitRow>;
  entities: Map<string, EntityRow>;
  relationships: Map<string, RelationshipRow>;
  attributes: Map<string, AttributeRow>;
  elements: Map<string, HighLevelElementRow>;
  titles: Map<string, TitleRow>;
  /** text_decomposition.jsonl records by chunk id; records of removed chunks are deleted. */
  decompositions: Map<string, DecompositionRecord>;
  /**
   * element_members.json: element id → members of the communities that produced it (entries
   * of removed elements are deleted). Elements without an entry (older indexes) are judged
   * by their `related_nodes`.
   */
  elementMembers: Map<string, string[]>;
}

/** Ids removed, per node type, and how many kept rows changed support. */
export interface PruneResult {
  removed: Record<NodeType, string[]>;
  /** Kept units, entities and relationships whose support changed (marked with g). */
  changed: number;
}

/** The units, entities, relationships and base graph that `records` alone give. */
function mergedTables(records: readonly DecompositionRecord[], g: number, ops: TextOps) {
  const out = {
    units: new Map<string, SemanticUnitRow>(),
    entities: new Map<string, EntityRow>(),
    relationships: new Map<string, RelationshipRow>(),
    graph: new BaseGraph(),
  };
  mergeDecompositions(records, g, out.graph, out, emptyCounters(), ops);
  return out;
}

/** Where a kept entity or relationship is supported once removed chunks are gone. */
interface Support {
  /** Its first chunk (text_id order). */
  first: string;
  /** A relationship's phrases, one per folded form, first-seen surface, first-seen order. */
  relations: string[];
}

/**
 * Finds the remaining support of an entity or relationship in the decomposition records, as
 * the merge saw it (text_id order). Only the chunks of the units linked to the entity (to the
 * relationship's first end) are read: every unit naming an entity, or a relationship's ends,
 * has that unit—entity edge. The count of what is found must equal the row's weight; when it
 * does not (records older than that rule), every remaining record is read instead.
 */
function supportScanner(
  tables: PruneTables,
  /** Names of entities the removal may delete before their relationships are scanned. */
  names: ReadonlyMap<string, string>,
  graph: BaseGraph,
  merged: (r: DecompositionRecord | undefined) => r is DecompositionRecord,
  ops: TextOps,
) {
  let unitsOf: Map<string, string[]> | null = null;
  const byTextId = (a: DecompositionRecord, b: DecompositionRecord) => a.text_id - b.text_id;
  const near = new Map<string, DecompositionRecord[]>();
  const unitsNear = (entityId: string): string[] => {
    if (unitsOf === null) {
      unitsOf = new Map();
      const link = (a: string, b: string) => {
        if (!tables.units.has(b)) return;
        const list = unitsOf!.get(a);
        if (list) list.push(b);
        else unitsOf!.set(a, [b]);
      };
      for (const e of graph.edges.values()) {
        link(e.source, e.target);
        link(e.target, e.source);
      }
    }
    return unitsOf.get(entityId) ?? [];
  };
  const recordsNear = (entityId: string): DecompositionRecord[] => {
    let records = near.get(entityId);
    if (!records) {
      const chunks = new Set<string>();
      for (const u of unitsNear(entityId))
        for (const c of tables.units.get(u)?.textHashIds ?? []) chunks.add(c);
      records = recordsOf(chunks);
      near.set(entityId, records);
    }
    return records;
  };
  const recordsOf = (chunks: Iterable<string>): DecompositionRecord[] => {
    const out: DecompositionRecord[] = [];
    for (const c of chunks) {
      const r = tables.decompositions.get(c);
      if (merged(r) && tables.texts.has(c)) out.push(r);
    }
    return out.sort(byTextId);
  };
  let all: DecompositionRecord[] | null = null;
  const everything = () => (all ??= recordsOf(tables.decompositions.keys()));

  const scan = (
    records: readonly DecompositionRecord[],
    match: (unit: DecompositionRecord['units'][number]) => number | string[],
  ): { first: string | null; count: number; relations: string[] } => {
    let first: string | null = null;
    let count = 0;
    const relations: string[] = [];
    const folded = new Set<string>();
    for (const r of records) {
      for (const unit of r.units) {
        if (!unit.semantic_unit.trim()) continue;
        const m = match(unit);
        const n = typeof m === 'number' ? m : m.length;
        if (n === 0) continue;
        first ??= r.text_hash_id;
        count += n;
        if (typeof m === 'number') continue;
        for (const phrase of m) {
          const f = ops.fold(phrase);
          if (!folded.has(f)) {
            folded.add(f);
            relations.push(phrase);
          }
        }
      }
    }
    return { first, count, relations };
  };
  const found = (
    near: DecompositionRecord[],
    weight: number,
    match: Parameters<typeof scan>[1],
    label: string,
  ): Support => {
    let s = scan(near, match);
    if (s.count !== weight) s = scan(everything(), match);
    if (s.first === null || s.count !== weight) {
      throw new IndexFileError(
        'index_damaged',
        `${label} has weight ${weight} in the tables but ${s.count} occurrences in cache/text_decomposition.jsonl; the index is damaged: rebuild from scratch with \`noderag build -f <folder> --rebuild\``,
      );
    }
    return { first: s.first, relations: s.relations };
  };

  return {
    entity(row: EntityRow, weight: number): Support {
      const name = row.context;
      return found(
        recordsNear(row.hashId),
        weight,
        (u) => (u.entities.includes(name) ? 1 : 0),
        `entity ${row.hashId}`,
      );
    },
    relationship(row: RelationshipRow, weight: number): Support {
      const [lo, hi] = row.uniqueRelationship as [string, string];
      const a = names.get(lo) ?? tables.entities.get(lo)?.context;
      const b = names.get(hi) ?? tables.entities.get(hi)?.context;
      const match = (u: DecompositionRecord['units'][number]) =>
        u.relationships
          .filter((r) => (r.source === a && r.target === b) || (r.source === b && r.target === a))
          .map((r) => [r.source, r.relation, r.target].join(' '));
      // Either end's units hold every occurrence: read those of the end with fewer.
      const end = unitsNear(lo).length <= unitsNear(hi).length ? lo : hi;
      return found(recordsNear(end), weight, match, `relationship ${row.hashId}`);
    },
  };
}

/**
 * Removes the chunks `removedChunks` (ids of text rows) and everything only they support.
 * Every table and the graph are edited in place.
 */
export function pruneChunks(
  removedChunks: ReadonlySet<string>,
  tables: PruneTables,
  graph: BaseGraph,
  g: number,
  ops: TextOps,
): PruneResult {
  const removed: Record<NodeType, string[]> = {
    text: [],
    semantic_unit: [],
    entity: [],
    relationship: [],
    attribute: [],
    high_level_element: [],
    high_level_element_title: [],
  };
  let changed = 0;
  // Records the tables hold: merged by the Graph stage of an earlier generation.
  const merged = (r: DecompositionRecord | undefined): r is DecompositionRecord =>
    r !== undefined && r.status === 'ok' && r.generation < g;
  const removedRecords: DecompositionRecord[] = [];
  for (const id of removedChunks) {
    if (tables.texts.delete(id)) removed.text.push(id);
    const record = tables.decompositions.get(id);
    if (merged(record)) removedRecords.push(record);
    tables.decompositions.delete(id);
  }

  // What the removed chunks contributed (the merge of their records alone: occurrences per
  // unit, entity, relationship and unit—entity edge) is taken off the committed rows, so the
  // work follows the change, not the corpus. A first chunk or relation phrase they held is
  // found again in the remaining records (supportScanner).
  const contributed = mergedTables(removedRecords, g, ops);
  // Entity names by id, for matching relationship ends in the records (an id is the hash of
  // its name); ends missing from their unit's entities (older records) are named here too.
  const names = new Map([...contributed.entities].map(([id, e]) => [id, e.context]));
  for (const r of removedRecords) {
    for (const unit of r.units) {
      for (const rel of unit.relationships) {
        for (const end of [rel.source, rel.target]) {
          if (!unit.entities.includes(end)) names.set(ops.entityIdOfNormalized(end), end);
        }
      }
    }
  }
  const scanner = supportScanner(tables, names, graph, merged, ops);
  const newWeights = new Map<string, number>();
  // Each contribution's weight comes off its row: a row left with none, or that `update` finds
  // unsupported, is removed; the others take the weight and `update`'s edits, touched in g.
  const subtract = <R extends { weight: number; updatedGeneration: number }, C extends { weight: number }>(
    contributions: ReadonlyMap<string, C>,
    rows: Map<string, R>,
    removedIds: string[],
    update: (row: R, c: C, weight: number) => boolean,
  ): void => {
    for (const [id, c] of contributions) {
      const row = rows.get(id);
      if (!row) continue;
      const weight = row.weight - c.weight;
      if (weight <= 0 || !update(row, c, weight)) {
        rows.delete(id);
        removedIds.push(id);
        continue;
      }
      newWeights.set(id, weight);
      row.weight = weight;
      row.updatedGeneration = g;
      changed++;
    }
  };
  subtract(contributed.units, tables.units, removed.semantic_unit, (row) => {
    const chunks = row.textHashIds.filter((chunk) => !removedChunks.has(chunk));
    if (chunks.length === 0) return false;
    row.textHashIds = chunks;
    row.textHashId = chunks[0]!;
    return true;
  });
  subtract(contributed.entities, tables.entities, removed.entity, (row, _c, weight) => {
    if (removedChunks.has(row.textHashId)) row.textHashId = scanner.entity(row, weight).first;
    return true;
  });
  subtract(contributed.relationships, tables.relationships, removed.relationship, (row, c, weight) => {
    // Its phrases change only when a folded form it kept came from a removed chunk. Compared
    // by fold: the surface kept is the one of the first chunk by path (restate-forms.ts),
    // which need not be the surface the removed chunks gave.
    const removedFolds = new Set(c.relations.map((p) => ops.fold(p)));
    if (removedChunks.has(row.textHashId) || row.relations.some((p) => removedFolds.has(ops.fold(p)))) {
      const support = scanner.relationship(row, weight);
      row.textHashId = support.first;
      row.relations = support.relations;
    }
    return true;
  });

  // Derived nodes. An attribute was written from its entity's neighbourhood: it goes when the
  // entity goes or its support changed (the Attribute stage writes it again if the entity is
  // still important). A high-level element was written from the members of its communities
  // (element_members.json; `related_nodes` for elements written before that file existed):
  // it goes, with its title, when one of them went or changed, and so do the other elements
  // of its community (`community_id`); the members left are marked touched, so the Summary
  // stage clusters them again.
  const gone = new Set<string>([
    ...removed.text,
    ...removed.semantic_unit,
    ...removed.entity,
    ...removed.relationship,
  ]);
  const changedIds = new Set<string>();
  for (const rows of [tables.units, tables.entities, tables.relationships] as const) {
    for (const [id, row] of rows) if (row.updatedGeneration === g) changedIds.add(id);
  }
  for (const [id, row] of tables.attributes) {
    if (gone.has(row.node) || changedIds.has(row.node)) {
      tables.attributes.delete(id);
      removed.attribute.push(id);
      gone.add(id);
    }
  }
  const materialOf = (id: string, row: { relatedNodes: string[] }) => [
    ...(tables.elementMembers.get(id) ?? []),
    ...row.relatedNodes,
  ];
  const staleCommunities = new Set<number>();
  for (const [id, row] of tables.elements) {
    if (materialOf(id, row).some((m) => gone.has(m) || changedIds.has(m)))
      staleCommunities.add(row.communityId);
  }
  const orphans = new Set<string>();
  for (const [id, row] of tables.elements) {
    if (!staleCommunities.has(row.communityId)) continue;
    for (const m of materialOf(id, row)) orphans.add(m);
    tables.elements.delete(id);
    tables.elementMembers.delete(id);
    removed.high_level_element.push(id);
    gone.add(id);
  }
  for (const id of [...tables.elementMembers.keys()])
    if (!tables.elements.has(id)) tables.elementMembers.delete(id);
  for (const [id, row] of tables.titles) {
    if (gone.has(row.relatedNode)) {
      tables.titles.delete(id);
      removed.high_level_element_title.push(id);
      gone.add(id);
    }
  }

  // The graph: kept base nodes take their rows' weights, unit—entity edges lose the removed
  // occurrences (entity—relationship edges weigh 1 and go with their relationship), and
  // removed nodes leave with every edge that touches them.
  // Rows are edited through editNode / editEdge, which record them for the graph's delta.
  for (const [id, weight] of newWeights) {
    const node = graph.nodes.get(id);
    if (node && node.weight !== weight) {
      const edit = graph.editNode(id)!;
      edit.weight = weight;
      edit.updatedGeneration = g;
    }
  }
  for (const [key, c] of contributed.graph.edges) {
    if (contributed.relationships.has(c.source) || contributed.relationships.has(c.target)) continue;
    const edge = graph.editEdge(key);
    if (!edge) continue;
    edge.weight -= c.weight;
    if (edge.weight <= 0) graph.edges.delete(key);
  }
  for (const id of gone) graph.nodes.delete(id);
  // A kept node that loses a neighbour is changed too (the Attribute stage keeps an attribute
  // without looking at its material when nothing around its entity changed). Nearly always it
  // is marked already: a removed unit or relationship took occurrences of its entities with it.
  const bereaved = new Set<string>();
  for (const [key, edge] of graph.edges) {
    const [a, b] = [gone.has(edge.source), gone.has(edge.target)];
    if (!a && !b) continue;
    graph.edges.delete(key);
    if (!a) bereaved.add(edge.source);
    if (!b) bereaved.add(edge.target);
  }
  // Nodes whose support changed, and members of dropped elements, are revisited by the
  // Attribute and Summary stages.
  for (const id of changedIds) graph.touch(id, g);
  for (const id of orphans) if (!gone.has(id)) graph.touch(id, g);
  for (const id of bereaved) graph.touch(id, g);
  for (const list of Object.values(removed)) list.sort();
  return { removed, changed };
}
