/**
 * What a sync must leave equal to a clean build of the same folder (docs/method.md §4.5): the
 * text, semantic-unit, entity and relationship tables and the base graph (semantic_unit,
 * entity and relationship nodes and the edges between them), without numbers, generations
 * or orders that may legitimately differ: `npm run bench -- update`'s tables_equal and the sync
 * tests compare two of these.
 */
import { IndexData } from '../../ts/index-io/index-data.js';

const BASE = new Set(['semantic_unit', 'entity', 'relationship']);
const sorted = <T>(xs: Iterable<T>) => [...xs].sort();

export async function comparableIndex(root: string, dim: number) {
  const index = new IndexData(root, dim);
  const graph = await index.graph();
  const isBase = (id: string) => BASE.has(graph.nodes.get(id)?.type ?? '');
  return {
    text: sorted([...(await index.texts()).values()].map((t) => `${t.hashId} ${t.context}`)),
    units: sorted(
      [...(await index.units()).values()].map((u) =>
        JSON.stringify([u.hashId, u.context, u.weight, sorted(u.textHashIds)]),
      ),
    ),
    entities: sorted(
      [...(await index.entities()).values()].map((e) => JSON.stringify([e.hashId, e.context, e.weight])),
    ),
    relationships: sorted(
      [...(await index.relationships()).values()].map((r) =>
        JSON.stringify([r.hashId, r.uniqueRelationship, r.weight, sorted(r.relations)]),
      ),
    ),
    baseNodes: sorted(
      [...graph.nodes].filter(([id]) => isBase(id)).map(([id, n]) => `${id} ${n.type} ${n.weight}`),
    ),
    baseEdges: sorted(
      [...graph.edges.values()]
        .filter((e) => isBase(e.source) && isBase(e.target))
        .map((e) => `${e.source} ${e.target} ${e.weight}`),
    ),
  };
}
