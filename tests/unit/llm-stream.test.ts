/**
 * Streamed chat replies (Provider.chatStream, issue 16 item 2): the local provider in pieces,
 * the OpenAI and Gemini adapters through their SDKs against the fake servers' server-sent
 * events, and CachedProvider's policy around them: retries only before the first delta, an
 * error after it ends the stream, complete replies cached, aborts reaching the provider.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError } from '../../ts/errors.js';
import { CachedProvider } from '../../ts/llm/cached-provider.js';
import { GeminiProvider } from '../../ts/llm/gemini.js';
import { LocalProvider } from '../../ts/llm/local/provider.js';
import { OpenAIProvider } from '../../ts/llm/openai.js';
import { buildRequest } from '../../ts/llm/prompts/index.js';
import { ResponseCache } from '../../ts/llm/response-cache.js';
import type { RetryPolicy } from '../../ts/llm/retry.js';
import type { Provider } from '../../ts/llm/types.js';
import {
  type FakeGeminiServer,
  type FakeOpenAIServer,
  startFakeGemini,
  startFakeOpenAI,
} from '../helpers/fake-providers/index.js';

/** The fake server's next reply on `route`: this server-sent event body, as written. */
function streamReply(server: FakeOpenAIServer | FakeGeminiServer, route: string, body: string): void {
  server.inject({ route, fault: { kind: 'raw', contentType: 'text/event-stream', body } });
}

const REQUEST = buildRequest({
  task: 'answer',
  language: 'English',
  input: { context: '[1] The observatory stands on the hill.', question: 'Who founded the observatory?' },
});

const FAST_RETRY: RetryPolicy = {
  maxAttempts: 3,
  baseDelayMs: 1,
  maxDelayMs: 5,
  jitter: 0,
  maxRetryAfterMs: 5,
};

function cached(adapter: Provider, cache?: ResponseCache): CachedProvider {
  return new CachedProvider({
    adapter,
    section: 'model_config',
    retry: FAST_RETRY,
    ...(cache ? { cache } : {}),
    timeouts: { chatMs: 5000, embedMs: 5000 },
    tokenCounter: { countTokens: (s) => s.length },
  });
}

async function collect(stream: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const d of stream) out.push(d);
  return out;
}

async function until(check: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const expected = (await new LocalProvider({ dim: 8 }).chat(REQUEST)).trim();

describe('local provider', () => {
  it('streams its reply in word pieces, one turn of the event loop apart', async () => {
    const local = new LocalProvider({ dim: 8 });
    let turns = 0;
    const tick = setInterval(() => {}, 1000);
    const count = () => {
      turns++;
      if (turns < 1000) setImmediate(count);
    };
    setImmediate(count);
    const seen: number[] = [];
    const deltas: string[] = [];
    for await (const d of local.chatStream(REQUEST)) {
      deltas.push(d);
      seen.push(turns);
    }
    clearInterval(tick);
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.join('')).toBe(expected);
    // Other work ran between the pieces: the first piece came before the last existed.
    expect(seen[seen.length - 1]!).toBeGreaterThan(seen[0]!);
    const ctl = new AbortController();
    const it = local.chatStream(REQUEST, { signal: ctl.signal })[Symbol.asyncIterator]();
    await it.next();
    ctl.abort(new Error('gone'));
    await expect(it.next()).rejects.toThrow('gone');
  });
});

