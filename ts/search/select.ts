/**
 * Typed selection (docs/method.md §6.5): walk the propagation ranking and fill per-type quotas.
 * Only eligible nodes (positive score, within the walk's hop radius) are ever passed in,
 * so quotas are never padded with zero-score nodes.
 */
import { NODE_TYPES, type NodeType } from '../model/types.js';

export interface Quotas {
  /** semantic_unit, text, attribute, high_level_element */
  crossNode: number;
  /** entity → its attribute joins the search list */
  entity: number;
  /** relationship → the relationship list */
  relationship: number;
  /** high_level_element_title → its element joins the search list */
  title: number;
}

/** `Id`: what names a node; retrieve.ts passes dense node indexes, the tests string ids. */
export interface RankedNode<Id = string> {
  id: Id;
  type: NodeType;
}

export interface Selection<Id = string> {
  /** Nodes whose texts make up the context: the hits, then additions in ranking order. */
  searchList: Id[];
  /** Relationships in ranking order. */
  relationships: Id[];
}

/**
 * `onAdd(id, position)` is told each id that joins the search list and the position in
 * `ranking` of the node that brought it (−1 for a hit), so callers can report why an item
 * is in the context without repeating the walk.
 */
export function selectNodes<Id>(
  hits: readonly Id[],
  ranking: readonly RankedNode<Id>[],
  quotas: Quotas,
  attributeOf: (entity: Id) => Id | undefined,
  elementOfTitle: (title: Id) => Id | undefined,
  onAdd?: (id: Id, position: number) => void,
): Selection<Id> {
  const searchList: Id[] = [];
  const inList = new Set<Id>();
  const push = (id: Id, position: number) => {
    if (!inList.has(id)) {
      inList.add(id);
      searchList.push(id);
      onAdd?.(id, position);
    }
  };
  for (const h of hits) push(h, -1);

  const relationships: Id[] = [];
  let cross = 0;
  let ent = 0;
  let rel = 0;
  let title = 0;
  const full = () =>
    cross >= quotas.crossNode && ent >= quotas.entity && rel >= quotas.relationship && title >= quotas.title;

  for (let position = 0; position < ranking.length; position++) {
    const node = ranking[position]!;
    if (full()) break;
    if (inList.has(node.id)) continue;
    switch (node.type) {
      case 'entity': {
        if (ent >= quotas.entity) break;
        ent++;
        const a = attributeOf(node.id);
        if (a !== undefined) push(a, position);
        break;
      }
      case 'relationship':
        if (rel >= quotas.relationship) break;
        rel++;
        relationships.push(node.id);
        break;
      case 'high_level_element_title': {
        if (title >= quotas.title) break;
        title++;
        const e = elementOfTitle(node.id);
        if (e !== undefined) push(e, position);
        break;
      }
      default:
        if (cross >= quotas.crossNode) break;
        cross++;
        push(node.id, position);
    }
  }
  return { searchList, relationships };
}

/** The selection of `selectRanked`, with the ranking position that brought each node. */
export interface RankedSelection {
  /** The hits, then additions in ranking order (each once). */
  searchList: number[];
  /** Ranking position of the node that brought each entry of `searchList`; −1 for a hit. */
  searchPositions: number[];
  /** Relationships in ranking order. */
  relationships: number[];
  /** Ranking position of each relationship. */
  relationshipPositions: number[];
}

/** Node type codes (index into NODE_TYPES) the walk tells apart. */
const ENTITY = NODE_TYPES.indexOf('entity');
const RELATIONSHIP = NODE_TYPES.indexOf('relationship');
const TITLE = NODE_TYPES.indexOf('high_level_element_title');

/**
 * `selectNodes` on dense node numbers with the ranking as the native top-k gives it
 * (`ids[i]`, type code `types[i]`): the same walk, the same lists, without an object per
 * ranked node or a Set; `listed` is a reusable set (cleared here) for the search list.
 */
export function selectRanked(
  hits: readonly number[],
  ranking: { ids: ArrayLike<number>; types: ArrayLike<number> } | null,
  quotas: Quotas,
  attributeOf: (entity: number) => number | undefined,
  elementOfTitle: (title: number) => number | undefined,
  listed: { clear(): void; has(node: number): boolean; add(node: number): boolean },
): RankedSelection {
  const out: RankedSelection = {
    searchList: [],
    searchPositions: [],
    relationships: [],
    relationshipPositions: [],
  };
  listed.clear();
  const push = (id: number, position: number) => {
    if (listed.add(id)) {
      out.searchList.push(id);
      out.searchPositions.push(position);
    }
  };
  for (const h of hits) push(h, -1);
  if (!ranking) return out;
  const { ids, types } = ranking;
  let cross = 0;
  let ent = 0;
  let rel = 0;
  let title = 0;
  for (let position = 0; position < ids.length; position++) {
    if (
      cross >= quotas.crossNode &&
      ent >= quotas.entity &&
      rel >= quotas.relationship &&
      title >= quotas.title
    )
      break;
    const id = ids[position]!;
    if (listed.has(id)) continue;
    switch (types[position]) {
      case ENTITY: {
        if (ent >= quotas.entity) break;
        ent++;
        const a = attributeOf(id);
        if (a !== undefined) push(a, position);
        break;
      }
      case RELATIONSHIP:
        if (rel >= quotas.relationship) break;
        rel++;
        out.relationships.push(id);
        out.relationshipPositions.push(position);
        break;
      case TITLE: {
        if (title >= quotas.title) break;
        title++;
        const e = elementOfTitle(id);
        if (e !== undefined) push(e, position);
        break;
      }
      default:
        if (cross >= quotas.crossNode) break;
        cross++;
        push(id, position);
    }
  }
  return out;
}
