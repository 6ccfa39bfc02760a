/**
 * OpenAI adapter (the only importer of the `openai` SDK, v6): chat completions, strict
 * json_schema structured output, embeddings. With `baseUrl` it talks to any
 * OpenAI-compatible server (Ollama, vLLM, llama.cpp server).
 *
 * Such a server may not know `response_format: json_schema`. When it rejects the parameter
 * with HTTP 400 naming it, the request is repeated once in plain JSON mode (`json_object`)
 * with the schema in the prompt, and the adapter remembers to use that mode from then on.
 *
 * The SDK's own retries are off: retry, rate limiting and timeouts live in CachedProvider,
 * which passes an AbortSignal per attempt. Requests go through `httpFetch` (node:http), which
 * costs less CPU per request than Node's fetch and has no 300 s limit of its own.
 *
 * Non-streamed completions and embeddings are posted by `#post` over `httpPostWhole`, not
 * through the SDK's request pipeline (options, headers, logging details, a promise chain and a
 * `Response` per request): bench/peer/call-overhead.ts measured 0.50 ms of CPU per call
 * through the SDK over httpFetch and 0.23 ms through `#post` (load 4.2). The
 * URL and headers are the ones the SDK builds for the path (asked of it once per path, so the
 * key, organisation, project, user agent and platform headers are its own), the body its JSON,
 * and a reply becomes what the SDK would return or throw: the parsed body, or its APIError
 * subclass for the status (`APIError.generate`, as the SDK does), APIConnectionError /
 * APIConnectionTimeoutError for a failed or timed-out connection, APIUserAbortError.
 * Streamed completions still go through the SDK.
 */
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { MAX_REQUEST_TIMEOUT_S } from '../config/schema.js';
import { ProviderError } from '../errors.js';
import { httpFetch, httpPostWhole, type WholeReply } from './http-fetch.js';
import { promptSet } from './prompts/index.js';
import {
  abortedReplyError,
  abortReason,
  clean,
  type ErrorContext,
  httpError,
  incompleteReplyError,
  invalidReplyError,
  networkCode,
  networkError,
  parseRetryAfter,
  refusalError,
  throwIfAborted,
  who,
} from './provider-errors.js';
import {
  decodeEmbedding,
  packEmbeddings,
  type RemoteProviderOptions,
  remoteSetup,
} from './remote-provider.js';
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

export type OpenAIProviderOptions = RemoteProviderOptions;

/** The SDK's backstop per request (CachedProvider aborts each attempt at its own timeout). */
const BACKSTOP_TIMEOUT_MS = (MAX_REQUEST_TIMEOUT_S + 60) * 1000;

interface PostTemplate {
  url: string;
  headers: Record<string, string>;
}

const utf8 = new TextDecoder();

/** `JSON.parse`, or undefined (the SDK's `safeJSON`). */
function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Does a 400 reply reject a request parameter, named by any of `names`? */
function rejectsParam(e: InstanceType<typeof OpenAI.APIError>, ...names: string[]): boolean {
  if (e.status !== 400) return false;
  const text = `${e.message} ${e.param ?? ''} ${JSON.stringify(e.error ?? '')}`.toLowerCase();
  return names.some((n) => text.includes(n));
}

/** finish_reason values of a reply that is not whole (cut at max_tokens, or filtered). */
const INCOMPLETE_FINISH = new Set(['length', 'content_filter']);

/**
 * The error for a finish_reason that says the reply is not whole, or null: cut or filtered
 * (asking again gets the same), or aborted by the server (vLLM `abort`: worth another try).
 */
function unfinishedReply(ctx: ErrorContext, finish: string | null | undefined): ProviderError | null {
  if (!finish) return null;
  if (INCOMPLETE_FINISH.has(finish)) return incompleteReplyError(ctx, `finish_reason ${finish}`);
  if (finish === 'abort') return abortedReplyError(ctx, `finish_reason ${finish}`);
  return null;
}

