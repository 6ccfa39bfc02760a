/**
 * A fake OpenAI-compatible server: POST /v1/chat/completions (honouring response_format
 * json_schema / json_object, and `stream: true` as chat.completion.chunk events) and POST /v1/embeddings (float or base64 encoding), answering
 * with the local provider's output. Used through the real `openai` SDK.
 *
 *   const server = await startFakeOpenAI({ latencyMs: 200 });
 *   new OpenAI({ baseURL: server.baseUrl, apiKey: 'x' });
 *   server.inject({ route: 'chat', fault: { kind: 'status', status: 429, retryAfter: '1' } });
 *   server.count('chat');
 */
import { featureHashBatch } from '../../../ts/llm/local/feature-hash.js';
import { textPieces } from '../../../ts/llm/text-pieces.js';
import type { ChatMessage } from '../../../ts/llm/types.js';
import {
  FakeProviderServer,
  type FakeServerOptions,
  fakeReply,
  type RouteContext,
  type RouteResult,
} from './fake-server.js';

export interface FakeOpenAIOptions extends FakeServerOptions {
  /** Answer 400 naming response_format to json_schema requests, like servers without it. */
  rejectJsonSchema?: boolean;
  /** Answer 400 naming encoding_format to base64 embedding requests, like servers without it. */
  rejectBase64?: boolean;
  /** Embeddings as lists of floats whatever encoding_format asks, like servers that ignore it. */
  floatsOnly?: boolean;
}

export class FakeOpenAIServer extends FakeProviderServer {
  /** Base URL for the SDK / config `base_url`: `http://127.0.0.1:<port>/v1`. */
  get baseUrl(): string {
    return `${this.origin}/v1`;
  }
}

function errorBody(status: number, message: string): unknown {
  return {
    error: {
      message,
      type: status === 429 ? 'rate_limit_error' : 'invalid_request_error',
      param: null,
      code: null,
    },
  };
}

interface ChatBody {
  model?: string;
  messages?: ChatMessage[];
  response_format?: { type?: string };
  stream?: boolean;
}

/** A streamed completion as the API sends it: role, one chunk per word piece, stop, [DONE]. */
function chunks(model: string, content: string): string[] {
  const id = `chatcmpl-fake-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: object, finish: string | null) =>
    JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    });
  return [
    chunk({ role: 'assistant', content: '', refusal: null }, null),
    ...textPieces(content).map((piece) => chunk({ content: piece }, null)),
    chunk({}, 'stop'),
    '[DONE]',
  ];
}

/** OpenAI's 400 reply to a request parameter the server does not support. */
function invalidRequest(param: string, message: string): RouteResult {
  return { status: 400, body: { error: { message, type: 'invalid_request_error', param, code: null } } };
}

function chat(options: FakeOpenAIOptions) {
  return ({ body, fault }: RouteContext): RouteResult => {
    const b = (body ?? {}) as ChatBody;
    const format = b.response_format?.type;
    if (options.rejectJsonSchema && format === 'json_schema') {
      return invalidRequest(
        'response_format',
        "Invalid parameter: 'response_format' of type 'json_schema' is not supported by this server.",
      );
    }
    const content = fakeReply(b.messages ?? [], format === 'json_schema' || format === 'json_object', fault);
    if (b.stream === true) return { status: 200, body: null, events: chunks(b.model ?? 'fake', content) };
    return chatCompletion(b.model ?? 'fake', content);
  };
}

/** A whole (non-streamed) chat completion reply with this content. */
export function chatCompletion(model: string, content: string): RouteResult {
  return {
    status: 200,
    body: {
      id: `chatcmpl-fake-${Date.now()}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    },
  };
}

interface EmbeddingsBody {
  model?: string;
  input?: string | string[];
  dimensions?: number;
  encoding_format?: 'float' | 'base64';
}

/**
 * POST /v1/embeddings: the local provider's feature-hash vectors (dim: the request's
 * `dimensions`, else the server's), as lists of floats or base64 per `encoding_format`.
 */
export function embeddingsRoute(options: FakeOpenAIOptions = {}) {
  return ({ body, fault, options: server }: RouteContext): RouteResult => {
    const b = (body ?? {}) as EmbeddingsBody;
    if (options.rejectBase64 && b.encoding_format === 'base64') {
      return invalidRequest(
        'encoding_format',
        "Invalid value for 'encoding_format': only 'float' is supported.",
      );
    }
    const inputs = typeof b.input === 'string' ? [b.input] : (b.input ?? []);
    const dim = fault?.kind === 'wrong-dim' ? fault.dim : (b.dimensions ?? server.dim ?? 1536);
    const flat = featureHashBatch(inputs, dim);
    const base64 = b.encoding_format === 'base64' && !options.floatsOnly;
    const data = inputs.map((_, i) => {
      const v = flat.subarray(i * dim, (i + 1) * dim);
      const embedding = base64
        ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')
        : Array.from(v);
      return { object: 'embedding', index: i, embedding };
    });
    return {
      status: 200,
      body: { object: 'list', data, model: b.model ?? 'fake', usage: { prompt_tokens: 1, total_tokens: 1 } },
    };
  };
}

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAIServer> {
  const server = new FakeOpenAIServer(
    [
      { name: 'chat', match: (m, p) => m === 'POST' && p === '/v1/chat/completions', handle: chat(options) },
      {
        name: 'embeddings',
        match: (m, p) => m === 'POST' && p === '/v1/embeddings',
        handle: embeddingsRoute(options),
      },
    ],
    (req, key) => req.headers.authorization === `Bearer ${key}`,
    errorBody,
    options,
  );
  return server.start();
}
