/**
 * The retrieval of one question on a loaded index, once the provider calls are done
 * (docs/method.md §6.2 steps 3–6): vector search, exact matching, seeds, propagation, typed
 * selection, context. Synchronous, so many questions can be retrieved at once on one index:
 * the only state it shares is the index's scratch marks (node-marks.ts), used within one call.
 *
 * Everything runs on dense node indexes; hash ids are looked up only for the items returned
 * (string ids in Sets and Maps were a fifth of the per-question JavaScript time).
 */
import type { ConfigSettings } from '../config/node-config.js';
import type { PropagationOptions } from '../graph/index.js';
import { NODE_TYPES, type NodeType, nodeTypeCode } from '../model/types.js';
import { BRIDGE_BEAM, bridgePassages } from './bridge.js';
import {
  CONTEXT_SECTION_ORDER,
  type ContextSection,
  contextTokens,
  formatContext,
  formatContextJson,
} from './context.js';
import type { LoadedIndex } from './loaded-index.js';
import { retrievalScratch } from './node-marks.js';
import { type Quotas, selectRanked } from './select.js';

export interface SearchParams {
  /** `HNSW_results`: vector hits asked for (clamped to the active vectors). */
  hnswResults: number;
  /** `ef_search`: the query beam is max(ef_search, k). */
  efSearch: number;
  similarityWeight: number;
  accuracyWeight: number;
  propagation: PropagationOptions;
  quotas: Quotas;
  /** `bridge_passages` / `bridge_max_degree` (§6.7). */
  bridge: { passages: number; maxDegree: number };
}

export function searchParamsFrom(c: ConfigSettings): SearchParams {
  return {
    hnswResults: c.HNSW_results,
    efSearch: c.ef_search,
    similarityWeight: c.similarity_weight,
    accuracyWeight: c.accuracy_weight,
    propagation: { alpha: c.ppr_alpha, maxIter: c.ppr_max_iter, mode: c.ppr_mode },
    quotas: { crossNode: c.cross_node, entity: c.Enode, relationship: c.Rnode, title: c.Hnode },
    bridge: { passages: c.bridge_passages, maxDegree: c.bridge_max_degree },
  };
}

/** What the providers produced for a question. */
export interface QueryInputs {
  /** The question's embedding; null when no vector search is made (k = 0). */
  vector: Float32Array | null;
  /** Elements of the decomposition (prompt Q). */
  elements: readonly string[];
}

/** One piece of the context. */
/** Frozen: results may be shared through the retrieval cache, so they are read-only. */
export interface RetrievedItem {
  readonly id: string;
  readonly type: ContextSection;
  readonly text: string;
  /** Relative path of the source document (of the node's first chunk), or null (high-level elements). */
  readonly document: string | null;
  /**
   * `vector`: a vector-search hit; `propagation`: selected from the propagation ranking;
   * `bridge`: a passage reached from the context's entities (§6.7).
   */
  readonly origin: 'vector' | 'propagation' | 'bridge';
  /**
   * Propagation score of the ranked node that brought the item (the item itself, or the
   * entity of an attribute, or the title of an element); null for vector hits.
   */
  readonly score: number | null;
  /** Vector distance of a hit (squared L2, or 1 − cos); null otherwise. */
  readonly distance: number | null;
}

export interface StageTimings {
  vectorMs: number;
  matchMs: number;
  propagateMs: number;
  selectMs: number;
  contextMs: number;
}

export interface Retrieval {
  /** Context items in context order (sections in the fixed order, then list order). */
  items: RetrievedItem[];
  /** Dense node index of each item (same order), so sources need no lookup by id. */
  nodes: readonly number[];
  /** The context string of §6.6 (`retrievalInfo`), made when first read. */
  readonly context: string;
  /** o200k_base tokens of `context`, summed from per-node counts (context.ts `contextTokens`). */
  readonly tokens: number;
  /**
   * The UTF-8 of `JSON.stringify(context)` as pieces to be joined, made from per-node pieces
   * (context.ts formatContextJson).
   */
  contextJson: readonly Uint8Array[];
  /** Vector-hit and exact-match node ids that seeded the propagation. */
  seeds: { hits: string[]; matches: string[] };
  timings: StageTimings;
}

/** k of the vector search: min(HNSW_results, active vectors). */
export function vectorK(index: LoadedIndex, params: SearchParams): number {
  return index.vectors ? Math.min(params.hnswResults, index.activeVectors) : 0;
}

const CROSS_TYPES: readonly NodeType[] = ['text', 'semantic_unit', 'attribute', 'high_level_element'];

