/**
 * Public library API of noderag. See README.md ("Library use").
 *
 *   import { NodeConfig, NodeSearch } from 'noderag';
 *   const search = new NodeSearch(NodeConfig.fromMainFolder('./my-project'));
 *   const { response, retrievalInfo } = await search.answer('Who founded Halden Observatory?');
 *
 * The main classes are exported by name; the native building blocks (vector index, graph
 * algorithms, parquet tables, text core) as namespaces, so their names never collide.
 */

export {
  CONFIG_FILE_NAME,
  type ConfigPatch,
  type ConfigProblem,
  type ConfigSettings,
  type EmbeddingSettings,
  type EnsureConfigResult,
  ensureConfig,
  KNOWN_EMBEDDING_MODELS,
  type Language,
  type LoadConfigOptions,
  type ModelSettings,
  NodeConfig,
  type ProviderName,
  redactSecrets,
  renderConfigTemplate,
  updateConfigFile,
} from './config/index.js';
export * from './errors.js';
export * as graph from './graph/index.js';
export { BuildLockedError, DocumentError, NoDocumentsError } from './indexing/errors.js';
export { type BuildHooks, type BuildOptions, type BuildReport, runBuild } from './indexing/pipeline.js';
export { BUILD_EXIT } from './indexing/tree.js';
export {
  BUILD_RETRY_POLICY,
  type CreateProvidersOptions,
  createProviders,
  type EmbeddingBatch,
  GeminiProvider,
  LocalProvider,
  ModelProviders,
  OpenAIProvider,
  type Provider,
  type ProviderStats,
  RateLimiter,
  ResponseCache,
  type RetryPolicy,
  SEARCH_RETRY_POLICY,
  type Task,
  type TaskInputs,
  type TaskOutputs,
} from './llm/index.js';
export { NODE_TYPES, type NodeType } from './model/types.js';
export {
  type AnswerEvent,
  type AnswerQuestionOptions,
  type Citation,
  NodeSearch,
  type NodeSearchOptions,
  type QuestionOptions,
  type RetrievedItem,
  type SearchAnswer,
  type SearchRetrieval,
  type Source,
} from './search/index.js';
export { type AppDeps, createApp } from './server/app.js';
export type { EngineStatus, SearchEngine } from './server/engine.js';
export { searchEngine } from './server/engine-adapter.js';
export * as store from './store/index.js';
export * as text from './text/index.js';
export * as vector from './vector/index.js';
export { nativeVersion } from './version.js';
export { type VisResult, writeVisualisation } from './vis/write.js';
