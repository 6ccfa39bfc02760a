/**
 * Known embedding models and the `dim` rule (docs/method.md §7.6: `dim` must equal the embedding
 * length). The rule, in full:
 *
 * - `local`: any `dim` (feature hashing fills exactly `dim` buckets).
 * - A model in this table: `dim` must equal its native length; for models that can shorten
 *   their output (OpenAI text-embedding-3-*, Gemini text-embedding-004 / gemini-embedding-001)
 *   any `dim` from 1 to the native length is also accepted, and the request then asks for
 *   that length (`dimensions` for OpenAI, `outputDimensionality` for Gemini).
 * - A model not in this table: any `dim` is accepted (an OpenAI-compatible server behind
 *   `base_url` can serve anything; for the official endpoints a warning says the length is
 *   checked on the first embedding instead).
 * - A model of the other provider's table (e.g. text-embedding-3-small with `gemini`) is a
 *   problem, unless `base_url` points at a proxy that may serve any vendor's models.
 */

export interface KnownEmbeddingModel {
  provider: 'openai' | 'gemini';
  /** Length returned when no shorter output is requested. */
  nativeDim: number;
  /** True when the API can return a shorter vector on request. */
  shortenable: boolean;
}

/** With the article, for messages: "is an OpenAI embedding model". */
export const VENDOR_NAMES = { openai: 'an OpenAI', gemini: 'a Gemini' } as const;

export const KNOWN_EMBEDDING_MODELS: Readonly<Record<string, KnownEmbeddingModel>> = {
  'text-embedding-3-small': { provider: 'openai', nativeDim: 1536, shortenable: true },
  'text-embedding-3-large': { provider: 'openai', nativeDim: 3072, shortenable: true },
  'text-embedding-ada-002': { provider: 'openai', nativeDim: 1536, shortenable: false },
  'text-embedding-004': { provider: 'gemini', nativeDim: 768, shortenable: true },
  'gemini-embedding-001': { provider: 'gemini', nativeDim: 3072, shortenable: true },
  'embedding-001': { provider: 'gemini', nativeDim: 768, shortenable: false },
};

/** Strip the `models/` prefix Gemini accepts, so `models/text-embedding-004` is known too. */
export function lookupEmbeddingModel(name: string): KnownEmbeddingModel | undefined {
  const key = name.startsWith('models/') ? name.slice('models/'.length) : name;
  return Object.hasOwn(KNOWN_EMBEDDING_MODELS, key) ? KNOWN_EMBEDDING_MODELS[key] : undefined;
}

/**
 * The output length to request explicitly, or undefined to send no length parameter
 * (unknown models, `local`, and fixed-length models).
 */
export function requestedEmbeddingDim(model: string, dim: number): number | undefined {
  const known = lookupEmbeddingModel(model);
  if (!known?.shortenable) return undefined;
  // OpenAI: send `dimensions` only when shortening (older servers reject it otherwise).
  // Gemini: always send it; gemini-embedding-001 defaults to 3072 otherwise.
  if (known.provider === 'openai') return dim === known.nativeDim ? undefined : dim;
  return dim;
}

export type DimCheck = { ok: true; warning?: string } | { ok: false; path: string; message: string };

/** Applies the rule above; a problem names the key it is about. */
export function checkEmbeddingDim(
  provider: 'openai' | 'gemini' | 'local',
  model: string,
  dim: number,
  baseUrl: string | null,
): DimCheck {
  if (provider === 'local') return { ok: true };
  const known = lookupEmbeddingModel(model);
  if (!known) {
    if (baseUrl) return { ok: true };
    return {
      ok: true,
      warning: `embedding_config.embedding_model_name: "${model}" is not a known ${provider} embedding model; config.dim (${dim}) will be checked against the first embedding`,
    };
  }
  // Behind base_url (a proxy such as LiteLLM) another vendor's model name is legitimate.
  if (known.provider !== provider && !baseUrl) {
    return {
      ok: false,
      path: 'embedding_config.embedding_model_name',
      message: `"${model}" is ${VENDOR_NAMES[known.provider]} embedding model, but embedding_config.service_provider is ${provider}`,
    };
  }
  if (dim === known.nativeDim) return { ok: true };
  if (known.shortenable && dim >= 1 && dim < known.nativeDim) return { ok: true };
  const allowed = known.shortenable ? `from 1 to ${known.nativeDim}` : `${known.nativeDim}`;
  return {
    ok: false,
    path: 'config.dim',
    message: `expected ${allowed} for embedding model ${model}, got ${dim}`,
  };
}
