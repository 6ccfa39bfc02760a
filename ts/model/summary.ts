/**
 * Summary pipeline logic (docs/method.md §3.7) that does not call a model: which nodes form the
 * community graph, which communities are summarised and in what order, how produced
 * elements merge into the index, and how members are linked to elements.
 * Leiden and k-means are injected (native in production), so this stays pure and testable.
 */
import type { BaseGraph } from './graph-store.js';
import type { TextOps } from './text-ops.js';
import type { Counters, HighLevelElementRow, NodeType, TitleRow } from './types.js';

const COMMUNITY_TYPES: ReadonlySet<NodeType> = new Set([
  'semantic_unit',
  'entity',
  'relationship',
  'attribute',
]);
const MEMBER_TYPES: ReadonlySet<NodeType> = new Set(['semantic_unit', 'attribute']);

/**
 * Step 1: ids of the community graph, ascending (isolated nodes removed). `exclude`: members
 * of communities formed again as they were (reformCommunities), left out before isolated
 * nodes are.
 */
export function communityNodeIds(
  graph: BaseGraph,
  g: number,
  exclude: ReadonlySet<string> = new Set(),
): string[] {
  const keep = new Set<string>();
  for (const [id, n] of graph.nodes)
    if (COMMUNITY_TYPES.has(n.type) && n.updatedGeneration === g && !exclude.has(id)) keep.add(id);
  const connected = new Set<string>();
  for (const e of graph.edges.values()) {
    if (keep.has(e.source) && keep.has(e.target)) {
      connected.add(e.source);
      connected.add(e.target);
    }
  }
  return [...connected].sort();
}

export interface Community {
  /** Members (semantic_unit and attribute ids), ascending. */
  members: string[];
  /** All nodes of the community, for "degree inside the community". */
  nodes: Set<string>;
}

/** Step 3: communities with members, ordered by smallest member id. */
export function communitiesWithMembers(
  graph: BaseGraph,
  ids: readonly string[],
  labels: ArrayLike<number>,
): Community[] {
  const byLabel = new Map<number, string[]>();
  ids.forEach((id, i) => {
    const l = labels[i]!;
    let list = byLabel.get(l);
    if (!list) {
      list = [];
      byLabel.set(l, list);
    }
    list.push(id);
  });
  const out: Community[] = [];
  for (const nodes of byLabel.values()) {
    const members = nodes.filter((id) => MEMBER_TYPES.has(graph.nodes.get(id)!.type)).sort();
    if (members.length) out.push({ members, nodes: new Set(nodes) });
  }
  return out.sort((a, b) => (a.members[0]! < b.members[0]! ? -1 : 1));
}

/** A recorded community (cache/community_inputs.json): its members in prompt C's rank order. */
interface RecordedMembers {
  members: readonly string[];
}

export interface Reformed {
  hash: string;
  community: Community;
  /** Prompt C's texts, as recorded. */
  texts: string[];
}

/**
 * A sync's recorded communities formed again as they were (docs/method.md §4.5): a community
 * the sync dropped (none of its elements is left: `live` is false) whose members are all
 * still members, with texts that give the recorded input again (`promptTexts` ranks nothing:
 * it trims the texts of the members in their recorded order; `hashOf` is the input hash).
 * Its elements then come back without a call. A sync drops a community when one of its
 * members went or changed; a unit whose chunk list changed, or an attribute retired and then
 * restored unchanged, leaves the input as it was. Candidates are taken in order of their
 * smallest member id and must not share a member with an earlier one.
 */
export function reformCommunities(
  recorded: ReadonlyMap<string, RecordedMembers>,
  live: (hash: string) => boolean,
  isMember: (id: string) => boolean,
  promptTexts: (members: readonly string[]) => string[],
  hashOf: (texts: readonly string[]) => string,
): Reformed[] {
  const candidates = [...recorded]
    .filter(([hash, r]) => r.members.length > 0 && !live(hash))
    .map(([hash, r]) => ({ hash, members: r.members, first: [...r.members].sort()[0]! }))
    .sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : a.hash < b.hash ? -1 : 1));
  const taken = new Set<string>();
  const out: Reformed[] = [];
  for (const { hash, members } of candidates) {
    if (!members.every((m) => isMember(m) && !taken.has(m))) continue;
    const texts = promptTexts(members);
    if (hashOf(texts) !== hash) continue;
    for (const m of members) taken.add(m);
    const sorted = [...members].sort();
    out.push({ hash, community: { members: sorted, nodes: new Set(sorted) }, texts });
  }
  return out;
}