/**
 * Per-type quotas for the native top-k: the §6.5 walk skips nodes already in the search
 * list, so each cross type gets room for the hits of its type and, for attributes and
 * elements, for those entities and titles may add first. The walk then sees every node it
 * could use, in the same order as over the full ranking.
 */
function nativeQuotas(quotas: Quotas, hitsPerType: Uint32Array): Uint32Array {
  const q = new Uint32Array(NODE_TYPES.length);
  q[nodeTypeCode('entity')] = quotas.entity;
  q[nodeTypeCode('relationship')] = quotas.relationship;
  q[nodeTypeCode('high_level_element_title')] = quotas.title;
  if (quotas.crossNode > 0) {
    for (const t of CROSS_TYPES) {
      const code = nodeTypeCode(t);
      q[code] = quotas.crossNode + hitsPerType[code]!;
    }
    q[nodeTypeCode('attribute')]! += quotas.entity;
    q[nodeTypeCode('high_level_element')]! += quotas.title;
  }
  return q;
}

export function retrieve(index: LoadedIndex, query: QueryInputs, params: SearchParams): Retrieval {
  const t0 = performance.now();

  // Vector search: hits ordered by distance, ties by node index. With bridge passages on, one
  // wider search also gives the distances that rank the bridge candidates (§6.7); the hits
  // are its first k.
  // The beam's nodes and distances as two arrays (no object per hit).
  const beamNodes: number[] = [];
  const beamDistances: number[] = [];
  const k = vectorK(index, params);
  const beam =
    params.bridge.passages > 0 && k > 0 ? Math.min(Math.max(k, BRIDGE_BEAM), index.activeVectors) : k;
  if (k > 0 && query.vector && index.vectors) {
    const r = index.vectors.search(query.vector, beam, Math.max(params.efSearch, beam));
    for (let i = 0; i < r.labels.length; i++) {
      const node = index.labelNode[r.labels[i]!] ?? -1;
      if (node >= 0) {
        beamNodes.push(node);
        beamDistances.push(r.distances[i]!);
      }
    }
    orderTiesByNode(beamNodes, beamDistances);
  }
  const scratch = retrievalScratch(index, index.nodeCount);
  const near = scratch.near;
  near.clear();
  for (let i = 0; i < beamNodes.length; i++) near.set(beamNodes[i]!, beamDistances[i]!);
  const hitNodes = beamNodes.slice(0, k);
  const t1 = performance.now();

  // Exact matching of the elements on entity names and titles (names in id order).
  const elements: string[] = [];
  for (const e of query.elements) if (!elements.includes(e)) elements.push(e);
  const matches = elements.length > 0 ? index.matcher.find(elements) : [];
  const t2 = performance.now();

  // Seeds, then propagation with per-type top-k.
  const seedCount = hitNodes.length + matches.length;
  const seedIds = new Uint32Array(seedCount);
  const seedWeights = new Float64Array(seedCount);
  const hitsPerType = new Uint32Array(NODE_TYPES.length);
  for (let i = 0; i < hitNodes.length; i++) {
    const node = hitNodes[i]!;
    seedIds[i] = node;
    seedWeights[i] = params.similarityWeight;
    hitsPerType[index.types[node]!]!++;
  }
  for (let i = 0; i < matches.length; i++) {
    seedIds[hitNodes.length + i] = matches[i]!;
    seedWeights[hitNodes.length + i] = params.accuracyWeight;
  }
  const top =
    seedCount > 0
      ? index.graph.topNodes(
          { ids: seedIds, weights: seedWeights },
          nativeQuotas(params.quotas, hitsPerType),
          params.propagation,
        )
      : null;
  const t3 = performance.now();

  // Selection (§6.5).
  const selection = selectRanked(
    hitNodes,
    top,
    params.quotas,
    (entity) => nodeOrUndefined(index.attributeOf[entity]!),
    (title) => nodeOrUndefined(index.elementOf[title]!),
    scratch.listed,
  );
  const t4 = performance.now();

  // No text twice: a semantic unit whose chunk is in the context adds nothing.
  const { searchList: listed, searchPositions } = selection;
  const chunkOf = index.chunkOf;
  const inContext = scratch.inContext;
  inContext.clear();
  for (const node of listed) if (chunkOf[node] === node) inContext.add(node);
  // The listed nodes in list order (kept search list, bridges, relationships), with why
  // each is there: ORIGINS[origin[i]] and the ranking position that brought it.
  const listNodes: number[] = [];
  const listOrigins: number[] = [];
  const listPositions: number[] = [];
  // Bridge passages (§6.7): from every passage the context draws on, units included.
  const drawnOn: number[] = [];
  for (let i = 0; i < listed.length; i++) {
    const node = listed[i]!;
    const c = chunkOf[node]!;
    if (!(c < 0 || c === node || !inContext.has(c))) continue;
    const position = searchPositions[i]!;
    listNodes.push(node);
    listOrigins.push(position < 0 ? VECTOR : PROPAGATION);
    listPositions.push(position);
    if (c >= 0 && !drawnOn.includes(c)) drawnOn.push(c);
  }
  const bridges = bridgePassages(index, drawnOn, near, params.bridge);
  for (const node of bridges) {
    listNodes.push(node);
    listOrigins.push(BRIDGE);
    listPositions.push(-1);
  }
  for (let i = 0; i < selection.relationships.length; i++) {
    listNodes.push(selection.relationships[i]!);
    listOrigins.push(PROPAGATION);
    listPositions.push(selection.relationshipPositions[i]!);
  }
  // Items and the context string (§6.6): sections in the fixed order, list order within.
  const items: RetrievedItem[] = [];
  const nodes: number[] = [];
  for (const section of CONTEXT_SECTION_ORDER) {
    const code = nodeTypeCode(section);
    for (let i = 0; i < listNodes.length; i++) {
      const node = listNodes[i]!;
      if (index.types[node] !== code) continue;
      const origin = ORIGINS[listOrigins[i]!]!;
      items.push({
        id: index.idOf(node),
        type: section,
        text: index.textOf(node),
        document: index.documentOf(node),
        origin,
        score: origin === 'propagation' ? top!.scores[listPositions[i]!]! : null,
        distance: origin === 'vector' ? (near.get(node) ?? null) : null,
      });
      nodes.push(node);
    }
  }
  const contextJson = formatContextJson(items, (i) => index.textJsonOf(nodes[i]!));
  const t5 = performance.now();

  return new RetrievalOf(
    items,
    nodes,
    contextJson,
    { hits: hitNodes.map((node) => index.idOf(node)), matches: matches.map((m) => index.idOf(m)) },
    {
      vectorMs: t1 - t0,
      matchMs: t2 - t1,
      propagateMs: t3 - t2,
      selectMs: t4 - t3,
      contextMs: t5 - t4,
    },
    index,
  );
}

