/**
 * Insert text pipeline (docs/method.md §3.8): a `text` node for every chunk of generation g and
 * unit—text edges from every unit touched in g to each of its chunks not yet linked.
 */
import { insertText } from '../../model/insert-text.js';
import type { StageContext, StageResult } from './context.js';
import { stageGraphTables } from './graph.js';

export async function insertTextStage(ctx: StageContext): Promise<StageResult> {
  const [graph, texts, units] = await Promise.all([ctx.index.graph(), ctx.index.texts(), ctx.index.units()]);
  const r = insertText(ctx.g, graph, texts.values(), units.values());
  // The cycle's last change of the graph: its tables are written whole (no delta left).
  await stageGraphTables(ctx.index, ctx.out, { whole: true });
  return {
    counts: { items: r.textNodes },
    summary: `${r.textNodes} text nodes, ${r.edges} unit—text edges; graph ${graph.nodes.size} nodes, ${graph.edges.size} edges`,
  };
}
