/**
 * The streamed replies of the server (./ts/server/stream.ts) with a scripted engine whose
 * answer the test releases delta by delta: an event reaches the client before the next delta
 * exists, errors before the first delta are JSON replies, errors after it a last event, and
 * the request deadline aborts the engine's signal in mid-stream.
 */
import { request } from 'node:http';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../ts/errors.js';
import { createApp } from '../../ts/server/app.js';
import type { AnswerEvent, AnswerResult, SearchEngine } from '../../ts/server/engine.js';
import { serveApp } from '../../ts/server/serve.js';

const RESULT: AnswerResult = {
  response: 'Warsaw [1].',
  responseTokens: 4,
  retrievalInfo: 'ctx',
  retrievalTokens: 9,
  sources: [{ document: 'a.txt', chunks: ['c1'], items: [1], cited: [1] }],
  citations: [{ n: 1, id: 'u1', type: 'semantic_unit', document: 'a.txt', chunk: 'c1' }],
};

/** An engine whose stream yields one delta each time the test calls `release()`. */
function gatedEngine(script: Array<string | Error>) {
  let open: (() => void) | undefined;
  let gate = new Promise<void>((r) => {
    open = r;
  });
  const signals: AbortSignal[] = [];
  const engine: SearchEngine = {
    status: async () => ({ ready: true, generation: 1, nodes: 1, vectors: 1 }),
    retrieve: async () => ({ retrievalInfo: 'ctx', retrievalTokens: 9 }),
    answer: async () => RESULT,
    answerStream: async function* (_q, signal): AsyncGenerator<AnswerEvent> {
      signals.push(signal);
      for (const step of script) {
        await Promise.race([
          gate,
          new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
        ]);
        gate = new Promise<void>((r) => {
          open = r;
        });
        if (step instanceof Error) throw step;
        yield { type: 'delta', text: step };
      }
      yield { type: 'done', result: RESULT };
    },
  };
  return { engine, signals, release: () => open?.() };
}

/** Reads `data:` events one at a time from a streamed reply. */
function eventReader(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return async (): Promise<unknown> => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        return JSON.parse(block.replace(/^data: /, ''));
      }
      const { done, value } = await reader.read();
      if (done) return undefined;
      buffer += decoder.decode(value, { stream: true });
    }
  };
}

const ask = (app: ReturnType<typeof createApp>, body: object) =>
  app.request('/answer', {
    method: 'POST',
    body: JSON.stringify({ question: 'Where was she born?', stream: true, ...body }),
    headers: { 'content-type': 'application/json' },
  });

describe('POST /answer "stream": true with a streaming engine', () => {
  it('sends each delta before the next one exists, then the done event', async () => {
    const g = gatedEngine(['Warsaw', ' [1].']);
    const app = createApp({ engine: g.engine });
    const pending = ask(app, {});
    g.release();
    const res = await pending;
    expect(res.status).toBe(200);
    const next = eventReader(res);
    expect(await next()).toEqual({ type: 'delta', text: 'Warsaw' });
    // The second delta is released only now that the first one has been read.
    g.release();
    expect(await next()).toEqual({ type: 'delta', text: ' [1].' });
    g.release();
    expect(await next()).toEqual({
      type: 'done',
      answer: RESULT.response,
      sources: RESULT.sources,
      citations: RESULT.citations,
      responseTokens: 4,
      retrievalTokens: 9,
    });
    expect(await next()).toBeUndefined();
  });

  it('an error before the first delta is the JSON reply; after it, a last error event', async () => {
    const down = new ProviderError('model down', { provider: 'openai', status: 500, retryable: false });
    const early = gatedEngine([down]);
    const pendingEarly = ask(createApp({ engine: early.engine, logError: () => {} }), {});
    early.release();
    const res = await pendingEarly;
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('upstream_error');

    const late = gatedEngine(['Warsaw', down]);
    const pendingLate = ask(createApp({ engine: late.engine, logError: () => {} }), {});
    late.release();
    const next = eventReader(await pendingLate);
    expect(await next()).toEqual({ type: 'delta', text: 'Warsaw' });
    late.release();
    expect(await next()).toMatchObject({ type: 'error', error: { code: 'upstream_error' } });
    expect(await next()).toBeUndefined();
  });

  it('the request deadline aborts the engine in mid-stream and ends the stream with request_timeout', async () => {
    const g = gatedEngine(['Warsaw', ' [1].']);
    const app = createApp({ engine: g.engine, requestTimeoutMs: 300 });
    const pending = ask(app, {});
    g.release();
    const next = eventReader(await pending);
    expect(await next()).toEqual({ type: 'delta', text: 'Warsaw' });
    // Never released: the deadline ends it.
    expect(await next()).toMatchObject({ type: 'error', error: { code: 'request_timeout' } });
    expect(g.signals[0]!.aborted).toBe(true);
  });

  it('a client that disconnects aborts the engine signal (served over HTTP)', async () => {
    const g = gatedEngine(['Warsaw', ' [1].']);
    const served = await serveApp(createApp({ engine: g.engine }), { host: '127.0.0.1', port: 0 });
    try {
      // A node:http client destroyed after the first event (undici's fetch keeps the socket a
      // few seconds after an abort, which only slows the server's close).
      g.release();
      const first = await new Promise<string>((done) => {
        const req = request(
          `${served.url}/answer`,
          { method: 'POST', headers: { 'content-type': 'application/json' } },
          (res) => {
            res.once('data', (chunk: Buffer) => {
              req.destroy();
              done(chunk.toString('utf8'));
            });
          },
        );
        req.end(JSON.stringify({ question: 'q', stream: true }));
      });
      expect(first).toBe('data: {"type":"delta","text":"Warsaw"}\n\n');
      const end = Date.now() + 5000;
      while (!g.signals[0]!.aborted && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
      expect(g.signals[0]!.aborted).toBe(true);
      expect((g.signals[0]!.reason as { status?: number }).status).toBe(499);
    } finally {
      await served.close();
    }
  });

  it('/v1/chat/completions: an error after the start reaches the openai SDK as an APIError', async () => {
    const down = new ProviderError('model down', { provider: 'openai', status: 500, retryable: false });
    const g = gatedEngine(['Warsaw', down]);
    const served = await serveApp(createApp({ engine: g.engine, logError: () => {} }), {
      host: '127.0.0.1',
      port: 0,
    });
    try {
      const client = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'x', maxRetries: 0 });
      g.release();
      const stream = await client.chat.completions.create({
        model: 'noderag',
        messages: [{ role: 'user', content: 'q' }],
        stream: true,
      });
      let text = '';
      const failure = await (async () => {
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta.content ?? '';
          if (text === 'Warsaw') g.release();
        }
      })().catch((e: unknown) => e);
      expect(text).toBe('Warsaw');
      expect(failure).toBeInstanceOf(OpenAI.APIError);
      expect((failure as Error).message).toContain('model down');
    } finally {
      await served.close();
    }
  });
});