describe('OpenAI adapter (openai SDK, stream: true)', () => {
  let server: FakeOpenAIServer;
  let dir: string;
  const adapter = () =>
    new OpenAIProvider({
      section: 'model_config',
      model: 'gpt-4o-mini',
      apiKey: 'k',
      baseUrl: server.baseUrl,
    });
  beforeAll(async () => {
    server = await startFakeOpenAI({ streamDelayMs: 15 });
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.reset();
    server.streamsAbandoned = 0;
    dir = mkdtempSync(join(tmpdir(), 'noderag-stream-cache-'));
    return () => rmSync(dir, { recursive: true, force: true });
  });

  it('yields the deltas as they arrive; their concatenation is the reply', async () => {
    const p = cached(adapter());
    const started = performance.now();
    const times: number[] = [];
    const deltas: string[] = [];
    for await (const d of p.chatStream(REQUEST)) {
      deltas.push(d);
      times.push(performance.now() - started);
    }
    expect(deltas.join('')).toBe(expected);
    expect(deltas.length).toBeGreaterThan(5);
    expect((server.requests[0]!.body as { stream?: boolean }).stream).toBe(true);
    // The events are 15 ms apart: the first delta came well before the last.
    expect(times[times.length - 1]! - times[0]!).toBeGreaterThan(50);
    expect(p.stats()).toMatchObject({ calls: 1, requests: 1, retries: 0 });
  });

  it('retries a failure before the first delta', async () => {
    server.inject({ route: 'chat', fault: { kind: 'status', status: 503 } });
    const p = cached(adapter());
    expect((await collect(p.chatStream(REQUEST))).join('')).toBe(expected);
    expect(p.stats()).toMatchObject({ calls: 1, requests: 2, retries: 1 });
  });

  it('a failure after the first delta ends the stream with an error, without a retry', async () => {
    server.inject({ route: 'chat', fault: { kind: 'stream-cut', afterEvents: 3 } });
    const p = cached(adapter());
    const deltas: string[] = [];
    const failure = await (async () => {
      for await (const d of p.chatStream(REQUEST)) deltas.push(d);
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ProviderError);
    expect(deltas.length).toBeGreaterThan(0);
    expect(server.count('chat')).toBe(1);
  });

  it('an empty streamed reply is invalid and retried', async () => {
    server.inject({ route: 'chat', fault: { kind: 'invalid-reply' }, times: 3 });
    const p = cached(adapter());
    await expect(collect(p.chatStream(REQUEST))).rejects.toThrow(/non-empty text reply.*gave up after 3/);
    expect(server.count('chat')).toBe(3);
  });

  it('a reply cut at max_tokens is an error, never cached; a stream without a finish reason is whole', async () => {
    const cache = ResponseCache.open(dir);
    const p = cached(adapter(), cache);
    const sse = (...events: object[]) =>
      `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')}data: [DONE]\n\n`;
    const piece = (content: string, finish: string | null = null) => ({
      id: 'c',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta: { content }, finish_reason: finish }],
    });
    // Cut at the token limit: the provider's own word for it; asking again gets the same cut.
    streamReply(server, 'chat', sse(piece('The observatory was'), piece(' founded', 'length')));
    await expect(collect(p.chatStream(REQUEST))).rejects.toThrow(
      /reply of openai \(model_config, model gpt-4o-mini\) was cut at the token limit \(finish_reason length\); raise model_config.max_tokens/,
    );
    expect(server.count('chat')).toBe(1);
    // Not streamed: the same cut.
    server.inject({
      route: 'chat',
      fault: {
        kind: 'raw',
        body: JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          created: 0,
          model: 'gpt-4o-mini',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: 'The observatory was' },
              finish_reason: 'length',
            },
          ],
        }),
      },
    });
    await expect(p.chat(REQUEST)).rejects.toThrow(/cut at the token limit/);
    expect(server.count('chat')).toBe(2);
    expect(cache.replyCount).toBe(0);
    cache.close();
    // A stream without a finish reason is taken as whole (some OpenAI-compatible servers
    // never send one).
    streamReply(server, 'chat', sse(piece('The observatory was')));
    expect((await collect(cached(adapter()).chatStream(REQUEST))).join('')).toBe('The observatory was');
  });

  it('a reply the server aborted (vLLM finish_reason abort) is retried and never cached', async () => {
    const cache = ResponseCache.open(dir);
    const p = cached(adapter(), cache);
    const aborted = JSON.stringify({
      id: 'c',
      object: 'chat.completion',
      created: 0,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'The obs' }, finish_reason: 'abort' }],
    });
    // Once: the next attempt gets the whole reply, and only that one is kept.
    server.inject({ route: 'chat', fault: { kind: 'raw', body: aborted } });
    const whole = await p.chat(REQUEST);
    expect(whole).not.toBe('The obs');
    expect(server.count('chat')).toBe(2);
    expect(cache.replyCount).toBe(1);
    // Every attempt aborted: the error says so.
    server.inject({ route: 'chat', fault: { kind: 'raw', body: aborted }, times: 3 });
    await expect(
      p.chat({ ...REQUEST, messages: [{ role: 'user', content: 'another question' }] }),
    ).rejects.toThrow(
      /reply of openai \(model_config, model gpt-4o-mini\) was aborted by the server before it was complete \(finish_reason abort\).*gave up after 3/,
    );
    expect(cache.replyCount).toBe(1);
    cache.close();
    // Streamed, before its first delta: asked again.
    const chunk = {
      id: 'c',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta: {}, finish_reason: 'abort' }],
    };
    streamReply(server, 'chat', `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`);
    const before = server.count('chat');
    expect((await collect(cached(adapter()).chatStream(REQUEST))).join('').length).toBeGreaterThan(0);
    expect(server.count('chat')).toBe(before + 2);
  });

  it('a 200 holding an error object or an HTML page is described as what it is', async () => {
    const p = cached(adapter());
    server.inject({
      route: 'chat',
      times: 3,
      fault: {
        kind: 'raw',
        body: JSON.stringify({ error: { message: 'model "gpt-4o-mini" not found, try pulling it first' } }),
      },
    });
    await expect(p.chat(REQUEST)).rejects.toThrow(
      /an error instead of a chat completion: model "gpt-4o-mini" not found, try pulling it first/,
    );
    server.inject({
      route: 'chat',
      times: 3,
      fault: { kind: 'raw', contentType: 'text/html', body: '<html>Login required</html>' },
    });
    await expect(p.chat(REQUEST)).rejects.toThrow(
      /the body is HTML or XML, not JSON \("<html>Login required<\/html>"\)/,
    );
  });

  it('a complete stream is cached; a cached reply streams without a request', async () => {
    const cache = ResponseCache.open(dir);
    const p = cached(adapter(), cache);
    expect((await collect(p.chatStream(REQUEST))).join('')).toBe(expected);
    expect(cache.replyCount).toBe(1);
    expect(await p.chat(REQUEST)).toBe(expected);
    expect(await collect(p.chatStream(REQUEST))).toEqual([expected]);
    expect(server.count('chat')).toBe(1);
    expect(p.stats().cacheHits).toBe(2);
    // A stream left early is not cached.
    cache.close();
    const other = ResponseCache.open(join(dir, 'other'));
    const q = cached(adapter(), other);
    for await (const _ of q.chatStream(REQUEST)) break;
    expect(other.replyCount).toBe(0);
    other.close();
  });

  it('an abort or an early exit closes the connection to the provider', async () => {
    const p = cached(adapter());
    const ctl = new AbortController();
    const failure = await (async () => {
      for await (const _ of p.chatStream(REQUEST, { signal: ctl.signal }))
        ctl.abort(new Error('client left'));
    })().catch((e: unknown) => e);
    expect((failure as Error).message).toBe('client left');
    await until(() => server.streamsAbandoned === 1);
    for await (const _ of p.chatStream(REQUEST)) break;
    await until(() => server.streamsAbandoned === 2);
  });
});

