/**
 * Configuration: the Node_config.yaml schema, loader, first-run template and secret handling.
 */
export { API_KEY_ENV_VARS, apiKeyHint, type Env, isUnsetApiKey, resolveApiKey } from './api-keys.js';
export type { ConfigProblem } from './cross-checks.js';
export {
  checkEmbeddingDim,
  KNOWN_EMBEDDING_MODELS,
  type KnownEmbeddingModel,
  lookupEmbeddingModel,
  requestedEmbeddingDim,
} from './embedding-models.js';
export { isHost } from './fields.js';
export {
  type ConfigSettings,
  DEFAULT_CLI_NAME,
  type EmbeddingSettings,
  type EnsureConfigResult,
  ensureConfig,
  firstRunMessage,
  firstRunProblem,
  type LoadConfigOptions,
  type ModelSettings,
  missingConfigMessage,
  NodeConfig,
  type ProviderSection,
  parseConfigYaml,
  projectFolderProblem,
} from './node-config.js';
export {
  type ConfigSectionData,
  DOCU_TYPES,
  defaultConfigData,
  type EmbeddingConfigData,
  LANGUAGES,
  type Language,
  type ModelConfigData,
  type NodeConfigData,
  nodeConfigSchema,
  PPR_MODES,
  PROVIDERS,
  type ProviderName,
  SPACES,
} from './schema.js';
export { describeSecret, REDACTED, redactSecrets } from './secrets.js';
export { CONFIG_FILE_NAME, renderConfigTemplate } from './template.js';
export {
  type ConfigPatch,
  type ConfigUpdateResult,
  readConfigForForm,
  type UpdateConfigOptions,
  updateConfigFile,
} from './update.js';
export { formatProblem, type ValidateOptions, type ValidateResult, validateConfigData } from './validate.js';
