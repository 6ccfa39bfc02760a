/**
 * Graph pipeline (docs/method.md §3.4): the parsed decompositions of generation g merged into the
 * committed graph and tables (ts/model/merge-decompositions.ts), in text_id order.
 * The graph is staged by the stages that change it (stageGraphTables).
 */
import {
  emptyGraphDelta,
  GRAPH_DELTA_FILE,
  graphDeltaSize,
  serializeGraphDelta,
} from '../../index-io/graph-delta.js';
import type { IndexData } from '../../index-io/index-data.js';
import {
  RETIRED_VECTORS_FILE,
  readRetiredVectors,
  serializeRetiredVectors,
} from '../../index-io/retired-vectors.js';
import { graphNodeRows, TABLES } from '../../index-io/tables.js';
import { mergeDecompositions } from '../../model/merge-decompositions.js';
import { restateForms } from '../../model/restate-forms.js';
import { resolveInProject } from '../../project/layout.js';
import { count } from '../tree.js';
import type { StageContext, StageResult } from './context.js';
import { textOps } from './core.js';
import { firstListing } from './document.js';
import type { StageOutputs } from './outputs.js';

/**
 * Stages the in-memory graph: as cache/graph_delta.json (what changed since graph_nodes.parquet
 * and graph_edges.parquet were last written whole), or, with `whole` (the cycle's last stage
 * that changes the graph) or once the delta reaches half the tables' rows, as both tables and
 * an empty delta (ts/index-io/graph-delta.ts).
 */
export async function stageGraphTables(
  index: IndexData,
  out: StageOutputs,
  options: { whole?: boolean } = {},
): Promise<void> {
  const graph = await index.graph();
  // No rows yet (a first build): the tables are written, even empty, so that a committed
  // Graph stage always leaves them (INIT expects them); the changes are not worked out (all
  // ~70k rows of HotpotQA-100 are new, ~0.1 s for nothing).
  if (!options.whole && index.graphTableRows > 0) {
    const delta = await index.graphChanges();
    const size = graphDeltaSize(delta);
    if (size * 2 <= index.graphTableRows) {
      if (size > 0 || index.hasGraphDelta) {
        await out.file(GRAPH_DELTA_FILE, serializeGraphDelta(delta));
        index.graphStaged(false);
      }
      return;
    }
  }
  await out.table(TABLES.graphNodes, graphNodeRows(graph.nodes));
  await out.table(TABLES.graphEdges, graph.edges.values());
  if (index.hasGraphDelta) await out.file(GRAPH_DELTA_FILE, serializeGraphDelta(emptyGraphDelta()));
  index.graphStaged(true);
}

export async function graphStage(ctx: StageContext): Promise<StageResult> {
  const i = ctx.index;
  const [decompositions, graph, units, entities, relationships] = await Promise.all([
    i.decompositions(),
    i.graph(),
    i.units(),
    i.entities(),
    i.relationships(),
  ]);
  const records = [...decompositions.values()].filter((r) => r.generation === ctx.g && r.status === 'ok');
  const tables = { units, entities, relationships };
  ctx.progress.begin(records.length, 'decompositions');
  const stats = mergeDecompositions(records, ctx.g, graph, tables, ctx.counters, textOps);
  ctx.progress.update(records.length);
  // A sync merged new chunks after the old ones: shared units and phrases take the form of
  // their first chunk in a clean build's order (ts/model/restate-forms.ts). A first build
  // merged in that order.
  const restated = ctx.state.is_incremental
    ? restateForms(
        decompositions.values(),
        // Each current chunk's place in a clean build's text_id order.
        new Map([...firstListing(await ctx.index.documents()).keys()].map((id, rank) => [id, rank])),
        tables,
        graph,
        ctx.g,
        textOps,
      )
    : { units: [], relationships: [] };
  // Units this cycle's Document commit removed and the new chunks brought back in the same
  // text take their vector and generation back: no embedding call, the same vector label.
  const retired = await readRetiredVectors(
    resolveInProject(ctx.root, RETIRED_VECTORS_FILE),
    RETIRED_VECTORS_FILE,
  );
  let restored = 0;
  for (const [id, r] of retired) {
    const unit = tables.units.get(id);
    if (!unit || unit.generation !== ctx.g || unit.embedding !== null) continue;
    if (r.context !== undefined && r.context !== unit.context) continue; // made from another form
    unit.embedding = r.embedding;
    unit.generation = r.generation;
    restored++;
  }

  const dim = ctx.config.config.dim;
  await ctx.out.table(TABLES.units, tables.units.values(), dim);
  await ctx.out.table(TABLES.entities, tables.entities.values());
  await ctx.out.table(TABLES.relationships, tables.relationships.values());
  await stageGraphTables(ctx.index, ctx.out);
  if (retired.size > 0) await ctx.out.file(RETIRED_VECTORS_FILE, serializeRetiredVectors(new Map()));
  return {
    counts: { items: stats.units },
    summary: `${count(stats.units, 'unit')} (${stats.newUnits} new), ${count(stats.newEntities, 'new entity', 'new entities')}, ${count(stats.newRelationships, 'new relationship')}${restored > 0 ? `, ${count(restored, 'unit')} added again with ${restored === 1 ? 'its' : 'their'} vector` : ''}${restated.units.length + restated.relationships.length > 0 ? `, ${count(restated.units.length, 'unit')} and ${count(restated.relationships.length, 'relationship')} restated in the form of their first chunk by path` : ''}; graph ${count(graph.nodes.size, 'node')}, ${count(graph.edges.size, 'edge')}`,
  };
}
