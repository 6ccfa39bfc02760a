/**
 * The one schema of Node_config.yaml (docs/method.md §7.6): types, defaults, validation and the
 * template's comments all come from here. Key names are the spec's, unchanged (`Hcluster_size`,
 * `Enode`, …), so the file, the docs and the code use one vocabulary. Keys marked *new* in
 * §7.6 (`base_url`, `ppr_mode`, `ef_search`, `material_token_budget`) are ours.
 *
 * Rules that involve more than one key (API key required, dim vs model, m0 = 2·m, …) are in
 * ./cross-checks.ts; they run on whatever keys passed this schema so every problem is
 * reported in one pass.
 */
import { z } from 'zod';
import {
  apiKeyField,
  baseUrlField,
  boolField,
  EXPECTED_PREFIX,
  enumField,
  enumText,
  hostField,
  intField,
  nonEmptyStringField,
  nullableIntField,
  numberField,
  optionalStringField,
  prefixField,
} from './fields.js';

/**
 * The longest `request_timeout`, 30 minutes per attempt. The openai adapter's own backstop
 * timeout (ts/llm/openai.ts) sits just above it, so the configured one always fires first.
 */
export const MAX_REQUEST_TIMEOUT_S = 1800;

/** `request_timeout` of a provider section: seconds per request attempt. */
function requestTimeoutField(def: number, comment: string) {
  return numberField(def, comment, { min: 0, exclusiveMin: true, max: MAX_REQUEST_TIMEOUT_S });
}

/** `max_in_flight` of a provider section: null (follow rate_limit) or an integer ≥ 1. */
function maxInFlightField(comment: string) {
  return nullableIntField(comment, 1);
}

