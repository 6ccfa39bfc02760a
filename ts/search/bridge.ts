/**
 * Bridge passages (docs/method.md §6.7): the second hop of a multi-hop question.
 *
 * A question such as "What was the population of the city where Kerry Saxby-Junna was born?"
 * names the first passage; the answer sits in a passage about an entity that only the first
 * passage names (the town). Vector search ranks that second passage low (it shares little
 * with the question) and propagation spreads over every entity of the first hop. This step
 * follows the graph from the passages already in the context to the entities they mention,
 * and from those entities to the passages that mention them, then keeps the candidates
 * closest to the question:
 *
 *   context passages → their semantic units → entities of degree ≤ `maxDegree`
 *     → the units of those entities → their passages (not yet in the context)
 *
 * The degree cap keeps specific names (a town, a person) and leaves out generic entities
 * ("AMERICAN", "FILM") whose passages are a sample of the corpus. Candidates are ranked by
 * their vector distance to the question, known for the nodes of the question's vector search
 * (retrieve.ts widens it to BRIDGE_BEAM hits when this step is on); candidates outside it
 * follow, by the number of bridge entities that reach them, then by node index.
 * Deterministic for a given index and question.
 *
 * Measured on HotpotQA-100 (bench/RESULTS.md ## quality): this is the step that puts the
 * default context ahead of naive top-k chunks at the same tokens.
 */
import { nodeTypeCode } from '../model/types.js';
import type { LoadedIndex } from './loaded-index.js';
import { NodeMarks, retrievalScratch } from './node-marks.js';

export interface BridgeParams {
  /** `bridge_passages`: passages added at most (0 disables the step). */
  passages: number;
  /** `bridge_max_degree`: an entity links passages only when it has at most this many neighbours. */
  maxDegree: number;
}

/** Vector hits read when this step is on: ranks candidates without an exact scan of the index. */
export const BRIDGE_BEAM = 100;

/**
 * Text nodes to add to a context that already holds the passages `contextChunks` (distinct
 * text node indexes), best first.
 *
 * Per question this runs on every request, so it walks the adjacency arrays directly and keeps
 * its sets in the index's reusable marks (node-marks.ts) instead of a Set, a Map and a
 * subarray per visited node.
 */
export function bridgePassages(
  index: LoadedIndex,
  contextChunks: readonly number[],
  /** Distance to the question of the nodes its vector search returned (undefined for the others). */
  near: { get(node: number): number | undefined },
  params: BridgeParams,
): number[] {
  if (params.passages <= 0 || contextChunks.length === 0) return [];
  const lists = bridgeLists(index, params.maxDegree);
  const s = retrievalScratch(index, index.nodeCount);
  s.drawnOn.clear();
  for (const chunk of contextChunks) s.drawnOn.add(chunk);

  // Entities of the context's units, specific enough to be a bridge.
  s.entities.clear();
  const entities: number[] = [];
  const { chunkUnits, unitEntities, entityChunks } = lists;
  for (const chunk of contextChunks) {
    for (let a = chunkUnits.offsets[chunk]!, aEnd = chunkUnits.offsets[chunk + 1]!; a < aEnd; a++) {
      const unit = chunkUnits.nodes[a]!;
      for (let b = unitEntities.offsets[unit]!, bEnd = unitEntities.offsets[unit + 1]!; b < bEnd; b++) {
        const e = unitEntities.nodes[b]!;
        if (s.entities.add(e)) entities.push(e);
      }
    }
  }
  // Passages those entities lead to, with the number of bridge entities reaching each.
  s.candidates.clear();
  const candidates: number[] = [];
  const links = s.links;
  for (const e of entities) {
    for (let a = entityChunks.offsets[e]!, aEnd = entityChunks.offsets[e + 1]!; a < aEnd; a++) {
      const chunk = entityChunks.nodes[a]!;
      if (s.drawnOn.has(chunk)) continue;
      if (s.candidates.add(chunk)) {
        links[chunk] = 1;
        candidates.push(chunk);
      } else links[chunk]!++;
    }
  }

  const byDistance = (a: number, b: number) => {
    const da = near.get(a);
    const db = near.get(b);
    if (da === undefined || db === undefined) return (da === undefined ? 1 : 0) - (db === undefined ? 1 : 0);
    return da - db;
  };
  // A strict total order (ties end on the node index), so keeping the best few while
  // scanning gives exactly the first `passages` of the sorted candidates.
  const before = (a: number, b: number) => (byDistance(a, b) || links[b]! - links[a]! || a - b) < 0;
  const best: number[] = [];
  for (const c of candidates) {
    if (best.length === params.passages && !before(c, best[best.length - 1]!)) continue;
    let at = best.length;
    while (at > 0 && before(c, best[at - 1]!)) at--;
    best.splice(at, 0, c);
    if (best.length > params.passages) best.pop();
  }
  return best;
}

