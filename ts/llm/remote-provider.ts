/**
 * What the two HTTP adapters (openai.ts, gemini.ts) share and no SDK is needed for: their
 * options, the identity that keys the response cache, the context their errors carry, and
 * turning an embedding reply into one flat buffer.
 */
import { endianness } from 'node:os';
import { requestedEmbeddingDim } from '../config/embedding-models.js';
import { type ErrorContext, invalidReplyError } from './provider-errors.js';
import type { EmbeddingBatch, ProviderIdentity } from './types.js';

export interface RemoteProviderOptions {
  section: 'model_config' | 'embedding_config';
  model: string;
  apiKey: string | undefined;
  baseUrl: string | null;
  temperature?: number;
  maxTokens?: number;
  /** config.dim, for embeddings: a shortened output is requested when the model supports it. */
  dim?: number;
}

interface RemoteSetup {
  identity: ProviderIdentity;
  ctx: ErrorContext;
  /** The output dimension to ask for, or undefined when the model cannot shorten its vectors. */
  requestDim: number | undefined;
}

/**
 * Identity, error context and requested dimension of an adapter. `dimParam` is the vendor's
 * name for the requested dimension, as it appears in the identity (and so in cache keys).
 */
export function remoteSetup(
  provider: 'openai' | 'gemini',
  options: RemoteProviderOptions,
  dimParam: 'dimensions' | 'outputDimensionality',
): RemoteSetup {
  const requestDim =
    options.dim === undefined ? undefined : requestedEmbeddingDim(options.model, options.dim);
  return {
    requestDim,
    identity: {
      provider,
      baseUrl: options.baseUrl,
      model: options.model,
      params:
        options.section === 'embedding_config'
          ? { [dimParam]: requestDim ?? null }
          : { temperature: options.temperature ?? 0, max_tokens: options.maxTokens ?? null },
    },
    ctx: {
      provider,
      section: options.section,
      model: options.model,
      baseUrl: options.baseUrl,
      secrets: options.apiKey ? [options.apiKey] : [],
    },
  };
}

const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * One embedding of a reply: a list of numbers, or (`encoding_format: base64`) the base64 of
 * its little-endian float32 bytes, which is a quarter of the JSON text to write and parse.
 */
export function decodeEmbedding(ctx: ErrorContext, embedding: unknown): ArrayLike<number> {
  if (typeof embedding !== 'string') {
    if (!Array.isArray(embedding)) {
      throw invalidReplyError(ctx, 'embedding reply', 'an embedding is neither a list of numbers nor base64');
    }
    // A Float32Array would store null as 0 and true as 1 without a word (servers write NaN as
    // null): anything but a number makes the reply invalid, retried and never cached.
    for (let i = 0; i < embedding.length; i++) {
      if (typeof embedding[i] !== 'number') {
        throw invalidReplyError(
          ctx,
          'embedding reply',
          `value ${i} of an embedding is ${embedding[i] === null ? 'null' : typeof embedding[i]}, not a number`,
        );
      }
    }
    return embedding as number[];
  }
  const bytes = Buffer.from(embedding, 'base64');
  if (bytes.length % 4 !== 0) {
    throw invalidReplyError(
      ctx,
      'embedding reply',
      `a base64 embedding of ${bytes.length} bytes is not float32`,
    );
  }
  const out = new Float32Array(bytes.length / 4);
  if (LITTLE_ENDIAN) new Uint8Array(out.buffer).set(bytes);
  else for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}

/** One vector per input, in input order, packed row-major; a short or ragged reply is invalid. */
export function packEmbeddings(
  ctx: ErrorContext,
  expected: number,
  rows: readonly ArrayLike<number>[],
): EmbeddingBatch {
  if (rows.length !== expected) {
    throw invalidReplyError(ctx, 'embedding reply', `expected ${expected} vectors, got ${rows.length}`);
  }
  const dim = rows[0]?.length ?? 0;
  // An empty vector is a broken reply (retried, never cached), not a model of dimension 0
  // (which the dim check then told the user to configure).
  if (rows.length > 0 && dim === 0) {
    throw invalidReplyError(ctx, 'embedding reply', 'an embedding is empty (no values)');
  }
  const out = new Float32Array(rows.length * dim);
  rows.forEach((v, i) => {
    if (v.length !== dim) {
      throw invalidReplyError(ctx, 'embedding reply', 'vectors of different lengths in one reply');
    }
    out.set(v, i * dim);
  });
  return { vectors: out, dim };
}
