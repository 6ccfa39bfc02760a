/**
 * Removal of chunks from the index (docs/method.md §4.5): what a deleted or changed document
 * takes with it. Pure and exact: the semantic units, entities, relationships and base-graph
 * edges are replayed from the decomposition records of the chunks that remain
 * (mergeDecompositions over fresh maps), and the committed rows are brought to that result:
 * rows no remaining chunk supports go, the others get the replayed weights, chunk lists,
 * first chunks and relation phrases. Their numbers, generations and vectors are kept; a row
 * whose support changed is marked `updated_generation = g`, so the Attribute and Summary
 * stages of the cycle revisit it. Nodes derived from removed or changed nodes go with them:
 * text nodes of removed chunks, attributes of removed or changed entities, every high-level
 * element of a community that lost or changed a member (and their titles), and every graph
 * edge touching a removed node.
 */
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

const BASE_TYPES: ReadonlySet<NodeType> = new Set(['semantic_unit', 'entity', 'relationship']);

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
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
  for (const id of removedChunks) {
    if (tables.texts.delete(id)) removed.text.push(id);
    tables.decompositions.delete(id);
  }

  // The replay: what the remaining chunks alone give (text_id order, as merged originally).
  const remaining = [...tables.decompositions.values()].filter(
    (r) => r.status === 'ok' && r.generation < g && tables.texts.has(r.text_hash_id),
  );
  const fresh = {
    units: new Map<string, SemanticUnitRow>(),
    entities: new Map<string, EntityRow>(),
    relationships: new Map<string, RelationshipRow>(),
  };
  const freshGraph = new BaseGraph();
  mergeDecompositions(remaining, g, freshGraph, fresh, emptyCounters(), ops);

  for (const [id, row] of tables.units) {
    const f = fresh.units.get(id);
    if (!f) {
      tables.units.delete(id);
      removed.semantic_unit.push(id);
    } else if (
      f.weight !== row.weight ||
      f.textHashId !== row.textHashId ||
      !sameList(f.textHashIds, row.textHashIds)
    ) {
      row.weight = f.weight;
      row.textHashId = f.textHashId;
      row.textHashIds = f.textHashIds;
      row.updatedGeneration = g;
      changed++;
    }
  }
  for (const [id, row] of tables.entities) {
    const f = fresh.entities.get(id);
    if (!f) {
      tables.entities.delete(id);
      removed.entity.push(id);
    } else if (f.weight !== row.weight || f.textHashId !== row.textHashId) {
      row.weight = f.weight;
      row.textHashId = f.textHashId;
      row.updatedGeneration = g;
      changed++;
    }
  }
  for (const [id, row] of tables.relationships) {
    const f = fresh.relationships.get(id);
    if (!f) {
      tables.relationships.delete(id);
      removed.relationship.push(id);
    } else if (
      f.weight !== row.weight ||
      f.textHashId !== row.textHashId ||
      !sameList(f.relations, row.relations)
    ) {
      row.weight = f.weight;
      row.textHashId = f.textHashId;
      row.relations = f.relations;
      row.updatedGeneration = g;
      changed++;
    }
  }

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

  // The graph: base nodes and edges take the replayed weights; removed nodes leave with
  // every edge that touches them.
  for (const [id, node] of graph.nodes) {
    if (gone.has(id)) {
      graph.nodes.delete(id);
      continue;
    }
    if (!BASE_TYPES.has(node.type)) continue;
    const f = freshGraph.nodes.get(id);
    if (!f) {
      // A base node without a table row cannot exist; drop it rather than keep a dangling node.
      graph.nodes.delete(id);
      gone.add(id);
    } else if (f.weight !== node.weight) {
      node.weight = f.weight;
      node.updatedGeneration = g;
    }
  }
  for (const [key, edge] of graph.edges) {
    if (gone.has(edge.source) || gone.has(edge.target)) {
      graph.edges.delete(key);
      continue;
    }
    const s = graph.nodes.get(edge.source);
    const t = graph.nodes.get(edge.target);
    if (!s || !t || !BASE_TYPES.has(s.type) || !BASE_TYPES.has(t.type)) continue;
    const f = freshGraph.edges.get(key);
    if (!f) graph.edges.delete(key);
    else edge.weight = f.weight;
  }
  // Nodes whose support changed, and members of dropped elements, are revisited by the
  // Attribute and Summary stages.
  for (const id of changedIds) graph.touch(id, g);
  for (const id of orphans) if (!gone.has(id)) graph.touch(id, g);
  for (const list of Object.values(removed)) list.sort();
  return { removed, changed };
}