/** Node lists by node: the list of node i is `nodes[offsets[i] .. offsets[i + 1]]`. */
interface NodeLists {
  offsets: Uint32Array;
  nodes: Uint32Array;
}

/**
 * The three steps of the walk above, read off the base graph once per index and degree cap
 * (a question then follows short lists instead of testing the type and degree of every
 * neighbour on its way), each in adjacency order, so the walk visits what it visited before
 * in the same order:
 * - `chunkUnits`: the semantic-unit neighbours of each node;
 * - `unitEntities`: the entity neighbours of each node with at most `maxDegree` neighbours;
 * - `entityChunks`: the distinct passages (`chunkOf`, none left out but −1) of each node's
 *   semantic-unit neighbours, in first-seen order.
 */
interface BridgeLists {
  maxDegree: number;
  chunkUnits: NodeLists;
  unitEntities: NodeLists;
  entityChunks: NodeLists;
}

const listsOf = new WeakMap<LoadedIndex, BridgeLists>();

function bridgeLists(index: LoadedIndex, maxDegree: number): BridgeLists {
  const kept = listsOf.get(index);
  if (kept && kept.maxDegree === maxDegree) return kept;
  const unitCode = nodeTypeCode('semantic_unit');
  const entityCode = nodeTypeCode('entity');
  const { offsets, targets } = index.adjacency;
  const { types, chunkOf } = index;
  const n = index.nodeCount;
  const isUnit = (v: number) => types[v] === unitCode;
  const isBridge = (v: number) => types[v] === entityCode && offsets[v + 1]! - offsets[v]! <= maxDegree;
  const seen = new NodeMarks(n);
  const lists: BridgeLists = {
    maxDegree,
    chunkUnits: collect(n, targets.length, (u, push) => {
      for (let a = offsets[u]!; a < offsets[u + 1]!; a++) if (isUnit(targets[a]!)) push(targets[a]!);
    }),
    unitEntities: collect(n, targets.length, (u, push) => {
      for (let a = offsets[u]!; a < offsets[u + 1]!; a++) if (isBridge(targets[a]!)) push(targets[a]!);
    }),
    entityChunks: collect(n, targets.length, (u, push) => {
      seen.clear();
      for (let a = offsets[u]!; a < offsets[u + 1]!; a++) {
        const v = targets[a]!;
        if (!isUnit(v)) continue;
        const chunk = chunkOf[v]!;
        if (chunk >= 0 && seen.add(chunk)) push(chunk);
      }
    }),
  };
  listsOf.set(index, lists);
  return lists;
}

/** The lists `each(node, push)` gives for every node, as one NodeLists. */
function collect(
  n: number,
  /** The most entries the lists can hold together. */
  capacity: number,
  each: (node: number, push: (v: number) => void) => void,
): NodeLists {
  const out = new Uint32Array(capacity);
  const starts = new Uint32Array(n + 1);
  let size = 0;
  const push = (v: number) => {
    out[size++] = v;
  };
  for (let u = 0; u < n; u++) {
    starts[u] = size;
    each(u, push);
  }
  starts[n] = size;
  return { offsets: starts, nodes: out.slice(0, size) };
}
