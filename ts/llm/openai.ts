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
 * which passes an AbortSignal per attempt. Requests go through `untimedFetch`, so Node's fetch
 * does not drop a reply that takes longer than 300 s before the configured timeout.
 */
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { MAX_REQUEST_TIMEOUT_S } from '../config/schema.js';
import { promptSet } from './prompts/index.js';
import {
  abortReason,
  type ErrorContext,
  httpError,
  invalidReplyError,
  networkCode,
  networkError,
  parseRetryAfter,
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
import { untimedFetch } from './untimed-fetch.js';

export type OpenAIProviderOptions = RemoteProviderOptions;

/** Does a 400 reply reject the json_schema response format? */
function rejectsJsonSchema(e: InstanceType<typeof OpenAI.APIError>): boolean {
  if (e.status !== 400) return false;
  const text = `${e.message} ${e.param ?? ''} ${JSON.stringify(e.error ?? '')}`.toLowerCase();
  return text.includes('response_format') || text.includes('json_schema');
}

export class OpenAIProvider implements Provider {
  readonly identity: ProviderIdentity;
  readonly #client: OpenAI;
  readonly #o: OpenAIProviderOptions;
  readonly #ctx: ErrorContext;
  readonly #requestDim: number | undefined;
  /** False once the server has rejected json_schema: plain JSON mode from then on. */
  #jsonSchemaSupported = true;

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
      // Node's fetch would give up on a reply slower than 300 s (a big local model on CPU).
      fetch: untimedFetch,
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
      for await (const chunk of stream) {
        const delta = chunk.choices?.[0]?.delta;
        if (delta?.refusal) throw invalidReplyError(this.#ctx, 'reply (refusal)', delta.refusal);
        if (delta?.content) yield delta.content;
      }
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
    return structuredWithRepair(this.#ctx, request, validate, (messages) =>
      this.#completeJson(messages, schema, request, options.signal),
    );
  }

  async embed(texts: readonly string[], options: CallOptions = {}): Promise<EmbeddingBatch> {
    if (texts.length === 0) return { vectors: new Float32Array(0), dim: this.#o.dim ?? 0 };
    try {
      const res = await this.#client.embeddings.create(
        {
          model: this.#o.model,
          input: [...texts],
          ...(this.#requestDim !== undefined ? { dimensions: this.#requestDim } : {}),
          // The official API defaults to base64 (the SDK decodes it); compatible servers
          // do not all support base64, so ask them for plain floats.
          ...(this.#o.baseUrl ? { encoding_format: 'float' as const } : {}),
        },
        { signal: options.signal },
      );
      const rows = [...res.data].sort((a, b) => a.index - b.index);
      return packEmbeddings(
        this.#ctx,
        texts.length,
        rows.map((r) => r.embedding),
      );
    } catch (e) {
      throw this.#mapError(e, options.signal);
    }
  }

  async #completeJson(
    messages: ChatMessage[],
    schema: JsonSchemaSpec,
    request: ChatRequest,
    signal: AbortSignal | undefined,
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
        if (!(e instanceof OpenAI.APIError) || !rejectsJsonSchema(e)) throw this.#mapError(e, signal);
        this.#jsonSchemaSupported = false;
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
      res = await this.#client.chat.completions.create(this.#chatBody(messages, responseFormat), { signal });
    } catch (e) {
      if (rawErrors && e instanceof OpenAI.APIError && !(e instanceof OpenAI.APIUserAbortError)) throw e;
      throw this.#mapError(e, signal);
    }
    const message = res.choices?.[0]?.message;
    if (message?.refusal) throw invalidReplyError(this.#ctx, 'reply (refusal)', message.refusal);
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
      return networkError(
        this.#ctx,
        e.cause instanceof Error ? `${e.message} (${e.cause.message})` : e.message,
        e,
      );
    }
    if (e instanceof OpenAI.APIError && typeof e.status === 'number') {
      return httpError(this.#ctx, e.status, e.message, parseRetryAfter(e.headers), e);
    }
    if (networkCode(e)) return networkError(this.#ctx, (e as Error).message, e);
    if (e instanceof SyntaxError) return invalidReplyError(this.#ctx, 'HTTP body', e.message);
    return e;
  }
}
