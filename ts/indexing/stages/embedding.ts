/**
 * Embedding pipeline (docs/method.md §3.6): rows of text, semantic_units and attributes (in that
 * order, then by number) whose vector is null, in batches of `embedding_batch_size`, one
 * request per batch, concurrently under the embedding limiter and through the response
 * cache (per input text). Vectors are stored as returned. The first build records the
 * embedding provider, model and dim in state.json.
 */
import { TABLES } from '../../index-io/tables.js';
import type { EmbeddingIdentity } from '../../project/state.js';
import { count } from '../tree.js';
import type { StageContext, StageResult } from './context.js';
import { feedHnswPrebuild } from './hnsw-prebuild.js';
import { mapInOrder, poolSize } from './pool.js';

/** A row that needs a vector: its text, and where the vector goes. */
export interface EmbeddingTarget {
  text: string;
  set: (vector: Float32Array) => void;
}

/**
 * Embeds `targets` in batches, in order, and stores each vector through its setter once every
 * batch has arrived. `onVectors` sees each batch's vectors (targets `from .. from + n`) as soon
 * as it and all batches before it have arrived. Returns the number of requests' worth of
 * batches sent (cache hits included).
 */
export async function embedTargets(
  ctx: StageContext,
  targets: readonly EmbeddingTarget[],
  note: (done: number) => void,
  onVectors?: (from: number, vectors: Float32Array, dim: number, n: number) => void,
): Promise<number> {
  const size = ctx.config.config.embedding_batch_size;
  const batches: EmbeddingTarget[][] = [];
  for (let i = 0; i < targets.length; i += size) batches.push(targets.slice(i, i + size));
  const local = ctx.providers.embedding.identity.provider === 'local';
  let embedded = 0;
  // Batches arrived but not yet passed to `onVectors`, which sees them in input order.
  const arrived: ({ vectors: Float32Array; dim: number } | undefined)[] = [];
  let passed = 0;
  const results = await mapInOrder(
    batches,
    async (batch, b) => {
      const r = await ctx.providers.embedDocuments(
        batch.map((t) => t.text),
        ctx.stop.callOptions,
      );
      embedded += batch.length;
      if (onVectors) {
        arrived[b] = r;
        for (let x = arrived[passed]; x; x = arrived[passed]) {
          arrived[passed] = undefined;
          onVectors(passed * size, x.vectors, x.dim, batches[passed]!.length);
          passed++;
        }
      }
      return r;
    },
    {
      concurrency: poolSize(
        ctx.config.embedding_config.rate_limit,
        local,
        ctx.config.embedding_config.max_in_flight,
      ),
      stop: ctx.stop,
      onProgress: () => note(embedded),
    },
  );
  // Applied in input order once every batch has arrived.
  batches.forEach((batch, b) => {
    const { vectors, dim } = results[b]!;
    batch.forEach((t, i) => {
      t.set(vectors.subarray(i * dim, (i + 1) * dim));
    });
  });
  return batches.length;
}

/** What the stored vectors depend on; a build refuses to mix vectors of two identities. */
export function configuredEmbedding(config: StageContext['config']): EmbeddingIdentity {
  const e = config.embedding_config;
  return {
    provider: e.service_provider,
    model: e.embedding_model_name,
    dim: config.config.dim,
    // Recorded only when set, so state.json of prefix-less projects is unchanged.
    ...(e.document_prefix ? { document_prefix: e.document_prefix } : {}),
  };
}

export async function embeddingStage(ctx: StageContext): Promise<StageResult> {
  const texts = [...(await ctx.index.texts()).values()].sort((a, b) => a.textId - b.textId);
  const units = [...(await ctx.index.units()).values()].sort((a, b) => a.humanReadableId - b.humanReadableId);
  const attributes = [...(await ctx.index.attributes()).values()].sort(
    (a, b) => a.humanReadableId - b.humanReadableId,
  );
  const targets: EmbeddingTarget[] = [
    ...texts
      .filter((r) => r.embedding === null)
      .map((r) => ({
        text: r.context,
        set: (v: Float32Array) => {
          r.embedding = v;
        },
      })),
    ...units
      .filter((r) => r.embedding === null)
      .map((r) => ({
        text: r.context,
        set: (v: Float32Array) => {
          r.embedding = v;
        },
      })),
    ...attributes
      .filter((r) => r.embedding === null)
      .map((r) => ({
        text: r.context,
        set: (v: Float32Array) => {
          r.embedding = v;
        },
      })),
  ];

  const before = ctx.providers.embedding.stats();
  const note = () => {
    const s = ctx.providers.embedding.stats();
    return `requests ${s.calls - before.calls}, cached vectors ${s.embeddingCacheHits - before.embeddingCacheHits}`;
  };
  // A first build embeds every text, semantic-unit and attribute row, which are the vector
  // index's first labels in this order: their insertion starts as the batches arrive
  // (hnsw-prebuild.ts; the HNSW stage checks ids and bytes before it takes the index over).
  const ids = [...texts, ...units, ...attributes].map((r) => r.hashId);
  const feed =
    targets.length > 0 && targets.length === ids.length && (await ctx.index.idMap()).length === 0
      ? (from: number, vectors: Float32Array, dim: number, n: number) =>
          feedHnswPrebuild(
            ctx.root,
            ctx.config,
            Array.from({ length: n }, (_, i) => ({
              id: ids[from + i]!,
              vector: vectors.subarray(i * dim, (i + 1) * dim),
            })),
          )
      : undefined;
  ctx.progress.begin(targets.length, 'vectors');
  const batches = await embedTargets(ctx, targets, (done) => ctx.progress.update(done, note()), feed);

  const dim = ctx.config.config.dim;
  await ctx.out.table(TABLES.text, texts, dim);
  await ctx.out.table(TABLES.units, units, dim);
  await ctx.out.table(TABLES.attributes, attributes, dim);
  const s = ctx.providers.embedding.stats();
  return {
    counts: {
      items: targets.length,
      calls: s.calls - before.calls,
      cacheHits: s.embeddingCacheHits - before.embeddingCacheHits,
      retries: s.retries - before.retries,
    },
    summary: `${count(targets.length, 'vector')} in ${count(batches, 'batch', 'batches')}; ${note()}`,
    embedding: ctx.state.embedding ?? configuredEmbedding(ctx.config),
  };
}
