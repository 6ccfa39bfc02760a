/**
 * Model providers: the Provider interface, the openai / gemini / local adapters, the rate
 * limiter, retries and the response cache, composed by createProviders(config).
 */

export { CACHE_VERSION, type CacheKind, cacheKey, canonicalJson } from './cache-key.js';
export { CachedProvider, type CachedProviderOptions, type ProviderStats } from './cached-provider.js';
export { type Clock, systemClock } from './clock.js';
export {
  type CreateProvidersOptions,
  configuredTimeouts,
  createAdapter,
  createProviders,
  DEFAULT_TIMEOUTS,
  ModelProviders,
  o200kTokenCounter,
} from './create-providers.js';
export { GeminiProvider, type GeminiProviderOptions } from './gemini.js';
export { featureHashBatch } from './local/feature-hash.js';
export { LocalProvider, type LocalProviderOptions, localReply } from './local/provider.js';
export { OpenAIProvider, type OpenAIProviderOptions } from './openai.js';
export { buildRequest, PROMPT_SETS, type PromptSet, promptSet, renderPrompt } from './prompts/index.js';
export { parseRetryAfter } from './provider-errors.js';
export { inFlightCap, type Limiter, RateLimiter, type Release } from './rate-limiter.js';
export { type CacheLoadReport, ResponseCache, type ResponseCacheOptions } from './response-cache.js';
export {
  BUILD_RETRY_POLICY,
  backoffDelay,
  type RetryEvent,
  type RetryPolicy,
  SEARCH_RETRY_POLICY,
  withRetry,
} from './retry.js';
export { runTask, streamTask } from './run-task.js';
export { TASK_SCHEMAS, TASK_VALIDATORS, validateText } from './task-schemas.js';
export { textPieces } from './text-pieces.js';
export { capTokens, EMBEDDING_INPUT_TOKEN_CAP, type TokenCounter } from './token-cap.js';
export {
  type CallOptions,
  type ChatMessage,
  type ChatRequest,
  type DecompositionUnit,
  type EmbeddingBatch,
  type HighLevelElement,
  type JsonSchemaSpec,
  type Provider,
  type ProviderIdentity,
  STRUCTURED_TASKS,
  type StructuredTask,
  TASKS,
  type Task,
  type TaskCall,
  type TaskInputs,
  type TaskOutputs,
  type TextTask,
  type Validation,
  type Validator,
} from './types.js';
