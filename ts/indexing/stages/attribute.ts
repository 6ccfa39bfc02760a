/**
 * Attribute pipeline (docs/method.md §3.5). Importance is judged on the core graph C (semantic
 * units, entities, relationships of the whole merged graph): an entity is important when
 * its weight is > 1 and it is in the k-core or its betweenness exceeds the threshold.
 * Important entities without an attribute, and important entities touched in generation g,
 * get one plain call (prompt A) each; results are applied in the order of the entities'
 * numbers. A regenerated attribute keeps its id and number; its vector is cleared.
 */
import { betweenness, coreNumbers } from '../../graph/index.js';
import { TABLES } from '../../index-io/tables.js';
import { adjacency, toDense } from '../../model/adjacency.js';
import type { BaseGraph } from '../../model/graph-store.js';
import { type MaterialItem, rankMaterial, trimToBudget } from '../../model/material.js';
import type { AttributeRow, EntityRow, NodeType } from '../../model/types.js';
import { attributeId } from '../../text/index.js';
import type { StageContext, StageResult } from './context.js';
import { countTokensBatch } from './core.js';
import { stageGraphTables } from './graph.js';
import { mapInOrder, poolSize } from './pool.js';

const CORE_TYPES: ReadonlySet<NodeType> = new Set(['semantic_unit', 'entity', 'relationship']);

/** Round half away from zero (JS Math.round rounds −0.5 up). */
function roundHalfAway(x: number): number {
  return Math.sign(x) * Math.round(Math.abs(x));
}

interface Importance {
  /** Important entity ids. */
  important: Set<string>;
  nodes: number;
  k: number;
  threshold: number;
}

/** The importance test of §3.5 over the whole merged graph. */
async function importantEntities(graph: BaseGraph): Promise<Importance> {
  const dense = toDense(graph, (_id, type) => CORE_TYPES.has(type));
  const n = dense.ids.length;
  const e = dense.src.length;
  const important = new Set<string>();
  if (n < 3 || e === 0) return { important, nodes: n, k: 0, threshold: 0 };
  const edges = { nodeCount: n, src: dense.src, dst: dense.dst };
  const [cores, scores] = await Promise.all([coreNumbers(edges), betweenness(edges, 42)]);
  const avgDegree = (2 * e) / n;
  const k = Math.max(1, roundHalfAway(Math.log(n) * Math.sqrt(avgDegree)));
  let sum = 0;
  for (const s of scores) sum += s;
  const threshold = roundHalfAway(Math.log10(n)) * (sum / n);
  dense.ids.forEach((id, i) => {
    const node = graph.nodes.get(id)!;
    if (node.type !== 'entity' || node.weight <= 1) return;
    if (cores[i]! >= k || scores[i]! > threshold) important.add(id);
  });
  return { important, nodes: n, k, threshold };
}

interface Prompt {
  entity: EntityRow;
  units: string[];
  relationships: string[];
}

export async function attributeStage(ctx: StageContext): Promise<StageResult> {
  const graph = await ctx.index.graph();
  const entities = await ctx.index.entities();
  const units = await ctx.index.units();
  const relationships = await ctx.index.relationships();
  const attributes = await ctx.index.attributes();
  const g = ctx.g;

  const { important, nodes, k, threshold } = await importantEntities(graph);
  ctx.stop.check();
  const selected = [...important]
    .map((id) => entities.get(id)!)
    .filter((e) => !attributes.has(attributeId(e.hashId)) || e.updatedGeneration === g)
    .sort((a, b) => a.humanReadableId - b.humanReadableId);

  // Material: neighbouring units and relationships ranked by (edge weight, neighbour weight, id).
  const adj = adjacency(graph);
  const budget = ctx.config.config.material_token_budget;
  const prompts: Prompt[] = selected.map((entity) => {
    const items: (MaterialItem & { kind: 'unit' | 'relationship' })[] = [];
    for (const nb of adj.get(entity.hashId) ?? []) {
      const node = graph.nodes.get(nb.id)!;
      if (node.type === 'semantic_unit') {
        items.push({
          id: nb.id,
          text: units.get(nb.id)!.context,
          primary: nb.weight,
          secondary: node.weight,
          kind: 'unit',
        });
      } else if (node.type === 'relationship') {
        const r = relationships.get(nb.id)!;
        items.push({
          id: nb.id,
          text: r.relations.join('; '),
          primary: nb.weight,
          secondary: node.weight,
          kind: 'relationship',
        });
      }
    }
    const nameTokens = countTokensBatch([entity.context])[0] ?? 0;
    const kept = trimToBudget(rankMaterial(items), budget, countTokensBatch, nameTokens);
    return {
      entity,
      units: kept.filter((i) => i.kind === 'unit').map((i) => i.text),
      relationships: kept.filter((i) => i.kind === 'relationship').map((i) => i.text),
    };
  });

  const before = ctx.providers.chat.stats();
  const note = () => {
    const s = ctx.providers.chat.stats();
    return `calls ${s.calls - before.calls}, cache hits ${s.cacheHits - before.cacheHits}`;
  };
  ctx.progress.begin(prompts.length, 'entities');
  const local = ctx.providers.chat.identity.provider === 'local';
  const replies = await mapInOrder(
    prompts,
    (p) =>
      ctx.providers.run(
        'attribute',
        { entity: p.entity.context, units: p.units, relationships: p.relationships },
        { signal: ctx.stop.signal },
      ),
    {
      concurrency: poolSize(ctx.config.model_config.rate_limit, local, ctx.config.model_config.max_in_flight),
      stop: ctx.stop,
      onProgress: (done) => ctx.progress.update(done, note()),
    },
  );

  let created = 0;
  let regenerated = 0;
  prompts.forEach((p, i) => {
    const id = attributeId(p.entity.hashId);
    const context = replies[i]!;
    const known = attributes.get(id);
    if (known) {
      known.context = context;
      known.weight = p.entity.weight;
      known.embedding = null;
      known.updatedGeneration = g;
      graph.touch(id, g);
      regenerated++;
    } else {
      ctx.counters.attribute_index += 1;
      const row: AttributeRow = {
        hashId: id,
        humanReadableId: ctx.counters.attribute_index,
        node: p.entity.hashId,
        context,
        weight: p.entity.weight,
        embedding: null,
        generation: g,
        updatedGeneration: g,
      };
      attributes.set(id, row);
      graph.bumpNode(id, 'attribute', g);
      created++;
    }
    graph.ensureEdge(p.entity.hashId, id, g);
  });

  await ctx.out.table(TABLES.attributes, attributes.values(), ctx.config.config.dim);
  await stageGraphTables(ctx.index, ctx.out);
  const s = ctx.providers.chat.stats();
  return {
    counts: {
      items: prompts.length,
      calls: s.calls - before.calls,
      cacheHits: s.cacheHits - before.cacheHits,
      retries: s.retries - before.retries,
    },
    summary: `${important.size} important entities of ${entities.size} (core graph ${nodes} nodes, k=${k}, threshold ${threshold.toFixed(2)}); ${created} attributes created, ${regenerated} regenerated; ${note()}`,
  };
}
