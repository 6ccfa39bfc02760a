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

export interface BridgeParams {
  /** `bridge_passages`: passages added at most (0 disables the step). */
  passages: number;
  /** `bridge_max_degree`: an entity links passages only when it has at most this many neighbours. */
  maxDegree: number;
}

/** Vector hits read when this step is on: ranks candidates without an exact scan of the index. */
export const BRIDGE_BEAM = 100;

/**
 * Text nodes to add to a context that already holds the passages `contextChunks` (text node
 * indexes), best first.
 */
export function bridgePassages(
  index: LoadedIndex,
  contextChunks: ReadonlySet<number>,
  /** Distance to the question of the nodes its vector search returned. */
  near: ReadonlyMap<number, number>,
  params: BridgeParams,
): number[] {
  if (params.passages <= 0 || contextChunks.size === 0) return [];
  const unitCode = nodeTypeCode('semantic_unit');
  const entityCode = nodeTypeCode('entity');

  // Entities of the context's units, specific enough to be a bridge.
  const entities = new Set<number>();
  for (const chunk of contextChunks) {
    for (const unit of index.neighbors(chunk)) {
      if (index.types[unit] !== unitCode) continue;
      for (const e of index.neighbors(unit)) {
        if (index.types[e] === entityCode && index.neighbors(e).length <= params.maxDegree) entities.add(e);
      }
    }
  }
  // Passages those entities lead to, with the number of bridge entities reaching each.
  const links = new Map<number, number>();
  for (const e of entities) {
    const reached = new Set<number>();
    for (const unit of index.neighbors(e)) {
      if (index.types[unit] !== unitCode) continue;
      const chunk = index.chunkOf[unit]!;
      if (chunk >= 0 && !contextChunks.has(chunk)) reached.add(chunk);
    }
    for (const c of reached) links.set(c, (links.get(c) ?? 0) + 1);
  }
  if (links.size === 0) return [];

  const byDistance = (a: number, b: number) => {
    const da = near.get(a);
    const db = near.get(b);
    if (da === undefined || db === undefined) return (da === undefined ? 1 : 0) - (db === undefined ? 1 : 0);
    return da - db;
  };
  return [...links.keys()]
    .sort((a, b) => byDistance(a, b) || links.get(b)! - links.get(a)! || a - b)
    .slice(0, params.passages);
}
