/**
 * Building the providers of a NodeConfig: one adapter per config section, each wrapped in a
 * CachedProvider with its section's rate limiter, the build or search retry policy and, at
 * build time, the response cache in `cache/response_cache/`. Search-time calls and the local
 * provider are never cached (docs/method.md §3.10); the local provider is not rate limited either.
 */
import type { NodeConfig, ProviderSection } from '../config/node-config.js';
import { defaultConfigData } from '../config/schema.js';
import { countTokens, countTokensMemo, truncateToTokens } from '../text/index.js';
import { CachedProvider, type ProviderStats } from './cached-provider.js';
import type { Clock } from './clock.js';
import { GeminiProvider } from './gemini.js';
import { LocalProvider } from './local/provider.js';
import { OpenAIProvider } from './openai.js';
import { RateLimiter } from './rate-limiter.js';
import { ResponseCache } from './response-cache.js';
import { BUILD_RETRY_POLICY, type RetryEvent, type RetryPolicy, SEARCH_RETRY_POLICY } from './retry.js';
import { runTask, streamTask } from './run-task.js';
import type { TokenCounter } from './token-cap.js';
import type {
  CallOptions,
  EmbeddingBatch,
  Language,
  Provider,
  Task,
  TaskInputs,
  TaskOutputs,
  TextTask,
} from './types.js';

/** The o200k_base counter of the Rust core (ts/text): exact counts and exact truncation. */
export const o200kTokenCounter: TokenCounter = { countTokens, truncateToTokens };

/**
 * The same counts for a search engine or server, which counts the same texts again and again
 * (each context is lines of node texts; prompts hold those contexts): pieces are remembered
 * (ts/text/tokens.ts countTokensMemo). A build counts text it mostly sees once: o200kTokenCounter.
 */
export const o200kSearchTokenCounter: TokenCounter = { countTokens: countTokensMemo, truncateToTokens };

/**
 * Per-request timeouts of docs/method.md §0 of a config that sets no `request_timeout`: read from
 * the schema defaults (ts/config/schema.ts), which are their one declaration.
 */
export const DEFAULT_TIMEOUTS: Readonly<{ chatMs: number; embedMs: number }> = (() => {
  const d = defaultConfigData();
  return Object.freeze({
    chatMs: d.model_config.request_timeout * 1000,
    embedMs: d.embedding_config.request_timeout * 1000,
  });
})();

/** The timeouts a config asks for (`request_timeout` of each section, in ms). */
export function configuredTimeouts(config: NodeConfig): { chatMs: number; embedMs: number } {
  return {
    chatMs: config.model_config.request_timeout * 1000,
    embedMs: config.embedding_config.request_timeout * 1000,
  };
}

export interface CreateProvidersOptions {
  /** `build`: 6 attempts, response cache; `search`: 3 attempts within 60 s, no cache. */
  mode: 'build' | 'search';
  /** Token counter for the embedding input cap; default the o200k_base counter of ts/text. */
  tokenCounter?: TokenCounter;
  /** Response cache folder at build time; default `<folder>/cache/response_cache`, null = none. */
  cacheDir?: string | null;
  /** Overrides the config's `request_timeout` of either section (tests, benchmarks). */
  timeouts?: Partial<{ chatMs: number; embedMs: number }>;
  /** Overrides the mode's retry policy (tests). */
  retry?: RetryPolicy;
  clock?: Clock;
  random?: () => number;
  onRetry?: (event: RetryEvent & { section: string }) => void;
}

/** The adapter of one section, without cache, limiter or retry. */
export function createAdapter(config: NodeConfig, section: ProviderSection): Provider {
  const dim = config.config.dim;
  const apiKey = config.apiKey(section);
  if (section === 'model_config') {
    const m = config.model_config;
    const common = {
      section,
      model: m.model_name,
      apiKey,
      baseUrl: m.base_url,
      temperature: m.temperature,
      maxTokens: m.max_tokens,
    };
    switch (m.service_provider) {
      case 'openai':
        return new OpenAIProvider(common);
      case 'gemini':
        return new GeminiProvider(common);
      case 'local':
        return new LocalProvider({ model: m.model_name, dim });
    }
  }
  const e = config.embedding_config;
  const common = { section, model: e.embedding_model_name, apiKey, baseUrl: e.base_url, dim };
  switch (e.service_provider) {
    case 'openai':
      return new OpenAIProvider(common);
    case 'gemini':
      return new GeminiProvider(common);
    case 'local':
      return new LocalProvider({ model: e.embedding_model_name, dim });
  }
}

