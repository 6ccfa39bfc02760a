/**
 * Summary pipeline (docs/method.md §3.7): Leiden communities over the nodes touched in generation
 * g, one structured call (prompt C) per community with members, high-level elements and
 * titles merged in community order, new element descriptions embedded, then members linked
 * to elements (directly, or through k-means clusters when the communities are large).
 * A community whose prompt input (hashed with the chat model) was recorded in
 * cache/community_inputs.json gets the elements recorded for it instead of a call. A sync
 * first forms again, with their recorded members, the communities it dropped whose members
 * all kept their texts (ts/model/summary.ts reformCommunities), and clusters the rest.
 */

import { createHash } from 'node:crypto';
import { InternalError } from '../../errors.js';
import { kmeans, leiden } from '../../graph/index.js';
import {
  COMMUNITY_INPUTS_FILE,
  type ProducedPair,
  readCommunityInputs,
  serializeCommunityInputs,
} from '../../index-io/community-inputs.js';
import { ELEMENT_MEMBERS_FILE, serializeElementMembers } from '../../index-io/element-members.js';
import { TABLES } from '../../index-io/tables.js';
import { denseEdges } from '../../model/adjacency.js';
import type { BaseGraph } from '../../model/graph-store.js';
import { type MaterialItem, rankMaterial, trimToBudget } from '../../model/material.js';
import {
  type Community,
  communitiesWithMembers,
  communityNodeIds,
  type LinkInput,
  linkMembers,
  mergeElements,
  reformCommunities,
} from '../../model/summary.js';
import { resolveInProject } from '../../project/layout.js';
import { count } from '../tree.js';
import type { StageContext, StageResult } from './context.js';
import { countTokensBatch, textOps } from './core.js';
import { embedTargets } from './embedding.js';
import { stageGraphTables } from './graph.js';
import { mapInOrder, poolSize } from './pool.js';

interface Subgraph {
  ids: string[];
  src: Uint32Array;
  dst: Uint32Array;
  /** Neighbours inside the community graph, by dense index. */
  neighbours: number[][];
}

/** The community graph (step 1) as dense arrays, nodes in ascending id order. */
function communityGraph(graph: BaseGraph, ids: string[]): Subgraph {
  const { src, dst } = denseEdges(graph, new Map(ids.map((id, i) => [id, i])));
  const neighbours: number[][] = ids.map(() => []);
  for (let i = 0; i < src.length; i++) {
    neighbours[src[i]!]!.push(dst[i]!);
    neighbours[dst[i]!]!.push(src[i]!);
  }
  return { ids, src, dst, neighbours };
}

/** L2 distance² between two vectors (nearest member of an element). */
function distance2(a: Float32Array, b: Float32Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]! - b[i]!;
    d += x * x;
  }
  return d;
}

/** SHA-256 of what a community's reply depends on: the chat model and prompt C's texts. */
function communityInputHash(ctx: StageContext, texts: readonly string[]): string {
  const { provider, model, params } = ctx.providers.chat.identity;
  return createHash('sha256')
    .update(JSON.stringify([provider, model, params, texts]))
    .digest('hex');
}

function normalized(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  return n > 0 ? v.map((x) => x / n) : v;
}

