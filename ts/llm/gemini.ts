/**
 * Gemini adapter (the only importer of `@google/genai`, v2): generateContent with
 * `responseMimeType: application/json` + `responseSchema` for structured output, and
 * embedContent (which the SDK sends as one batchEmbedContents request for the Gemini API).
 *
 * `baseUrl` (httpOptions.baseUrl) points the SDK at another endpoint: a gateway, or the fake
 * server of the tests. The SDK's error type carries no headers, so each request gets a fetch
 * wrapper that remembers the Retry-After of a failed response.
 *
 * The SDK (with google-auth-library, gaxios, ws… about 0.13 s of CPU to import) is loaded on
 * the first request, not with this module: create-providers imports every adapter, and a
 * build or a search with another provider never needs it.
 */
import type { Content, GenerateContentParameters, GoogleGenAI, Schema, Type } from '@google/genai';
import { ProviderError } from '../errors.js';
import { httpFetch } from './http-fetch.js';
import {
  abortReason,
  type ErrorContext,
  httpError,
  incompleteReplyError,
  invalidReplyError,
  networkCode,
  networkError,
  parseRetryAfter,
  unfinishedStreamError,
} from './provider-errors.js';
import { packEmbeddings, type RemoteProviderOptions, remoteSetup } from './remote-provider.js';
import { structuredWithRepair } from './structured.js';
import type {
  CallOptions,
  ChatMessage,
  ChatRequest,
  EmbeddingBatch,
  JsonSchemaSpec,
  Provider,
  ProviderIdentity,
  Validator,
} from './types.js';

export type GeminiProviderOptions = RemoteProviderOptions;

type Sdk = typeof import('@google/genai');
/** The SDK once loaded (its `ApiError` class for `#mapError`). */
let sdk: Sdk | undefined;
let loading: Promise<Sdk> | undefined;
function loadSdk(): Promise<Sdk> {
  loading ??= import('@google/genai').then((m) => {
    sdk = m;
    return m;
  });
  return loading;
}

/** The SDK's `Type` enum values (strings), without loading the SDK. */
const TYPES: Readonly<Record<string, Type>> = {
  object: 'OBJECT' as Type,
  array: 'ARRAY' as Type,
  string: 'STRING' as Type,
  number: 'NUMBER' as Type,
  integer: 'INTEGER' as Type,
  boolean: 'BOOLEAN' as Type,
};

/** Our JSON Schema subset → Gemini's OpenAPI-style Schema (property order kept). */
function toGeminiSchema(json: Record<string, unknown>): Schema {
  const out: Schema = {};
  const type = TYPES[String(json.type)];
  if (type) out.type = type;
  if (json.properties && typeof json.properties === 'object') {
    const props = json.properties as Record<string, Record<string, unknown>>;
    out.properties = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, toGeminiSchema(v)]));
    out.propertyOrdering = Object.keys(props);
  }
  if (Array.isArray(json.required)) out.required = json.required as string[];
  if (json.items && typeof json.items === 'object')
    out.items = toGeminiSchema(json.items as Record<string, unknown>);
  return out;
}

/** System messages become the system instruction; assistant turns are the `model` role. */
function toContents(messages: readonly ChatMessage[]): { system: string | undefined; contents: Content[] } {
  const system = messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n\n');
  const contents: Content[] = messages
    .filter((m) => m.role !== 'system')
    .map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: [{ text: m.content }] }));
  return { system: system || undefined, contents };
}

/**
 * A fetch that remembers the headers of the last non-OK response it saw. Through `httpFetch`,
 * which drops the key headers (`x-goog-api-key` among them) on a redirect to another origin:
 * the global fetch drops only `Authorization`, so a redirecting base_url received the key.
 */
function headerCapturingFetch(): { fetch: typeof fetch; failed: () => FailedResponse | undefined } {
  let failed: FailedResponse | undefined;
  const wrapped: typeof fetch = async (input, init) => {
    const res = await httpFetch(input, init);
    if (!res.ok) failed = { status: res.status, headers: res.headers };
    return res;
  };
  return { fetch: wrapped, failed: () => failed };
}

/** The status and headers of a reply that was not 2xx (the SDK may lose both on a bad body). */
interface FailedResponse {
  status: number;
  headers: Headers;
}

/**
 * The SDK puts the whole JSON error body in the message, sometimes after a prefix ("got
 * status: INTERNAL. {…}"); keep its `error.message`.
 */