export class OpenAIProvider implements Provider {
  readonly identity: ProviderIdentity;
  readonly #client: OpenAI;
  readonly #o: OpenAIProviderOptions;
  readonly #ctx: ErrorContext;
  readonly #requestDim: number | undefined;
  /** False once the server has rejected json_schema: plain JSON mode from then on. */
  #jsonSchemaSupported = true;
  /** False once the server has rejected base64 embeddings: lists of floats from then on. */
  #base64Supported = true;
  /** URL and headers of a JSON POST per API path, as the SDK builds them; null: use the SDK. */
  readonly #templates = new Map<string, Promise<PostTemplate | null>>();

  constructor(options: OpenAIProviderOptions) {
    this.#o = options;
    this.#client = new OpenAI({
      // A local OpenAI-compatible server usually ignores the key, but the SDK requires one.
      apiKey: options.apiKey ?? 'not-needed',
      baseURL: options.baseUrl ?? undefined,
      maxRetries: 0,
      // Backstop only: CachedProvider aborts each attempt at its own timeout (request_timeout),
      // which is at most MAX_REQUEST_TIMEOUT_S.
      timeout: (MAX_REQUEST_TIMEOUT_S + 60) * 1000,
      // node:http instead of Node's fetch: a third of its CPU per request, and no 300 s limit
      // on a slow reply (a big local model on CPU).
      fetch: httpFetch,
    });
    const setup = remoteSetup('openai', options, 'dimensions');
    this.identity = setup.identity;
    this.#ctx = setup.ctx;
    this.#requestDim = setup.requestDim;
  }

  async chat(request: ChatRequest, options: CallOptions = {}): Promise<string> {
    return this.#complete(request.messages, undefined, options.signal);
  }

  /**
   * A streamed chat completion (`stream: true`, server-sent chunks read by the SDK): the
   * content of each chunk's delta. Leaving the loop early makes the SDK abort the request.
   */
  async *chatStream(
    request: ChatRequest,
    options: CallOptions = {},
  ): AsyncGenerator<string, void, undefined> {
    const { signal } = options;
    try {
      const stream = await this.#client.chat.completions.create(
        { ...this.#chatBody(request.messages), stream: true },
        { signal },
      );
      let finish: string | null = null;
      for await (const chunk of stream) {
        const choice = chunk.choices?.[0];
        const delta = choice?.delta;
        if (delta?.refusal) throw refusalError(this.#ctx, delta.refusal);
        if (delta?.content) yield delta.content;
        if (choice?.finish_reason) finish = choice.finish_reason;
      }
      // A stream without a finish reason is taken as whole: some OpenAI-compatible servers and
      // proxies (LiteLLM, older LocalAI) never send one, and refusing them would fail every
      // streamed answer. (The SDK does not say whether [DONE] came.)
      const unfinished = unfinishedReply(this.#ctx, finish);
      if (unfinished) throw unfinished;
    } catch (e) {
      throw this.#mapError(e, signal);
    }
  }

  async structured<T>(
    request: ChatRequest,
    schema: JsonSchemaSpec,
    validate: Validator<T>,
    options: CallOptions = {},
  ): Promise<T> {
    const { eachRequest, noNewRequests } = options;
    return structuredWithRepair(this.#ctx, request, validate, (messages) =>
      eachRequest
        ? eachRequest((signal) => this.#completeJson(messages, schema, request, signal, noNewRequests))
        : this.#completeJson(messages, schema, request, options.signal, noNewRequests),
    );
  }

  /**
   * Vectors travel as base64 (what the official API and its Python SDK default to): a float
   * as JSON text is about 20 bytes to print and parse, against 5.3 as base64 (measured in
   * bench peer: see bench/RESULTS.md). We decode it ourselves; the SDK's own decoding goes
   * through a number[] per vector. A server that ignores the parameter and sends lists is read
   * as well; one that rejects it (HTTP 400 naming encoding_format) is asked for floats, from
   * then on.
   */
  async embed(texts: readonly string[], options: CallOptions = {}): Promise<EmbeddingBatch> {
    if (texts.length === 0) return { vectors: new Float32Array(0), dim: this.#o.dim ?? 0 };
    const { signal } = options;
    try {
      let res: OpenAI.CreateEmbeddingResponse | undefined;
      if (this.#base64Supported) {
        try {
          res = await this.#embedRequest(texts, 'base64', signal);
        } catch (e) {
          if (!(e instanceof OpenAI.APIError) || !rejectsParam(e, 'encoding_format')) throw e;
          this.#base64Supported = false;
          // Asking again in the other form is a new request: not once the caller stopped.
          throwIfAborted(options.noNewRequests);
        }
      }
      res ??= await this.#embedRequest(texts, 'float', signal);
      const data = (res as { data?: unknown } | null)?.data;
      if (!Array.isArray(data)) {
        // Some compatible servers answer 200 with an error object (Ollama: "model not found,
        // try pulling it first"): its message says what to fix.
        const error = (res as { error?: { message?: unknown } } | null)?.error;
        if (typeof error?.message === 'string') {
          throw invalidReplyError(
            this.#ctx,
            'embeddings reply',
            `an error instead of embeddings: ${error.message}`,
          );
        }
        throw invalidReplyError(this.#ctx, 'embeddings reply', `no "data" list in ${describeBody(res)}`);
      }
      const rows = inputOrder(this.#ctx, data as OpenAI.Embeddings.Embedding[], texts.length);
      return packEmbeddings(
        this.#ctx,
        texts.length,
        rows.map((r) => decodeEmbedding(this.#ctx, r.embedding)),
      );
    } catch (e) {
      throw this.#mapError(e, signal);
    }
  }

  /** One embeddings request; with an explicit encoding_format the SDK returns the body as sent. */
  #embedRequest(
    texts: readonly string[],
    encoding: 'base64' | 'float',
    signal: AbortSignal | undefined,
  ): Promise<OpenAI.CreateEmbeddingResponse> {
    const body = {
      model: this.#o.model,
      input: [...texts],
      ...(this.#requestDim !== undefined ? { dimensions: this.#requestDim } : {}),
      encoding_format: encoding,
    };
    return this.#post('/embeddings', body, signal, () =>
      this.#client.embeddings.create(body, { signal }),
    ) as Promise<OpenAI.CreateEmbeddingResponse>;
  }

  /** The SDK's URL and headers for a JSON POST to `path` (see the module comment). */
  #template(path: string): Promise<PostTemplate | null> {
    let t = this.#templates.get(path);
    if (!t) {
      t = this.#client.buildRequest({ method: 'post', path, body: {} }).then(({ req, url }) => {
        const headers: Record<string, string> = {};
        for (const [k, v] of new Headers(req.headers as ConstructorParameters<typeof Headers>[0]))
          headers[k] = v;
        // A header that must differ per request (an idempotency key): leave it to the SDK.
        if (Object.keys(headers).some((k) => k.includes('idempotency'))) return null;
        return { url, headers };
      });
      this.#templates.set(path, t);
    }
    return t;
  }

  /**
   * POST `body` as JSON to `path` and return what the SDK's `create` would (the parsed body),
   * or throw what it would; `viaSdk` when the template cannot be used.
   */
  async #post(
    path: string,
    body: object,
    signal: AbortSignal | undefined,
    viaSdk: () => Promise<unknown>,
  ): Promise<unknown> {
    const template = await this.#template(path);
    if (!template) return viaSdk();
    if (signal?.aborted) throw new OpenAI.APIUserAbortError();
    const controller = new AbortController();
    let timedOut = false;
    const abort = () => controller.abort();
    signal?.addEventListener('abort', abort, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, BACKSTOP_TIMEOUT_MS);
    let res: WholeReply;
    try {
      res = await httpPostWhole(template.url, template.headers, JSON.stringify(body), controller.signal);
    } catch (e) {
      if (signal?.aborted) throw new OpenAI.APIUserAbortError();
      const cause = e as { cause?: unknown };
      if (timedOut || /timed? ?out/i.test(String(e) + ('cause' in cause ? String(cause.cause) : ''))) {
        throw new OpenAI.APIConnectionTimeoutError();
      }
      throw new OpenAI.APIConnectionError({ cause: e instanceof Error ? e : new Error(String(e)) });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
    }
    // The body as `Response.text()` reads it (UTF-8, a leading BOM dropped).
    const text = () => utf8.decode(res.bytes);
    if (res.status < 200 || res.status > 299) {
      const errText = text();
      const json = safeJson(errText);
      throw OpenAI.APIError.generate(
        res.status,
        json as object | undefined,
        json ? undefined : errText,
        res.headers(),
      );
    }
    // As the SDK's defaultParseResponse: 204 is null, a JSON type is parsed (an empty one is
    // undefined), anything else is the text.
    if (res.status === 204) return null;
    const mediaType = res.header('content-type')?.split(';')[0]?.trim();
    if (mediaType?.includes('application/json') || mediaType?.endsWith('+json')) {
      if (res.header('content-length') === '0') return undefined;
      return JSON.parse(text());
    }
    return text();
  }

  async #completeJson(
    messages: ChatMessage[],
    schema: JsonSchemaSpec,
    request: ChatRequest,
    signal: AbortSignal | undefined,
    noNewRequests: AbortSignal | undefined,
  ): Promise<string> {
    if (this.#jsonSchemaSupported) {
      try {
        return await this.#complete(
          messages,
          { type: 'json_schema', json_schema: { name: schema.name, schema: schema.schema, strict: true } },
          signal,
          true,
        );
      } catch (e) {
        if (!(e instanceof OpenAI.APIError) || !rejectsParam(e, 'response_format', 'json_schema'))
          throw this.#mapError(e, signal);
        this.#jsonSchemaSupported = false;
        // The plain JSON request is a new one: not once the caller stopped.
        throwIfAborted(noNewRequests);
      }
    }
    // Plain JSON mode: the schema goes into the system message.
    const hint = promptSet(request.language).jsonFallback(JSON.stringify(schema.schema));
    const [first, ...rest] = messages;
    const withSchema: ChatMessage[] =
      first?.role === 'system'
        ? [{ role: 'system', content: `${first.content}\n\n${hint}` }, ...rest]
        : [{ role: 'system', content: hint }, ...messages];
    return this.#complete(withSchema, { type: 'json_object' }, signal);
  }

  /** One chat completion; `rawErrors` leaves SDK errors unmapped for the json_schema fallback. */
  async #complete(
    messages: ChatMessage[],
    responseFormat: ChatCompletionCreateParamsNonStreaming['response_format'],
    signal: AbortSignal | undefined,
    rawErrors = false,
  ): Promise<string> {
    let res: OpenAI.Chat.Completions.ChatCompletion;
    try {
      const body = this.#chatBody(messages, responseFormat);
      res = (await this.#post('/chat/completions', body, signal, () =>
        this.#client.chat.completions.create(body, { signal }),
      )) as OpenAI.Chat.Completions.ChatCompletion;
    } catch (e) {
      if (rawErrors && e instanceof OpenAI.APIError && !(e instanceof OpenAI.APIUserAbortError)) throw e;
      throw this.#mapError(e, signal);
    }
    // A 200 whose body is `null` (or a 204) reaches here as null: an invalid reply, retried.
    if (typeof res !== 'object' || res === null) {
      throw invalidReplyError(this.#ctx, 'reply', `the body is ${describeBody(res)}, not a chat completion`);
    }
    // Some OpenAI-compatible servers answer 200 with an error object (Ollama: "model not
    // found, try pulling it first"): its message says what to fix.
    const error = (res as { error?: { message?: unknown } }).error;
    if (!res.choices && typeof error?.message === 'string') {
      throw invalidReplyError(this.#ctx, 'reply', `an error instead of a chat completion: ${error.message}`);
    }
    const message = res.choices?.[0]?.message;
    if (message?.refusal) throw refusalError(this.#ctx, message.refusal);
    const finish = res.choices?.[0]?.finish_reason;
    const unfinished = unfinishedReply(this.#ctx, finish);
    if (unfinished) throw unfinished;
    const content = message?.content;
    if (typeof content !== 'string') throw invalidReplyError(this.#ctx, 'reply', 'no message content');
    return content;
  }

  /** The request body of a chat completion (streamed or not). */
  #chatBody(
    messages: readonly ChatMessage[],
    responseFormat?: ChatCompletionCreateParamsNonStreaming['response_format'],
  ): ChatCompletionCreateParamsNonStreaming {
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: this.#o.model,
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      temperature: this.#o.temperature ?? 0,
      ...(responseFormat ? { response_format: responseFormat } : {}),
    };
    if (this.#o.maxTokens !== undefined) {
      // The official API has renamed the limit; compatible servers know the old name.
      if (this.#o.baseUrl) body.max_tokens = this.#o.maxTokens;
      else body.max_completion_tokens = this.#o.maxTokens;
    }
    return body;
  }

  #mapError(e: unknown, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted) return abortReason(signal);
    if (e instanceof OpenAI.APIUserAbortError) return signal ? abortReason(signal) : e;
    if (e instanceof OpenAI.APIConnectionError) {
      // Includes APIConnectionTimeoutError (the backstop timeout) and connection resets.
      // The socket's own error (ECONNREFUSED, ENOTFOUND) is under fetch's "fetch failed".
      const code = networkCode(e);
      const why = e.cause instanceof Error ? ` (${e.cause.message}${code ? `: ${code}` : ''})` : '';
      return networkError(this.#ctx, `${e.message}${why}`, e);
    }
    if (e instanceof OpenAI.APIError && typeof e.status === 'number') {
      return httpError(this.#ctx, e.status, e.message, parseRetryAfter(e.headers), e);
    }
    // An error the server sent inside a stream (an SSE `error` event) has no HTTP status.
    if (e instanceof OpenAI.APIError) {
      return new ProviderError(
        `${who(this.#ctx)} reported an error in its stream: ${clean(this.#ctx, e.message)}`,
        { provider: this.#ctx.provider, retryable: true },
        { cause: e },
      );
    }
    if (networkCode(e)) return networkError(this.#ctx, (e as Error).message, e);
    if (e instanceof SyntaxError) return invalidReplyError(this.#ctx, 'HTTP body', e.message);
    return e;
  }
}

/** What a reply body that is not the expected object is, for the error message. */
function describeBody(body: unknown): string {
  if (body === null || body === undefined) return 'empty (null)';
  if (Array.isArray(body)) return 'a JSON array';
  if (typeof body === 'string') {
    // The SDK hands over a body that is not JSON (an HTML login page) as its text.
    const start = body.trimStart().slice(0, 60).replace(/\s+/g, ' ');
    return /^</.test(start) ? `HTML or XML, not JSON ("${start}")` : `text, not JSON ("${start}")`;
  }
  return typeof body === 'object' ? 'an object without it' : `a JSON ${typeof body}`;
}

/**
 * The rows of an embeddings reply in input order. Each row's `index` says which input it
 * embeds: each of 0 to n - 1 once, or the vectors would be stored against other texts (a
 * reply with repeated indexes was accepted, sorted, and cached). A reply with no index at all
 * (some compatible servers) is taken in the order sent; one with another number of rows is
 * left as it is for packEmbeddings, which names the count.
 */
function inputOrder(
  ctx: ErrorContext,
  rows: readonly OpenAI.Embeddings.Embedding[],
  n: number,
): OpenAI.Embeddings.Embedding[] {
  const indexOf = (r: OpenAI.Embeddings.Embedding) => (r as { index?: unknown } | null)?.index;
  if (rows.length !== n || rows.every((r) => indexOf(r) === undefined)) return [...rows];
  const placed: OpenAI.Embeddings.Embedding[] = new Array(n);
  for (const r of rows) {
    const i = indexOf(r);
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= n || placed[i]) {
      throw invalidReplyError(
        ctx,
        'embeddings reply',
        `the rows' "index" fields are not each of 0 to ${n - 1} once (got ${JSON.stringify(i)})`,
      );
    }
    placed[i] = r;
  }
  return placed;
}
