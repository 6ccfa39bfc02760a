/**
 * Insert text pipeline (docs/method.md §3.8): a `text` node for every chunk of generation g,
 * and unit—text edges from every unit touched in g to each of its chunks not yet linked.
 */
import type { BaseGraph } from './graph-store.js';
import type { SemanticUnitRow, TextRow } from './types.js';

export function insertText(
  g: number,
  graph: BaseGraph,
  texts: Iterable<TextRow>,
  units: Iterable<SemanticUnitRow>,
): { textNodes: number; edges: number } {
  let textNodes = 0;
  let edges = 0;
  for (const t of texts) {
    if (t.generation !== g || graph.hasNode(t.hashId)) continue;
    graph.bumpNode(t.hashId, 'text', g);
    textNodes++;
  }
  for (const u of units) {
    if (u.updatedGeneration !== g) continue;
    for (const chunk of u.textHashIds) {
      if (!graph.hasNode(chunk)) continue; // a chunk from a failed/queued cycle never gets an edge to nothing
      if (graph.ensureEdge(u.hashId, chunk, g)) edges++;
    }
  }
  return { textNodes, edges };
}