describe('Gemini adapter (@google/genai generateContentStream)', () => {
  let server: FakeGeminiServer;
  const adapter = () =>
    new GeminiProvider({
      section: 'model_config',
      model: 'gemini-2.5-flash',
      apiKey: 'k',
      baseUrl: server.baseUrl,
    });
  beforeAll(async () => {
    server = await startFakeGemini({ streamDelayMs: 15 });
  });
  afterAll(async () => {
    await server.close();
  });

  it('yields the chunks of streamGenerateContent; an early exit closes the connection', async () => {
    const p = cached(adapter());
    const deltas = await collect(p.chatStream(REQUEST));
    expect(deltas.join('')).toBe(expected);
    expect(deltas.length).toBeGreaterThan(5);
    expect(server.count('streamGenerateContent')).toBe(1);
    expect(server.requests[0]!.url).toContain('alt=sse');
    for await (const _ of p.chatStream(REQUEST)) break;
    await until(() => server.streamsAbandoned === 1);
  });

  it('a reply stopped by MAX_TOKENS or SAFETY, or a stream without a finish reason, is an error', async () => {
    const chunk = (text: string, finishReason?: string) => ({
      candidates: [
        { content: { role: 'model', parts: [{ text }] }, ...(finishReason ? { finishReason } : {}) },
      ],
    });
    const sse = (...chunks: object[]) => chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join('');
    const p = cached(adapter());
    streamReply(server, 'streamGenerateContent', sse(chunk('The observatory'), chunk(' was', 'MAX_TOKENS')));
    await expect(collect(p.chatStream(REQUEST))).rejects.toThrow(
      /cut at the token limit \(finishReason MAX_TOKENS\)/,
    );
    streamReply(server, 'streamGenerateContent', sse(chunk('The observatory'), chunk(' was', 'SAFETY')));
    await expect(collect(p.chatStream(REQUEST))).rejects.toThrow(
      /stopped by the provider \(finishReason SAFETY\)/,
    );
    streamReply(server, 'streamGenerateContent', sse(chunk('The observatory')));
    await expect(collect(p.chatStream(REQUEST))).rejects.toThrow(/ended before the reply was complete/);
    // A blocked prompt: one request, not retried.
    const before = server.count('streamGenerateContent');
    streamReply(server, 'streamGenerateContent', sse({ promptFeedback: { blockReason: 'SAFETY' } }));
    await expect(collect(p.chatStream(REQUEST))).rejects.toThrow(
      /stopped by the provider \(blockReason SAFETY\)/,
    );
    expect(server.count('streamGenerateContent') - before).toBe(1);
  });

  it('a blocked prompt or a reply cut at MAX_TOKENS (not streamed) fails at once, naming why', async () => {
    const p = cached(adapter());
    const before = server.count('generateContent');
    server.inject({
      route: 'generateContent',
      fault: { kind: 'raw', body: JSON.stringify({ promptFeedback: { blockReason: 'SAFETY' } }) },
    });
    await expect(p.chat(REQUEST)).rejects.toThrow(/stopped by the provider \(blockReason SAFETY\)/);
    server.inject({
      route: 'generateContent',
      fault: {
        kind: 'raw',
        body: JSON.stringify({
          candidates: [
            {
              content: { role: 'model', parts: [{ text: 'The observatory was founded' }] },
              finishReason: 'MAX_TOKENS',
            },
          ],
        }),
      },
    });
    await expect(p.chat(REQUEST)).rejects.toThrow(
      /cut at the token limit \(finishReason MAX_TOKENS\); raise model_config.max_tokens/,
    );
    expect(server.count('generateContent') - before).toBe(2);
  });

  it('retries a failure before the first delta', async () => {
    server.inject({ route: 'streamGenerateContent', fault: { kind: 'status', status: 429 } });
    const p = cached(adapter());
    expect((await collect(p.chatStream(REQUEST))).join('')).toBe(expected);
    expect(p.stats()).toMatchObject({ requests: 2, retries: 1 });
  });
});