/**
 * A retrieval whose context string is made when first read: the server replies with
 * `contextJson` and never reads it, an answer or a library caller does; its token count
 * likewise, from the index's per-node counts. (A cached retrieval is frozen; the string and
 * the count are kept in private fields, which freezing leaves writable.)
 */
class RetrievalOf implements Retrieval {
  #context: string | undefined;
  #tokens: number | undefined;
  readonly #index: LoadedIndex;
  constructor(
    public items: RetrievedItem[],
    public nodes: readonly number[],
    public contextJson: readonly Uint8Array[],
    public seeds: { hits: string[]; matches: string[] },
    public timings: StageTimings,
    index: LoadedIndex,
  ) {
    this.#index = index;
  }

  get context(): string {
    this.#context ??= formatContext(this.items);
    return this.#context;
  }

  get tokens(): number {
    this.#tokens ??= contextTokens(this.items, (i, last) => this.#index.lineTokensOf(this.nodes[i]!, last));
    return this.#tokens;
  }
}

/**
 * Hits come from the native search ordered by (distance, HNSW label); the method orders ties
 * by node index (docs/method.md §6.2). Equal distances are adjacent, so an insertion sort
 * that moves a node only past larger nodes of the same distance gives the (distance, node)
 * order without sorting objects. `distances` is left as it is: equal within every moved run.
 */
export function orderTiesByNode(nodes: number[], distances: readonly number[]): void {
  for (let i = 1; i < nodes.length; i++) {
    const node = nodes[i]!;
    const d = distances[i]!;
    let j = i;
    while (j > 0 && distances[j - 1] === d && nodes[j - 1]! > node) {
      nodes[j] = nodes[j - 1]!;
      j--;
    }
    nodes[j] = node;
  }
}

/** Origins of listed nodes, by the codes the list keeps. */
const VECTOR = 0;
const PROPAGATION = 1;
const BRIDGE = 2;
const ORIGINS: readonly RetrievedItem['origin'][] = ['vector', 'propagation', 'bridge'];

function nodeOrUndefined(node: number): number | undefined {
  return node >= 0 ? node : undefined;
}