interface ProducedElement {
  title: string;
  description: string;
}

interface ElementTables {
  elements: Map<string, HighLevelElementRow>;
  titles: Map<string, TitleRow>;
}

/**
 * Step 5: merges one community's produced elements. Returns the element ids of this
 * community in item order (deduplicated), for linking.
 */
export function mergeElements(
  produced: readonly ProducedElement[],
  communityNumber: number,
  g: number,
  graph: BaseGraph,
  tables: ElementTables,
  counters: Counters,
  ops: TextOps,
): string[] {
  const ids: string[] = [];
  for (const item of produced) {
    const title = item.title.trim();
    const description = item.description.trim();
    if (!title || !description) continue;
    const eid = ops.highLevelElementId(description);
    if (ids.includes(eid)) continue; // same element id twice in one reply: merged
    ids.push(eid);
    const tid = ops.highLevelElementTitleId(eid);
    const known = tables.elements.get(eid);
    if (known) {
      known.weight += 1;
      known.updatedGeneration = g;
      tables.titles.get(tid)!.weight += 1;
    } else {
      counters.high_level_element_index += 1;
      const n = counters.high_level_element_index;
      tables.elements.set(eid, {
        hashId: eid,
        humanReadableId: n,
        context: description,
        titleHashId: tid,
        communityId: communityNumber,
        relatedNodes: [],
        weight: 1,
        embedding: null,
        generation: g,
        updatedGeneration: g,
      });
      tables.titles.set(tid, {
        hashId: tid,
        humanReadableId: n,
        context: title,
        relatedNode: eid,
        weight: 1,
        generation: g,
      });
    }
    graph.bumpNode(eid, 'high_level_element', g);
    graph.bumpNode(tid, 'high_level_element_title', g);
    graph.ensureEdge(eid, tid, g);
  }
  return ids;
}

export interface LinkInput {
  community: Community;
  elements: string[];
}

/**
 * Step 7: links members to elements. Without clustering (n / ⌈√n⌉ ≤ Hcluster_size) every
 * member of a community is linked to each of its elements. Otherwise `clusterOf` (k-means
 * with k = ⌈√n⌉ over members and elements) restricts links to pairs in the same cluster; an
 * element left without members is linked to the nearest member of its community.
 */
export function linkMembers(
  inputs: readonly LinkInput[],
  hclusterSize: number,
  g: number,
  graph: BaseGraph,
  tables: ElementTables,
  cluster: (
    ids: string[],
    k: number,
  ) => { clusterOf: Map<string, number>; nearest: (element: string, candidates: string[]) => string },
): { edges: number; clustered: boolean } {
  const memberIds = new Set<string>();
  const elementIds = new Set<string>();
  for (const inp of inputs) {
    for (const m of inp.community.members) memberIds.add(m);
    for (const e of inp.elements) elementIds.add(e);
  }
  const n = memberIds.size + elementIds.size;
  const c = Math.ceil(Math.sqrt(n));
  const clustered = n > 0 && n / c > hclusterSize;
  const assignment = clustered ? cluster([...memberIds, ...elementIds].sort(), c) : undefined;

  let edges = 0;
  const link = (m: string, e: string) => {
    if (graph.ensureEdge(m, e, g)) edges++;
    const row = tables.elements.get(e)!;
    if (!row.relatedNodes.includes(m)) row.relatedNodes.push(m);
  };
  for (const { community, elements } of inputs) {
    for (const e of elements) {
      if (!assignment) {
        for (const m of community.members) link(m, e);
        continue;
      }
      const ce = assignment.clusterOf.get(e);
      const same = community.members.filter((m) => assignment.clusterOf.get(m) === ce);
      if (same.length) for (const m of same) link(m, e);
      else link(assignment.nearest(e, community.members), e);
    }
  }
  return { edges, clustered };
}