export class ModelProviders {
  readonly language: Language;
  /** model_config: chat and structured calls. */
  readonly chat: CachedProvider;
  /** embedding_config: embeddings. */
  readonly embedding: CachedProvider;
  readonly cache: ResponseCache | undefined;
  /** Instruction prefixes of the embedding model (embedding_config.query_prefix / document_prefix). */
  readonly #prefixes: { query: string; document: string };

  constructor(config: NodeConfig, options: CreateProvidersOptions) {
    this.language = config.config.language;
    this.#prefixes = {
      query: config.embedding_config.query_prefix,
      document: config.embedding_config.document_prefix,
    };
    const chatAdapter = createAdapter(config, 'model_config');
    const embedAdapter = createAdapter(config, 'embedding_config');
    const needsCache =
      options.mode === 'build' &&
      options.cacheDir !== null &&
      (chatAdapter.identity.provider !== 'local' || embedAdapter.identity.provider !== 'local');
    this.cache = needsCache ? ResponseCache.open(options.cacheDir ?? config.responseCacheFolder) : undefined;
    const retry = options.retry ?? (options.mode === 'build' ? BUILD_RETRY_POLICY : SEARCH_RETRY_POLICY);
    const timeouts = { ...configuredTimeouts(config), ...options.timeouts };
    const make = (section: ProviderSection, adapter: Provider) => {
      const local = adapter.identity.provider === 'local';
      const { rate_limit, max_in_flight } = config[section];
      return new CachedProvider({
        adapter,
        section,
        retry,
        // The limiter queue is outside the per-request timeout: waiting here is never timed.
        limiter: local ? undefined : new RateLimiter(rate_limit, options.clock, undefined, max_in_flight),
        cache: local ? undefined : this.cache,
        timeouts,
        tokenCounter: options.tokenCounter ?? o200kTokenCounter,
        expectedDim: section === 'embedding_config' ? config.config.dim : undefined,
        clock: options.clock,
        random: options.random,
        onRetry: options.onRetry,
        secrets: config.secrets(),
      });
    };
    this.chat = make('model_config', chatAdapter);
    this.embedding = make('embedding_config', embedAdapter);
  }

  /** Runs one task (prompt D, R, A, C, Q or ANS) on the chat provider. */
  run<K extends Task>(task: K, input: TaskInputs[K], options: CallOptions = {}): Promise<TaskOutputs[K]> {
    return runTask(this.chat, this.language, task, input, options);
  }

  /** Runs a plain-text task (A or ANS) on the chat provider, as text deltas (chatStream). */
  stream<K extends TextTask>(
    task: K,
    input: TaskInputs[K],
    options: CallOptions = {},
  ): AsyncIterable<string> {
    return streamTask(this.chat, this.language, task, input, options);
  }

  /**
   * Embeds texts of the index (chunks, units, attributes, elements) with `document_prefix`.
   * The prefix is part of the text sent, so it is part of the response-cache key too.
   */
  embedDocuments(texts: readonly string[], options: CallOptions = {}): Promise<EmbeddingBatch> {
    const p = this.#prefixes.document;
    return this.embedding.embed(p ? texts.map((t) => p + t) : texts, options);
  }

  /** Embeds one question with `query_prefix`; the vector is the batch's only row. */
  async embedQuery(question: string, options: CallOptions = {}): Promise<Float32Array> {
    const b = await this.embedding.embed([this.#prefixes.query + question], options);
    return b.vectors.subarray(0, b.dim);
  }

  stats(): { chat: ProviderStats; embedding: ProviderStats } {
    return { chat: this.chat.stats(), embedding: this.embedding.stats() };
  }

  /** Flushes and closes the response cache. */
  close(): void {
    this.cache?.close();
  }
}

export function createProviders(config: NodeConfig, options: CreateProvidersOptions): ModelProviders {
  return new ModelProviders(config, options);
}