function apiErrorMessage(message: string): string {
  const start = message.indexOf('{');
  if (start < 0) return message;
  try {
    const body = JSON.parse(message.slice(start)) as { error?: { message?: unknown } };
    if (typeof body.error?.message === 'string') return body.error.message;
  } catch {
    // not JSON: use as is
  }
  return message;
}

/**
 * The vectors of an embedding reply, each a non-empty list of numbers: anything else is an
 * invalid reply (retried), never a vector of zeros or of length 0.
 */
function embeddingValues(ctx: ErrorContext, res: unknown): number[][] {
  const rows = (res as { embeddings?: unknown } | null)?.embeddings;
  if (!Array.isArray(rows)) throw invalidReplyError(ctx, 'embedding reply', 'no "embeddings" list');
  return rows.map((row, i) => {
    const values = (row as { values?: unknown } | null)?.values;
    if (!Array.isArray(values) || values.length === 0) {
      throw invalidReplyError(ctx, 'embedding reply', `embedding ${i} has no values`);
    }
    if (!values.every((v) => typeof v === 'number')) {
      throw invalidReplyError(ctx, 'embedding reply', `embedding ${i} holds a value that is not a number`);
    }
    return values as number[];
  });
}

/**
 * A finish reason of a reply that is not whole: anything but STOP (MAX_TOKENS, SAFETY,
 * RECITATION, BLOCKLIST, …); an unspecified one is taken as whole.
 */
function incompleteFinish(reason: string): boolean {
  return reason !== 'STOP' && reason !== 'FINISH_REASON_UNSPECIFIED';
}

export class GeminiProvider implements Provider {
  readonly identity: ProviderIdentity;
  #ai: Promise<GoogleGenAI> | undefined;
  readonly #o: GeminiProviderOptions;
  readonly #ctx: ErrorContext;
  readonly #requestDim: number | undefined;

  constructor(options: GeminiProviderOptions) {
    this.#o = options;
    const setup = remoteSetup('gemini', options, 'outputDimensionality');
    this.identity = setup.identity;
    this.#ctx = setup.ctx;
    this.#requestDim = setup.requestDim;
  }

