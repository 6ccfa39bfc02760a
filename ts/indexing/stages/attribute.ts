/**
 * Attribute pipeline (docs/method.md §3.5). Importance is judged on the core graph C (semantic
 * units, entities, relationships of the whole merged graph): an entity is important when
 * its weight is > 1 and it is in the k-core or its betweenness exceeds the threshold.
 * An important entity gets one plain call (prompt A) when it has no attribute (in an
 * incremental cycle: and its support changed in it), or when its prompt input differs from the one its attribute was written from (recorded as a SHA-256 in
 * cache/attribute_inputs.json); results are applied in the order of the entities' numbers.
 * A regenerated attribute keeps its id and number; its vector is cleared. An attribute a
 * sync retired (ts/indexing/stages/document.ts) is put back unchanged, vector included,
 * when its input is the same again.
 */
import { createHash } from 'node:crypto';
import { betweenness, coreNumbers } from '../../graph/index.js';
import { ATTRIBUTE_INPUTS_FILE, serializeAttributeInputs } from '../../index-io/attribute-inputs.js';
import { TABLES } from '../../index-io/tables.js';
import { adjacency, toDense } from '../../model/adjacency.js';
import { attributeAction } from '../../model/attribute-selection.js';
import type { BaseGraph } from '../../model/graph-store.js';
import { type MaterialItem, rankMaterial, trimToBudget } from '../../model/material.js';
import type {
  AttributeRow,
  EntityRow,
  NodeType,
  RelationshipRow,
  SemanticUnitRow,
} from '../../model/types.js';
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
  const [cores, scores] = await Promise.all([coreNumbers(edges), betweenness(edges, 42, dense.ids)]);
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

/** SHA-256 of the chat model (provider, model, params): part of every input hash. */
function modelHash(ctx: StageContext): string {
  const { provider, model, params } = ctx.providers.chat.identity;
  return createHash('sha256')
    .update(JSON.stringify([provider, model, params]))
    .digest('hex');
}

/** SHA-256 of what a reply depends on: the chat model and the task input of prompt A. */
function inputHash(ctx: StageContext, p: Prompt): string {
  const { provider, model, params } = ctx.providers.chat.identity;
  return createHash('sha256')
    .update(JSON.stringify([provider, model, params, p.entity.context, p.units, p.relationships]))
    .digest('hex');
}

/** Prompt A's material for one entity: neighbouring units and relationships, ranked and trimmed. */
function promptFor(
  entity: EntityRow,
  graph: BaseGraph,
  adj: ReturnType<typeof adjacency>,
  tables: { units: Map<string, SemanticUnitRow>; relationships: Map<string, RelationshipRow> },
  budget: number,
  countTokens: (texts: string[]) => ArrayLike<number>,
): Prompt {
  const items: (MaterialItem & { kind: 'unit' | 'relationship' })[] = [];
  for (const nb of adj.get(entity.hashId) ?? []) {
    const node = graph.nodes.get(nb.id)!;
    if (node.type === 'semantic_unit') {
      items.push({
        id: nb.id,
        text: tables.units.get(nb.id)!.context,
        primary: nb.weight,
        secondary: node.weight,
        kind: 'unit',
      });
    } else if (node.type === 'relationship') {
      const r = tables.relationships.get(nb.id)!;
      items.push({
        id: nb.id,
        text: r.relations.join('; '),
        primary: nb.weight,
        secondary: node.weight,
        kind: 'relationship',
      });
    }
  }
  const nameTokens = countTokens([entity.context])[0] ?? 0;
  const kept = trimToBudget(rankMaterial(items), budget, countTokens, nameTokens);
  return {
    entity,
    units: kept.filter((i) => i.kind === 'unit').map((i) => i.text),
    relationships: kept.filter((i) => i.kind === 'relationship').map((i) => i.text),
  };
}

