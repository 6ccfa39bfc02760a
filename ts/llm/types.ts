/**
 * The provider interface. Every model call carries a `task` tag and the task's structured
 * inputs next to the rendered prompt: real providers send `messages`, the offline `local`
 * provider computes its reply from `input` (docs/method.md §7.7), and both are validated by the
 * same schema.
 */
import type { Language, ProviderName } from '../config/schema.js';

export type { Language, ProviderName } from '../config/schema.js';

/** The prompts of docs/method.md §3.10: D, R, A, C, Q and ANS. */
export const TASKS = ['decompose', 'repair', 'attribute', 'community', 'query', 'answer'] as const;
export type Task = (typeof TASKS)[number];

export interface DecompositionUnit {
  semantic_unit: string;
  entities: string[];
  relationships: string[];
}

export interface HighLevelElement {
  title: string;
  description: string;
}

export interface TaskInputs {
  /** D: one chunk of text. */
  decompose: { text: string };
  /** R: one malformed relationship string and the unit's entities. */
  repair: { relationship: string; entities: string[] };
  /** A: an entity's name and its material, each list in rank order (best first). */
  attribute: { entity: string; units: string[]; relationships: string[] };
  /** C: the member texts of one community, in rank order. */
  community: { texts: string[] };
  /** Q: the user's question. */
  query: { question: string };
  /**
   * ANS: the context (the §6.6 layout, items numbered `[n]` across the context so the answer
   * can cite them), the question and, for a conversation, its earlier turns (oldest first).
   */
  answer: { context: string; question: string; history?: ChatMessage[] };
}

export interface TaskOutputs {
  decompose: { Output: DecompositionUnit[] };
  repair: { source: string; relationship: string; target: string };
  attribute: string;
  community: { high_level_elements: HighLevelElement[] };
  query: { elements: string[] };
  answer: string;
}

/** Tasks answered with JSON under a schema; the others are plain text. */
export const STRUCTURED_TASKS = ['decompose', 'repair', 'community', 'query'] as const;
export type StructuredTask = (typeof STRUCTURED_TASKS)[number];
/** Tasks answered with plain text (A and ANS): the ones a reply can stream for. */
export type TextTask = Exclude<Task, StructuredTask>;

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** A task with its inputs, as a discriminated union on `task`. */
export type TaskCall = { [K in Task]: { task: K; language: Language; input: TaskInputs[K] } }[Task];

/** What a provider receives: the task and its inputs, plus the prompt rendered for it. */
export type ChatRequest = TaskCall & { messages: ChatMessage[] };

/** A JSON Schema (draft 2020-12 subset, strict-mode compatible) with a name. */
export interface JsonSchemaSpec {
  name: string;
  schema: Record<string, unknown>;
}

export type Validation<T> = { ok: true; value: T } | { ok: false; error: string };
/** Checks a parsed JSON value and returns it normalised, or says what is wrong. */
export type Validator<T> = (value: unknown) => Validation<T>;

export interface CallOptions {
  /** Aborts the call, requests in flight included. */
  signal?: AbortSignal;
  /**
   * Once aborted, the call sends no further request but lets one in flight finish: a call
   * waiting for a rate-limit permit or out a retry backoff ends at once with its reason
   * (a build being stopped: its requests in flight get a grace period, nothing new starts).
   */
  noNewRequests?: AbortSignal;
  /**
   * Runs one HTTP request of the call with the caller's per-request policy (rate-limit
   * permit, timeout): a structured call sends its reply's request, then maybe a repair, and
   * each is one request to the server, under `rate_limit` and `request_timeout` on its own.
   * Without it the adapter sends with `signal`.
   */
  eachRequest?: EachRequest;
}

export type EachRequest = <R>(send: (signal: AbortSignal) => Promise<R>) => Promise<R>;

/** Vectors of one batch, row-major: text i is `vectors.subarray(i * dim, (i + 1) * dim)`. */
export interface EmbeddingBatch {
  vectors: Float32Array;
  dim: number;
}

/** What makes two requests the same, for the response cache (never the API key). */
export interface ProviderIdentity {
  readonly provider: ProviderName;
  readonly baseUrl: string | null;
  readonly model: string;
  /** Parameters that change the reply: temperature, max_tokens, requested dimensions. */
  readonly params: Readonly<Record<string, unknown>>;
}

/**
 * A model provider: one instance per config section (`model_config` for chat and
 * structured, `embedding_config` for embed). Errors are ProviderError with `retryable` set;
 * an aborted signal rejects with the signal's reason.
 */
export interface Provider {
  readonly identity: ProviderIdentity;
  /** Plain-text reply. */
  chat(request: ChatRequest, options?: CallOptions): Promise<string>;
  /**
   * The plain-text reply as the model generates it: text deltas in order, whose
   * concatenation is the reply. Leaving the loop early (or aborting the signal) cancels the
   * request.
   */
  chatStream(request: ChatRequest, options?: CallOptions): AsyncIterable<string>;
  /** JSON reply under `schema`, checked by `validate`; one repair attempt, then ProviderError. */
  structured<T>(
    request: ChatRequest,
    schema: JsonSchemaSpec,
    validate: Validator<T>,
    options?: CallOptions,
  ): Promise<T>;
  /** One vector per text, flat. */
  embed(texts: readonly string[], options?: CallOptions): Promise<EmbeddingBatch>;
}