export const PROVIDERS = ['openai', 'gemini', 'local'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** The spec also names the embedding providers `openai_embedding` / `gemini_embedding`. */
const EMBEDDING_PROVIDER_ALIASES: Readonly<Record<string, ProviderName>> = {
  openai_embedding: 'openai',
  gemini_embedding: 'gemini',
};

export const LANGUAGES = ['English', 'Chinese'] as const;
export type Language = (typeof LANGUAGES)[number];

export const DOCU_TYPES = ['mixed', 'txt', 'md', 'doc', 'docx', 'pdf', 'html'] as const;
export const SPACES = ['l2', 'cosine'] as const;
export const PPR_MODES = ['walk', 'restart'] as const;

const embeddingProviderField = z
  .string({
    error: `${EXPECTED_PREFIX}${enumText([...PROVIDERS, ...Object.keys(EMBEDDING_PROVIDER_ALIASES)])}`,
  })
  .transform((s, ctx) => {
    const name = EMBEDDING_PROVIDER_ALIASES[s] ?? s;
    if ((PROVIDERS as readonly string[]).includes(name)) return name as ProviderName;
    ctx.issues.push({
      code: 'custom',
      input: s,
      message: `${EXPECTED_PREFIX}${enumText([...PROVIDERS, ...Object.keys(EMBEDDING_PROVIDER_ALIASES)])}`,
    });
    return z.NEVER;
  })
  .default('openai')
  .describe('Embedding provider: openai, gemini or local (openai_embedding / gemini_embedding accepted)');

export const modelConfigSchema = z.object({
  service_provider: enumField(
    PROVIDERS,
    'openai',
    'Text-generation provider: openai (or any OpenAI-compatible server via base_url), gemini, or local (offline)',
  ),
  model_name: nonEmptyStringField('gpt-4o-mini', 'Model used for text generation; any model of the provider'),
  api_keys: apiKeyField(
    `API key, or \${NAME} to read it from that variable; null, empty or <API_KEY> = use OPENAI_API_KEY / GEMINI_API_KEY (then GOOGLE_API_KEY)`,
  ),
  base_url: baseUrlField(
    'OpenAI-compatible server URL (Ollama, vLLM, llama.cpp: e.g. http://localhost:11434/v1); null = the official API',
  ),
  temperature: numberField(0, 'Generation temperature, 0 to 2', { min: 0, max: 2 }),
  max_tokens: intField(10000, 'Maximum tokens to generate per call', 1),
  rate_limit: numberField(
    40,
    'Requests started per second (> 0); also the most in flight at once unless max_in_flight is set',
    { min: 0, exclusiveMin: true },
  ),
  max_in_flight: maxInFlightField(
    'Most requests in flight at once (an integer ≥ 1); null = rate_limit rounded down (at least 1). Ollama, llama.cpp: 1–2, their parallel slots (OLLAMA_NUM_PARALLEL, llama-server --parallel). vLLM and hosted APIs handle concurrency: leave null',
  ),
  request_timeout: requestTimeoutField(
    120,
    'Seconds one request may take once sent, 0 < t ≤ 1800; waiting for rate_limit / max_in_flight does not count. Big models on CPU (Ollama, llama.cpp): 300 or more',
  ),
});

export const embeddingConfigSchema = z.object({
  service_provider: embeddingProviderField,
  embedding_model_name: nonEmptyStringField(
    'text-embedding-3-small',
    'Embedding model (OpenAI: text-embedding-3-small / -3-large; Gemini: text-embedding-004 / gemini-embedding-001)',
  ),
  api_keys: apiKeyField(
    `API key, or \${NAME} to read it from that variable; null = use OPENAI_API_KEY / GEMINI_API_KEY (then GOOGLE_API_KEY)`,
  ),
  base_url: baseUrlField('OpenAI-compatible embedding server URL; null = the official API'),
  query_prefix: prefixField(
    'Text put before every question before it is embedded. Models trained with instructions need it: e5 "query: ", bge "Represent this sentence for searching relevant passages: ", nomic "search_query: ". Empty for OpenAI and Gemini models. Changing it needs no rebuild',
  ),
  document_prefix: prefixField(
    'Text put before every indexed text before it is embedded: e5 "passage: ", nomic "search_document: ", bge and OpenAI/Gemini models none. Changing it after a build needs a rebuild from scratch',
  ),
  rate_limit: numberField(
    20,
    'Embedding requests started per second (> 0); also the most in flight at once unless max_in_flight is set',
    { min: 0, exclusiveMin: true },
  ),
  max_in_flight: maxInFlightField(
    'Most embedding requests in flight at once (an integer ≥ 1); null = rate_limit rounded down (at least 1). Ollama, llama.cpp and single-threaded embedding servers: 1–2. vLLM, TEI and hosted APIs handle concurrency: leave null',
  ),
  request_timeout: requestTimeoutField(
    60,
    'Seconds one embedding request (up to embedding_batch_size texts) may take once sent, 0 < t ≤ 1800; waiting for rate_limit / max_in_flight does not count. Embedding models on CPU: 120 or more, or a smaller embedding_batch_size',
  ),
});

export const configSectionSchema = z.object({
  main_folder: optionalStringField(
    'Folder of this project (informational; the folder holding this file is always used)',
  ),
  language: enumField(LANGUAGES, 'English', 'Document language and prompt set: English or Chinese'),
  docu_type: enumField(
    DOCU_TYPES,
    'mixed',
    'Input files: mixed (all supported) or only txt, md, doc, docx, pdf, html',
  ),
  follow_symlinks: boolField(
    false,
    'Index symbolic links in input/ that point outside input/ (false: they are skipped and listed in the state tree)',
  ),
  chunk_size: intField(1048, 'Chunk size in tokens (o200k_base), 64 to 16384', 64, 16384),
  embedding_batch_size: intField(
    50,
    'Texts per embedding request, 1 to 2048 (at most 100 for gemini)',
    1,
    2048,
  ),
  use_tqdm: boolField(false, 'Plain progress bars on a terminal (use_rich wins when both are true)'),
  use_rich: boolField(true, 'Styled output and live progress on a terminal'),
  space: enumField(SPACES, 'l2', 'Vector distance: l2 or cosine'),
  dim: intField(
    1536,
    'Embedding length; must match the embedding model (1536 OpenAI small, 768 Gemini); local takes any (the examples use 256)',
    1,
    16384,
  ),
  m: intField(50, 'HNSW links per node per layer, 2 to 256', 2, 256),
  ef: intField(200, 'HNSW ef_construction (build-time candidate list), 1 to 4096', 1, 4096),
  m0: nullableIntField(
    'HNSW layer-0 links: null, or exactly 2·m (layer 0 always keeps 2·m)',
    undefined,
    'null or exactly 2·m',
  ),
  Hcluster_size: intField(39, 'Members per cluster before k-means splits community links', 1),
  url: hostField('127.0.0.1', 'Host address of the search server'),
  port: intField(5000, 'Port of the search server', 1, 65535),
  unbalance_adjust: boolField(true, 'Damp edges of high-degree nodes in the search graph'),
  cross_node: intField(5, 'Units, texts, attributes and elements returned by propagation', 0, 1000),
  Enode: intField(10, 'Entity nodes returned (each brings its attribute)', 0, 1000),
  Rnode: intField(5, 'Relationship nodes returned', 0, 1000),
  Hnode: intField(2, 'High-level element titles returned (each brings its element)', 0, 1000),
  HNSW_results: intField(10, 'Vector-search hits that seed the propagation', 0, 1000),
  bridge_passages: intField(
    2,
    'Bridge passages: text chunks reached from the context through entities its passages name (the second hop of multi-hop questions), closest to the question first; 0 disables',
    0,
    100,
  ),
  bridge_max_degree: intField(
    10,
    'An entity links bridge passages only when it has at most this many graph neighbours (specific names, not generic words)',
    1,
    1_000_000,
  ),
  similarity_weight: numberField(1, 'Seed weight of vector-search hits (≥ 0; not both weights 0)', {
    min: 0,
  }),
  accuracy_weight: numberField(1, 'Seed weight of exact name matches (≥ 0)', { min: 0 }),
  ppr_alpha: numberField(0.5, 'Propagation damping factor, 0 to 1', { min: 0, max: 1 }),
  ppr_max_iter: intField(2, 'Propagation steps, 0 to 1000 (0 ranks the seeds only)', 0, 1000),
  ppr_mode: enumField(
    PPR_MODES,
    'walk',
    'walk (lazy walk from the seeds) or restart (personalized PageRank)',
  ),
  ef_search: intField(64, 'HNSW search beam (at least HNSW_results is used), 1 to 4096', 1, 4096),
  material_token_budget: intField(
    12000,
    'Tokens of source material per attribute or community prompt, 1000 to 1000000',
    1000,
    1_000_000,
  ),
});

/** The whole file. Section order is the template's order. */
export const nodeConfigSchema = z.object({
  model_config: modelConfigSchema,
  embedding_config: embeddingConfigSchema,
  config: configSectionSchema,
});

export type NodeConfigData = z.output<typeof nodeConfigSchema>;
export type ModelConfigData = z.output<typeof modelConfigSchema>;
export type EmbeddingConfigData = z.output<typeof embeddingConfigSchema>;
export type ConfigSectionData = z.output<typeof configSectionSchema>;
export type SectionName = keyof NodeConfigData;

export const SECTION_COMMENTS: Readonly<Record<SectionName, string>> = {
  model_config: 'Text generation (decomposition, attributes, summaries, query decomposition, answers)',
  embedding_config: 'Embeddings (texts, semantic units, attributes, high-level elements, questions)',
  config: 'Indexing, search and server settings',
};

/** Keys holding secrets: never echoed in problems, logs or JSON. */
export const SECRET_KEYS: ReadonlySet<string> = new Set([
  'model_config.api_keys',
  'embedding_config.api_keys',
]);

/** Default value of every key, as the schema defines it. */
export function defaultConfigData(): NodeConfigData {
  return {
    model_config: modelConfigSchema.parse({}),
    embedding_config: embeddingConfigSchema.parse({}),
    config: configSectionSchema.parse({}),
  };
}