export async function attributeStage(ctx: StageContext): Promise<StageResult> {
  // (Read together: see pruneUnlisted in ./document.ts.)
  const i = ctx.index;
  const [graph, entities, units, relationships, attributes, recorded] = await Promise.all([
    i.graph(),
    i.entities(),
    i.units(),
    i.relationships(),
    i.attributes(),
    i.attributeInputs(),
  ]);
  const g = ctx.g;

  const { important, nodes, k, threshold } = await importantEntities(graph);
  ctx.stop.check();

  // Every important entity's prompt input is compared with the one its attribute was written
  // from (attribute_inputs.json): a model call only when it changed. An attribute the sync's
  // Document commit retired comes back as it was when its input is the same again.
  // Entities of weight > 1 whose input is judged in this cycle even when they are not
  // important (all of them in a first build, those whose support changed in a later one):
  // the loop after the important ones records their input.
  const judged = (entity: EntityRow) =>
    entity.weight > 1 && (!ctx.state.is_incremental || entity.updatedGeneration === g);
  // Adjacency lists only of the entities whose prompt may be made below.
  const prompted = new Set(important);
  for (const [id, entity] of entities) if (judged(entity)) prompted.add(id);
  const adj = adjacency(graph, prompted);
  const budget = ctx.config.config.material_token_budget;
  // A unit or relationship is material of every entity it links: count its tokens once.
  const tokens = new Map<string, number>();
  const countTokens = (texts: string[]): number[] => {
    const missing = [...new Set(texts.filter((t) => !tokens.has(t)))];
    const counts = countTokensBatch(missing);
    missing.forEach((t, i) => {
      tokens.set(t, counts[i]!);
    });
    return texts.map((t) => tokens.get(t)!);
  };
  // A first build makes the prompt (to ask or to hash) of every entity of weight > 1: count
  // the texts their material comes from in one native call rather than one call per entity.
  // A later cycle touches few entities and counts as it goes.
  if (!ctx.state.is_incremental) {
    const material: string[] = [];
    for (const entity of entities.values()) if (entity.weight > 1) material.push(entity.context);
    for (const unit of units.values()) material.push(unit.context);
    for (const r of relationships.values()) material.push(r.relations.join('; '));
    countTokens(material);
  }
  const model = modelHash(ctx);
  const sameModel = recorded.model === model;
  /** A neighbour of `id` (unit, relationship, attribute, …) changed in this cycle. */
  const neighbourhoodTouched = (id: string) =>
    (adj.get(id) ?? []).some((nb) => graph.nodes.get(nb.id)?.updatedGeneration === g);
  const prompts: Prompt[] = [];
  const hashes: string[] = [];
  let kept = 0;
  let untouched = 0;
  let restored = 0;
  let unjudged = 0;
  for (const entity of [...important]
    .map((id) => entities.get(id)!)
    .sort((a, b) => a.humanReadableId - b.humanReadableId)) {
    const id = attributeId(entity.hashId);
    const known = attributes.get(id);
    const retired = recorded.retired.get(id);
    // The prompt and its hash, computed only when a rule needs them.
    const input: { prompt?: Prompt; hash?: string } = {};
    const action = attributeAction(
      {
        hasAttribute: known !== undefined,
        recordedInput: recorded.inputs.get(id),
        retiredInput: retired?.input,
        unimportantInput: recorded.unimportant.get(entity.hashId),
        incremental: ctx.state.is_incremental,
        touched: entity.updatedGeneration === g,
        neighbourhoodTouched: neighbourhoodTouched(entity.hashId),
        sameModel,
      },
      () => {
        input.prompt = promptFor(entity, graph, adj, { units, relationships }, budget, countTokens);
        input.hash = inputHash(ctx, input.prompt);
        return input.hash;
      },
    );
    if (action === 'leave') {
      unjudged++;
      continue;
    }
    if (action === 'keep') {
      if (input.hash !== undefined) kept++;
      else if (known && recorded.inputs.has(id)) untouched++;
      continue;
    }
    const { prompt, hash } = input as Required<typeof input>;
    if (action === 'restore' && retired) {
      attributes.set(id, {
        hashId: id,
        humanReadableId: retired.humanReadableId,
        node: entity.hashId,
        context: retired.context,
        weight: entity.weight,
        embedding: retired.embedding,
        generation: retired.generation,
        updatedGeneration: retired.updatedGeneration,
      });
      graph.bumpNode(id, 'attribute', g);
      graph.ensureEdge(entity.hashId, id, g);
      recorded.inputs.set(id, hash);
      restored++;
      continue;
    }
    prompts.push(prompt);
    hashes.push(hash);
  }
  recorded.retired.clear();
  recorded.model = model;
  // The input of every entity judged not important in this cycle (all of them in a first
  // build, those whose support changed in a later one), for the test above; an important
  // entity left without an attribute keeps the input it was last judged with. Entities of
  // weight 1 are never important and are not recorded.
  const asked = new Set(prompts.map((p) => p.entity.hashId));
  for (const [id, entity] of entities) {
    if (entity.weight <= 1 || asked.has(id) || attributes.has(attributeId(id))) {
      recorded.unimportant.delete(id);
    } else if (!important.has(id) && judged(entity)) {
      recorded.unimportant.set(
        id,
        inputHash(ctx, promptFor(entity, graph, adj, { units, relationships }, budget, countTokens)),
      );
    }
  }
  for (const id of recorded.unimportant.keys()) if (!entities.has(id)) recorded.unimportant.delete(id);

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
        ctx.stop.callOptions,
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
    recorded.inputs.set(id, hashes[i]!);
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
  await ctx.out.file(ATTRIBUTE_INPUTS_FILE, serializeAttributeInputs(recorded));
  await stageGraphTables(ctx.index, ctx.out);
  const s = ctx.providers.chat.stats();
  return {
    counts: {
      items: prompts.length,
      calls: s.calls - before.calls,
      cacheHits: s.cacheHits - before.cacheHits,
      retries: s.retries - before.retries,
    },
    summary: `${important.size} important entities of ${entities.size} (core graph ${nodes} nodes, k=${k}, threshold ${threshold.toFixed(2)}); ${created} attributes created, ${regenerated} regenerated, ${restored} restored, ${kept} kept (same input) and ${untouched} kept (nothing around them changed), ${unjudged} newly important but unchanged left without one; ${note()}`,
  };
}