export async function summaryStage(ctx: StageContext): Promise<StageResult> {
  const g = ctx.g;
  // (Read together: see pruneUnlisted in ./document.ts.)
  const i = ctx.index;
  const [graph, units, attributes, elements, titles, elementMembers] = await Promise.all([
    i.graph(),
    i.units(),
    i.attributes(),
    i.elements(),
    i.titles(),
    i.elementMembers(),
  ]);
  const tables = { elements, titles };
  const dim = ctx.config.config.dim;
  const space = ctx.config.config.space;

  const recorded = await readCommunityInputs(
    resolveInProject(ctx.root, COMMUNITY_INPUTS_FILE),
    COMMUNITY_INPUTS_FILE,
  );
  const usedInputs = new Set<string>();
  let reused = 0;

  const before = ctx.providers.chat.stats();
  const embedBefore = ctx.providers.embedding.stats();

  const budget = ctx.config.config.material_token_budget;
  const memberText = (id: string) => units.get(id)?.context ?? attributes.get(id)?.context ?? '';
  const liveElement = (hash: string) =>
    recorded
      .get(hash)!
      .elements.some(([, d]) => d.trim() && tables.elements.has(textOps.highLevelElementId(d.trim())));

  // A sync first forms again, as they were, the communities it dropped whose members all kept
  // their texts (docs/method.md §4.5): their input is the recorded one, so are their elements.
  const reformed = ctx.state.is_incremental
    ? reformCommunities(
        recorded,
        liveElement,
        (id) => units.has(id) || attributes.has(id),
        (members) =>
          trimToBudget(
            members.map((id) => ({ id, text: memberText(id), primary: 0, secondary: 0 })),
            budget,
            countTokensBatch,
          ).map((i) => i.text),
        (texts) => communityInputHash(ctx, texts),
      )
    : [];

  // Steps 1–3: communities of the other nodes touched in g.
  const ids = communityNodeIds(graph, g, new Set(reformed.flatMap((r) => r.community.members)));
  const sub = communityGraph(graph, ids);
  let communities: Community[] = [];
  let communityCount = 0;
  if (ids.length > 0 || reformed.length > 0) {
    // Step 4 material: member texts by (degree inside the community, node weight, id).
    const formed: { community: Community; texts: string[]; ranked: string[]; hash: string }[] = [];
    if (ids.length > 0) {
      const result = await leiden({ nodeCount: ids.length, src: sub.src, dst: sub.dst }, { seed: 42 });
      communityCount = result.count;
      ctx.stop.check();
      const position = new Map(ids.map((id, i) => [id, i]));
      const membership = result.membership;
      for (const community of communitiesWithMembers(graph, ids, membership)) {
        const items: MaterialItem[] = community.members.map((id) => {
          const i = position.get(id)!;
          const inside = sub.neighbours[i]!.filter((j) => membership[j] === membership[i]).length;
          return { id, text: memberText(id), primary: inside, secondary: graph.nodes.get(id)!.weight };
        });
        const ranked = rankMaterial(items);
        const texts = trimToBudget(ranked, budget, countTokensBatch).map((i) => i.text);
        formed.push({
          community,
          texts,
          ranked: ranked.map((i) => i.id),
          hash: communityInputHash(ctx, texts),
        });
      }
    }
    for (const r of reformed) formed.push({ ...r, ranked: [...recorded.get(r.hash)!.members] });
    formed.sort((a, b) => (a.community.members[0]! < b.community.members[0]! ? -1 : 1));
    communities = formed.map((f) => f.community);
    const prompts = formed.map((f) => f.texts);

    // A community formed again with the same input gets the elements it produced before
    // (community_inputs.json), without a call.
    const hashes = formed.map((f) => f.hash);
    const ask = prompts.flatMap((texts, i) => (recorded.has(hashes[i]!) ? [] : [{ texts, i }]));
    reused = prompts.length - ask.length;
    const note = () => {
      const s = ctx.providers.chat.stats();
      return `calls ${s.calls - before.calls}, cache hits ${s.cacheHits - before.cacheHits}`;
    };
    ctx.progress.begin(ask.length, 'communities');
    const local = ctx.providers.chat.identity.provider === 'local';
    const asked = await mapInOrder(
      ask,
      ({ texts }) => ctx.providers.run('community', { texts }, ctx.stop.callOptions),
      {
        concurrency: poolSize(
          ctx.config.model_config.rate_limit,
          local,
          ctx.config.model_config.max_in_flight,
        ),
        stop: ctx.stop,
        onProgress: (done) => ctx.progress.update(done, note()),
      },
    );

    const replies = prompts.map((_, i) =>
      (recorded.get(hashes[i]!)?.elements ?? []).map(([title, description]) => ({ title, description })),
    );
    ask.forEach(({ i }, k) => {
      replies[i] = asked[k]!.high_level_elements;
    });
    replies.forEach((reply, i) => {
      recorded.set(hashes[i]!, {
        elements: reply.map((e): ProducedPair => [e.title, e.description]),
        members: formed[i]!.ranked,
      });
      usedInputs.add(hashes[i]!);
    });

    // Step 5: merge in community order.
    const inputs: LinkInput[] = communities.map((community, i) => {
      ctx.counters.community_summary_index += 1;
      const elements = mergeElements(
        replies[i]!,
        ctx.counters.community_summary_index,
        g,
        graph,
        tables,
        ctx.counters,
        textOps,
      );
      return { community, elements };
    });
    // Which members each element was written from (a sync drops it when one goes or changes).
    for (const { community, elements } of inputs) {
      for (const e of elements) {
        elementMembers.set(e, [...new Set([...(elementMembers.get(e) ?? []), ...community.members])].sort());
      }
    }

    // Step 6: embed the descriptions of new elements.
    const pending = [...tables.elements.values()]
      .filter((e) => e.embedding === null)
      .sort((a, b) => a.humanReadableId - b.humanReadableId);
    ctx.progress.note(`${count(pending.length, 'new high-level element')} to embed`);
    await embedTargets(
      ctx,
      pending.map((e) => ({
        text: e.context,
        set: (v: Float32Array) => {
          e.embedding = v;
        },
      })),
      () => undefined,
    );

    // Step 7: link members to elements.
    const vectorOf = (id: string): Float32Array => {
      const v =
        units.get(id)?.embedding ??
        attributes.get(id)?.embedding ??
        tables.elements.get(id)?.embedding ??
        null;
      if (!v) throw new InternalError('internal_error', `node ${id} has no vector for member linking`);
      return space === 'cosine' ? normalized(v) : v;
    };
    const memberIds = new Set<string>();
    const elementIds = new Set<string>();
    for (const inp of inputs) {
      for (const m of inp.community.members) memberIds.add(m);
      for (const e of inp.elements) elementIds.add(e);
    }
    const clusterIds = [...memberIds, ...elementIds].sort();
    const n = clusterIds.length;
    const c = Math.ceil(Math.sqrt(n));
    let clusterOf: Map<string, number> | undefined;
    if (n > 0 && n / c > ctx.config.config.Hcluster_size) {
      const flat = new Float32Array(n * dim);
      clusterIds.forEach((id, i) => {
        flat.set(vectorOf(id), i * dim);
      });
      const km = await kmeans(flat, dim, c, { normalize: false, seed: 42 });
      clusterOf = new Map(clusterIds.map((id, i) => [id, km.labels[i]!]));
    }
    const link = linkMembers(inputs, ctx.config.config.Hcluster_size, g, graph, tables, (clusterInput, k) => {
      if (!clusterOf || k !== c || clusterInput.length !== n) {
        throw new InternalError(
          'internal_error',
          'member linking: cluster input differs from the precomputed k-means',
        );
      }
      return {
        clusterOf,
        nearest: (element, candidates) => {
          const ev = vectorOf(element);
          let best = candidates[0]!;
          let bestD = Number.POSITIVE_INFINITY;
          for (const m of [...candidates].sort()) {
            const d = distance2(ev, vectorOf(m));
            if (d < bestD) {
              bestD = d;
              best = m;
            }
          }
          return best;
        },
      };
    });
    ctx.progress.note(
      `${count(communities.length, 'community', 'communities')} with members of ${communityCount}; ${count(elementIds.size, 'element')}, ${count(link.edges, 'member link')}${link.clustered ? ` (k-means, k=${c})` : ''}`,
    );
  }

  // Recorded communities stay while one of their elements does (or were used now).
  for (const hash of [...recorded.keys()])
    if (!usedInputs.has(hash) && !liveElement(hash)) recorded.delete(hash);
  await ctx.out.table(TABLES.elements, tables.elements.values(), dim);
  await ctx.out.table(TABLES.titles, tables.titles.values());
  await ctx.out.file(ELEMENT_MEMBERS_FILE, serializeElementMembers(elementMembers));
  await ctx.out.file(COMMUNITY_INPUTS_FILE, serializeCommunityInputs(recorded));
  await stageGraphTables(ctx.index, ctx.out);
  const s = ctx.providers.chat.stats();
  const e = ctx.providers.embedding.stats();
  const calls = s.calls - before.calls;
  const hits = s.cacheHits - before.cacheHits;
  return {
    counts: {
      items: communities.length,
      calls: calls + e.calls - embedBefore.calls,
      cacheHits: hits,
      retries: s.retries - before.retries,
    },
    summary: `${count(ids.length, 'node')} in the community graph, ${count(communities.length, 'community', 'communities')} summarised (${reused} with the elements of an earlier community of the same input, ${reformed.length} of them formed again as they were), ${count(tables.elements.size, 'element')} in total; calls ${calls}, cache hits ${hits}`,
  };
}
