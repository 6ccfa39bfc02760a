/**
 * Graph pipeline (docs/method.md §3.4): the parsed decompositions of generation g merged into the
 * committed graph and tables (ts/model/merge-decompositions.ts), in text_id order.
 * Graph tables (graph_nodes, graph_edges) are written by the stages that change the graph.
 */
import type { IndexData } from '../../index-io/index-data.js';
import { graphNodeRows, TABLES } from '../../index-io/tables.js';
import { mergeDecompositions } from '../../model/merge-decompositions.js';
import { count } from '../tree.js';
import type { StageContext, StageResult } from './context.js';
import { textOps } from './core.js';
import type { StageOutputs } from './outputs.js';

/** Stage graph_nodes.parquet and graph_edges.parquet from the in-memory graph. */
export async function stageGraphTables(index: IndexData, out: StageOutputs): Promise<void> {
  const graph = await index.graph();
  await out.table(TABLES.graphNodes, graphNodeRows(graph.nodes));
  await out.table(TABLES.graphEdges, graph.edges.values());
}

export async function graphStage(ctx: StageContext): Promise<StageResult> {
  const records = [...(await ctx.index.decompositions()).values()].filter(
    (r) => r.generation === ctx.g && r.status === 'ok',
  );
  const graph = await ctx.index.graph();
  const tables = {
    units: await ctx.index.units(),
    entities: await ctx.index.entities(),
    relationships: await ctx.index.relationships(),
  };
  ctx.progress.begin(records.length, 'decompositions');
  const stats = mergeDecompositions(records, ctx.g, graph, tables, ctx.counters, textOps);
  ctx.progress.update(records.length);

  const dim = ctx.config.config.dim;
  await ctx.out.table(TABLES.units, tables.units.values(), dim);
  await ctx.out.table(TABLES.entities, tables.entities.values());
  await ctx.out.table(TABLES.relationships, tables.relationships.values());
  await stageGraphTables(ctx.index, ctx.out);
  return {
    counts: { items: stats.units },
    summary: `${count(stats.units, 'unit')} (${stats.newUnits} new), ${count(stats.newEntities, 'new entity', 'new entities')}, ${count(stats.newRelationships, 'new relationship')}; graph ${count(graph.nodes.size, 'node')}, ${count(graph.edges.size, 'edge')}`,
  };
}