  /** The SDK client, made on the first request. */
  #client(): Promise<GoogleGenAI> {
    this.#ai ??= loadSdk().then(
      ({ GoogleGenAI }) =>
        new GoogleGenAI({
          vertexai: false,
          apiKey: this.#o.apiKey ?? 'not-set',
          httpOptions: this.#o.baseUrl ? { baseUrl: this.#o.baseUrl } : undefined,
        }),
    );
    return this.#ai;
  }

  async chat(request: ChatRequest, options: CallOptions = {}): Promise<string> {
    return this.#generate(request.messages, undefined, options.signal);
  }

  async structured<T>(
    request: ChatRequest,
    schema: JsonSchemaSpec,
    validate: Validator<T>,
    options: CallOptions = {},
  ): Promise<T> {
    const responseSchema = toGeminiSchema(schema.schema);
    const { eachRequest } = options;
    return structuredWithRepair(this.#ctx, request, validate, (messages) =>
      eachRequest
        ? eachRequest((signal) => this.#generate(messages, responseSchema, signal))
        : this.#generate(messages, responseSchema, options.signal),
    );
  }

  async embed(texts: readonly string[], options: CallOptions = {}): Promise<EmbeddingBatch> {
    if (texts.length === 0) return { vectors: new Float32Array(0), dim: this.#o.dim ?? 0 };
    const capture = headerCapturingFetch();
    try {
      const res = await (await this.#client()).models.embedContent({
        model: this.#o.model,
        contents: [...texts],
        config: {
          ...(this.#requestDim !== undefined ? { outputDimensionality: this.#requestDim } : {}),
          abortSignal: options.signal,
          httpOptions: { fetch: capture.fetch },
        },
      });
      return packEmbeddings(this.#ctx, texts.length, embeddingValues(this.#ctx, res));
    } catch (e) {
      throw this.#mapError(e, options.signal, capture.failed());
    }
  }

  /**
   * generateContentStream (`:streamGenerateContent?alt=sse`): the text of each chunk. The
   * SDK's reader does not cancel the response when the loop is left early, so the request
   * runs under its own controller, aborted then.
   */
  async *chatStream(
    request: ChatRequest,
    options: CallOptions = {},
  ): AsyncGenerator<string, void, undefined> {
    const { signal } = options;
    const ctl = new AbortController();
    const onAbort = () => ctl.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const capture = headerCapturingFetch();
    let finished = false;
    try {
      const stream = await (await this.#client()).models.generateContentStream(
        this.#generateParams(request.messages, undefined, ctl.signal, capture.fetch),
      );
      let finish: string | undefined;
      for await (const chunk of stream) {
        const blocked = chunk.promptFeedback?.blockReason;
        if (blocked) throw incompleteReplyError(this.#ctx, `blockReason ${blocked}`);
        const text = chunk.text;
        if (text) yield text;
        finish = chunk.candidates?.[0]?.finishReason ?? finish;
      }
      // A stream cut short ends like a whole one: only the last chunk's finish reason tells.
      if (finish === undefined) throw unfinishedStreamError(this.#ctx);
      if (incompleteFinish(finish)) throw incompleteReplyError(this.#ctx, `finishReason ${finish}`);
      finished = true;
    } catch (e) {
      throw this.#mapError(e, signal, capture.failed());
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (!finished) ctl.abort();
    }
  }

  /** The parameters of generateContent and generateContentStream. */
  #generateParams(
    messages: readonly ChatMessage[],
    responseSchema: Schema | undefined,
    signal: AbortSignal | undefined,
    fetchFn: typeof fetch,
  ): GenerateContentParameters {
    const { system, contents } = toContents(messages);
    return {
      model: this.#o.model,
      contents,
      config: {
        ...(system ? { systemInstruction: system } : {}),
        temperature: this.#o.temperature ?? 0,
        ...(this.#o.maxTokens !== undefined ? { maxOutputTokens: this.#o.maxTokens } : {}),
        ...(responseSchema ? { responseMimeType: 'application/json', responseSchema } : {}),
        abortSignal: signal,
        httpOptions: { fetch: fetchFn },
      },
    };
  }

  async #generate(
    messages: readonly ChatMessage[],
    responseSchema: Schema | undefined,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    const capture = headerCapturingFetch();
    try {
      const res = await (await this.#client()).models.generateContent(
        this.#generateParams(messages, responseSchema, signal, capture.fetch),
      );
      const text = res.text;
      const finish = res.candidates?.[0]?.finishReason;
      if (typeof text === 'string' && finish !== undefined && incompleteFinish(finish)) {
        throw incompleteReplyError(this.#ctx, `finishReason ${finish}`);
      }
      if (typeof text !== 'string') {
        // A prompt or reply the provider blocked gets the same answer when asked again.
        const blocked = res.promptFeedback?.blockReason;
        if (blocked) throw incompleteReplyError(this.#ctx, `blockReason ${blocked}`);
        if (finish !== undefined && incompleteFinish(finish)) {
          throw incompleteReplyError(this.#ctx, `finishReason ${finish}`);
        }
        throw invalidReplyError(this.#ctx, 'reply', `no text in the reply (${finish ?? 'no text'})`);
      }
      return text;
    } catch (e) {
      throw this.#mapError(e, signal, capture.failed());
    }
  }

  #mapError(e: unknown, signal: AbortSignal | undefined, failed: FailedResponse | undefined): unknown {
    if (signal?.aborted) return abortReason(signal);
    if (e instanceof ProviderError) return e;
    if (sdk && e instanceof sdk.ApiError) {
      return httpError(this.#ctx, e.status, apiErrorMessage(e.message), parseRetryAfter(failed?.headers), e);
    }
    // A non-2xx reply whose body the SDK could not read: its status still decides (a 401 is
    // not retried, a 429's Retry-After is honoured).
    if (failed) {
      const detail = e instanceof Error ? e.message : String(e);
      return httpError(this.#ctx, failed.status, detail, parseRetryAfter(failed.headers), e);
    }
    if (networkCode(e) || (e instanceof TypeError && /fetch failed/i.test(e.message))) {
      const cause = (e as { cause?: unknown }).cause;
      return networkError(
        this.#ctx,
        cause instanceof Error ? `${(e as Error).message} (${cause.message})` : String(e),
        e,
      );
    }
    if (e instanceof SyntaxError) return invalidReplyError(this.#ctx, 'HTTP body', e.message);
    // The SDK reading a 2xx reply of the wrong shape (a null body, parts that are not a list,
    // plain JSON where a stream was asked for) throws TypeErrors and plain Errors: an invalid
    // reply, retried, naming the provider.
    if (e instanceof Error) return invalidReplyError(this.#ctx, 'reply', e.message);
    return e;
  }
}
