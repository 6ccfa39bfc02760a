/**
 * Typed selection (docs/method.md §6.5): walk the propagation ranking and fill per-type quotas.
 * Only eligible nodes (positive score, within the walk's hop radius) are ever passed in,
 * so quotas are never padded with zero-score nodes.
 */
import type { NodeType } from '../model/types.js';

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

export interface RankedNode {
  id: string;
  type: NodeType;
}

export interface Selection {
  /** Node ids whose texts make up the context: the hits, then additions in ranking order. */
  searchList: string[];
  /** Relationship ids in ranking order. */
  relationships: string[];
}

/**
 * `onAdd(id, position)` is told each id that joins the search list and the position in
 * `ranking` of the node that brought it (−1 for a hit), so callers can report why an item
 * is in the context without repeating the walk.
 */
export function selectNodes(
  hits: readonly string[],
  ranking: readonly RankedNode[],
  quotas: Quotas,
  attributeOf: (entityId: string) => string | undefined,
  elementOfTitle: (titleId: string) => string | undefined,
  onAdd?: (id: string, position: number) => void,
): Selection {
  const searchList: string[] = [];
  const inList = new Set<string>();
  const push = (id: string, position: number) => {
    if (!inList.has(id)) {
      inList.add(id);
      searchList.push(id);
      onAdd?.(id, position);
    }
  };
  for (const h of hits) push(h, -1);

  const relationships: string[] = [];
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
        if (a) push(a, position);
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
        if (e) push(e, position);
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
