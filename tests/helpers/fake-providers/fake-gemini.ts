/**
 * A fake Gemini API server for the real `@google/genai` SDK (pointed at it with
 * `httpOptions.baseUrl`, i.e. config `base_url`): POST /v1beta/models/<model>:generateContent
 * (honouring responseMimeType application/json), :streamGenerateContent (server-sent events,
 * as the SDK asks with `alt=sse`) and :batchEmbedContents / :embedContent,
 * answering with the local provider's output.
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

export class FakeGeminiServer extends FakeProviderServer {
  /** Base URL for the SDK / config `base_url`. */
  get baseUrl(): string {
    return this.origin;
  }
}

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

function errorBody(status: number, message: string): unknown {
  return { error: { code: status, message, status: STATUS_NAMES[status] ?? 'UNKNOWN' } };
}

interface Part {
  text?: string;
}
interface GenerateBody {
  contents?: Array<{ role?: string; parts?: Part[] }>;
  systemInstruction?: { parts?: Part[] };
  generationConfig?: { responseMimeType?: string };
}

function textOf(parts: Part[] | undefined): string {
  return (parts ?? []).map((p) => p.text ?? '').join('');
}

/** The reply of streamGenerateContent (`alt=sse`): one chunk per word piece, the last with STOP. */
function streamGenerateContent(ctx: RouteContext): RouteResult {
  const reply = generateContent(ctx).body as { candidates: Array<{ content: { parts: Part[] } }> };
  const pieces = textPieces(textOf(reply.candidates[0]?.content.parts));
  const events = pieces.map((text, i) =>
    JSON.stringify({
      candidates: [
        {
          content: { role: 'model', parts: [{ text }] },
          index: 0,
          ...(i === pieces.length - 1 ? { finishReason: 'STOP' } : {}),
        },
      ],
      modelVersion: 'fake',
    }),
  );
  return { status: 200, body: null, events };
}

function generateContent({ body, fault }: RouteContext): RouteResult {
  const b = (body ?? {}) as GenerateBody;
  const messages: ChatMessage[] = [];
  const system = textOf(b.systemInstruction?.parts);
  if (system) messages.push({ role: 'system', content: system });
  for (const c of b.contents ?? []) {
    messages.push({ role: c.role === 'model' ? 'assistant' : 'user', content: textOf(c.parts) });
  }
  const text = fakeReply(messages, b.generationConfig?.responseMimeType === 'application/json', fault);
  return {
    status: 200,
    body: {
      candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
      modelVersion: 'fake',
    },
  };
}

interface EmbedRequest {
  content?: { parts?: Part[] };
  outputDimensionality?: number;
}

function embedAll(requests: EmbedRequest[], { fault, options }: RouteContext): Array<{ values: number[] }> {
  return requests.map((r) => {
    const dim = fault?.kind === 'wrong-dim' ? fault.dim : (r.outputDimensionality ?? options.dim ?? 768);
    return { values: Array.from(featureHashBatch([textOf(r.content?.parts)], dim)) };
  });
}

export async function startFakeGemini(options: FakeServerOptions = {}): Promise<FakeGeminiServer> {
  const model = (p: string, method: string) => new RegExp(`^/v1beta/models/[^/:]+:${method}$`).test(p);
  const server = new FakeGeminiServer(
    [
      {
        name: 'generateContent',
        match: (m, p) => m === 'POST' && model(p, 'generateContent'),
        handle: generateContent,
      },
      {
        name: 'streamGenerateContent',
        match: (m, p) => m === 'POST' && model(p, 'streamGenerateContent'),
        handle: streamGenerateContent,
      },
      {
        name: 'batchEmbedContents',
        match: (m, p) => m === 'POST' && model(p, 'batchEmbedContents'),
        handle: (ctx) => {
          const reqs = ((ctx.body ?? {}) as { requests?: EmbedRequest[] }).requests ?? [];
          return { status: 200, body: { embeddings: embedAll(reqs, ctx) } };
        },
      },
      {
        name: 'embedContent',
        match: (m, p) => m === 'POST' && model(p, 'embedContent'),
        handle: (ctx) => {
          const [embedding] = embedAll([(ctx.body ?? {}) as EmbedRequest], ctx);
          return { status: 200, body: { embedding } };
        },
      },
    ],
    (req, key) => req.headers['x-goog-api-key'] === key,
    errorBody,
    { dim: 768, ...options },
  );
  return server.start();
}
