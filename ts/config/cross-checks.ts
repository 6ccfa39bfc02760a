/**
 * Rules of §7.6 that involve more than one key. Each check runs only when the keys it reads
 * passed the schema (a missing value is `undefined` here), so one pass reports every problem
 * without repeating a field error as a rule error.
 */
import { resolve } from 'node:path';
import { apiKeyHint, type Env, resolveApiKey } from './api-keys.js';
import { checkEmbeddingDim, VENDOR_NAMES } from './embedding-models.js';
import type { ConfigSectionData, EmbeddingConfigData, ModelConfigData, ProviderName } from './schema.js';

export interface ConfigProblem {
  /** Dotted key path, e.g. `config.chunk_size`. */
  path: string;
  /** What is wrong, without the path: `expected an integer from 64 to 16384, got "big"`. */
  message: string;
}

/** The schema's default `dim` (OpenAI text-embedding-3-small): with `local`, worth a hint. */
const LOCAL_DIM_HINT_FROM = 1536;

type Partial2<T> = { [K in keyof T]?: T[K] };

export interface CrossCheckInput {
  model: Partial2<ModelConfigData>;
  embedding: Partial2<EmbeddingConfigData>;
  config: Partial2<ConfigSectionData>;
  /** Absolute folder that holds the file. */
  folder: string;
  env: Env;
  requireApiKeys: boolean;
  /** Key paths already refused by their field check (e.g. `model_config.base_url`). */
  failed?: ReadonlySet<string>;
}

export interface CrossCheckResult {
  problems: ConfigProblem[];
  warnings: string[];
  apiKeys: { model: string | undefined; embedding: string | undefined };
}

/** Chat model names that clearly belong to the other vendor. */
function chatModelVendor(name: string): 'openai' | 'gemini' | undefined {
  const n = name.startsWith('models/') ? name.slice(7) : name;
  if (/^(gpt-|o\d|chatgpt-)/.test(n)) return 'openai';
  if (/^gemini-/.test(n)) return 'gemini';
  return undefined;
}

export function runCrossChecks(input: CrossCheckInput): CrossCheckResult {
  const problems: ConfigProblem[] = [];
  const warnings: string[] = [];
  const { model, embedding, config } = input;

  const checkSection = (
    section: 'model_config' | 'embedding_config',
    provider: ProviderName | undefined,
    apiKeys: string | null | undefined,
    baseUrl: string | null | undefined,
  ): string | undefined => {
    if (provider === undefined || apiKeys === undefined) return undefined;
    const { key, source, unsetReference } = resolveApiKey(provider, apiKeys, input.env);
    // A key goes into an HTTP header, which holds printable ASCII only (a key pasted with
    // typographic quotes failed at the first request, without naming the key). Never echoed.
    if (key !== undefined && provider !== 'local' && /[^\x21-\x7e]/.test(key)) {
      problems.push({
        path: `${section}.api_keys`,
        message: `${source === 'file' ? 'the key' : `the key in ${source}`} has a character that is not printable ASCII (a space, a typographic quote, …); expected the key as the provider shows it`,
      });
    }
    // No provider's key starts with "$": one taken literally is a variable reference that
    // names no variable (`${my-key}`), which would have gone to the provider as the key.
    if (source === 'file' && provider !== 'local' && key?.startsWith('$')) {
      problems.push({
        path: `${section}.api_keys`,
        message: `starts with $ but is no environment variable reference: expected $\{NAME} or $NAME with NAME of letters, digits and _ (not starting with a digit), e.g. $\{OPENAI_API_KEY}`,
      });
    }
    if (provider === 'local') {
      if (baseUrl) warnings.push(`${section}.base_url: ignored by the local provider`);
      return undefined;
    }
    // An OpenAI-compatible server behind base_url (Ollama, vLLM) usually needs no key; a
    // base_url already refused (reported) says which kind was meant just as well.
    const baseUrlRefused = input.failed?.has(`${section}.base_url`) === true;
    const needsKey = provider === 'gemini' || (provider === 'openai' && !baseUrl && !baseUrlRefused);
    if (!key && unsetReference !== undefined && input.requireApiKeys) {
      problems.push({
        path: `${section}.api_keys`,
        message: `refers to the environment variable ${unsetReference}, which is not set`,
      });
    } else if (!key && needsKey && input.requireApiKeys) {
      problems.push({
        path: `${section}.api_keys`,
        message: `an API key is required for provider ${provider}: set ${apiKeyHint(provider)}`,
      });
    }
    return key;
  };

  const modelKey = checkSection('model_config', model.service_provider, model.api_keys, model.base_url);
  const embeddingKey = checkSection(
    'embedding_config',
    embedding.service_provider,
    embedding.api_keys,
    embedding.base_url,
  );

  // A chat model of the other vendor is a copy-paste slip worth stopping for.
  if (model.service_provider && model.model_name && !model.base_url) {
    const vendor = chatModelVendor(model.model_name);
    if (vendor && model.service_provider !== 'local' && vendor !== model.service_provider) {
      problems.push({
        path: 'model_config.model_name',
        message: `"${model.model_name}" is ${VENDOR_NAMES[vendor]} model, but model_config.service_provider is ${model.service_provider}`,
      });
    }
  }

  if (embedding.service_provider === 'gemini' && config.embedding_batch_size !== undefined) {
    if (config.embedding_batch_size > 100) {
      problems.push({
        path: 'config.embedding_batch_size',
        message: `expected an integer from 1 to 100 for the gemini embedding provider, got ${config.embedding_batch_size}`,
      });
    }
  }

  if (
    embedding.service_provider !== undefined &&
    embedding.embedding_model_name !== undefined &&
    embedding.base_url !== undefined &&
    config.dim !== undefined
  ) {
    const check = checkEmbeddingDim(
      embedding.service_provider,
      embedding.embedding_model_name,
      config.dim,
      embedding.base_url,
    );
    if (!check.ok) {
      problems.push({ path: check.path, message: check.message });
    } else if (check.warning) {
      warnings.push(check.warning);
    }
  }

  // A file switched to `local` keeps the default dim of OpenAI's model: valid, but say so once.
  if (embedding.service_provider === 'local' && config.dim === LOCAL_DIM_HINT_FROM) {
    warnings.push(
      `config.dim: ${config.dim} is the length of OpenAI's text-embedding-3-small; the local provider accepts any dim (the examples use 256, a smaller index and faster search)`,
    );
  }

  if (config.m !== undefined && config.m0 !== undefined && config.m0 !== null && config.m0 !== 2 * config.m) {
    problems.push({
      path: 'config.m0',
      message: `expected null or exactly 2·m (${2 * config.m}), got ${config.m0}`,
    });
  }

  if (config.similarity_weight === 0 && config.accuracy_weight === 0) {
    problems.push({
      path: 'config.similarity_weight',
      message: 'similarity_weight and accuracy_weight cannot both be 0 (no seed would carry weight)',
    });
  }

  if (config.ppr_mode === 'restart' && config.ppr_max_iter !== undefined && config.ppr_max_iter < 20) {
    warnings.push(
      `config.ppr_max_iter: ${config.ppr_max_iter} steps of ppr_mode "restart" will not converge; use 20 or more`,
    );
  }

  if (typeof config.main_folder === 'string' && config.main_folder.trim() !== '') {
    const declared = resolve(input.folder, config.main_folder);
    if (declared !== input.folder) {
      warnings.push(
        `config.main_folder is ${config.main_folder} but the file is in ${input.folder}; using ${input.folder}`,
      );
    }
  }

  return { problems, warnings, apiKeys: { model: modelKey, embedding: embeddingKey } };
}
