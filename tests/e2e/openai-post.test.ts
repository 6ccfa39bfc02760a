/**
 * The OpenAI adapter posts non-streamed completions and embeddings itself (ts/llm/openai.ts
 * `#post`) with the URL and headers the SDK builds. Against a recording server on 127.0.0.1,
 * each reply or failure is compared with what the SDK's own `create` does for the same
 * request: the request as the server sees it (method, path, headers, body), and the result
 * (the parsed body) or the error the adapter maps (kind, status, retryable, message).
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { httpFetch } from '../../ts/llm/http-fetch.js';
import { OpenAIProvider } from '../../ts/llm/openai.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let base: string;
let seen: Seen[] = [];
/** How the server answers the next requests. */
let answer: (res: ServerResponse) => void = () => undefined;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  seen = [];
});

const adapter = (section: 'model_config' | 'embedding_config' = 'model_config') =>
  new OpenAIProvider({
    section,
    model: section === 'model_config' ? 'gpt-4o-mini' : 'text-embedding-3-small',
    apiKey: 'sk-test-key',
    baseUrl: base,
    dim: 4,
  });
/** The SDK as the adapter configures it (transport included), used through its own `create`. */
const sdk = () =>
  new OpenAI({ apiKey: 'sk-test-key', baseURL: base, maxRetries: 0, timeout: 960_000, fetch: httpFetch });

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

/** Headers that legitimately differ per connection or client library. */
function comparable(h: IncomingHttpHeaders): Record<string, unknown> {
  const { connection: _c, host: _h, 'content-length': _l, ...rest } = h;
  return rest;
}

const completion = {
  id: 'c1',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
};

describe('OpenAI adapter: its own POST is the SDK request', () => {
  it('a chat completion: same method, path, headers and body; the content of the reply', async () => {
    answer = json(200, completion);
    const messages = [{ role: 'user' as const, content: 'hi ✓' }];
    expect(
      await adapter().chat({
        task: 'answer',
        language: 'English',
        input: { context: '', question: 'q' },
        messages,
      }),
    ).toBe('hello');
    await sdk().chat.completions.create({ model: 'gpt-4o-mini', messages, temperature: 0 });
    expect(seen).toHaveLength(2);
    const [ours, theirs] = seen as [Seen, Seen];
    expect(ours.method).toBe(theirs.method);
    expect(ours.url).toBe(theirs.url);
    expect(comparable(ours.headers)).toEqual(comparable(theirs.headers));
    expect(JSON.parse(ours.body)).toEqual(JSON.parse(theirs.body));
  });

  it('embeddings: same request; the vectors of the reply', async () => {
    const vector = Buffer.from(new Float32Array([1, 2, 3, 4]).buffer).toString('base64');
    answer = json(200, { object: 'list', data: [{ index: 0, embedding: vector, object: 'embedding' }] });
    const batch = await adapter('embedding_config').embed(['a text']);
    expect([...batch.vectors]).toEqual([1, 2, 3, 4]);
    await sdk().embeddings.create({
      model: 'text-embedding-3-small',
      input: ['a text'],
      dimensions: 4,
      encoding_format: 'base64',
    });
    const [ours, theirs] = seen as [Seen, Seen];
    expect(ours.url).toBe(theirs.url);
    expect(comparable(ours.headers)).toEqual(comparable(theirs.headers));
    expect(JSON.parse(ours.body)).toEqual(JSON.parse(theirs.body));
  });

  it('HTTP errors are the SDK error of the status, with its message and Retry-After', async () => {
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const cases: [number, unknown, Record<string, string>][] = [
      [400, { error: { message: 'bad thing', type: 'invalid_request_error', param: 'x' } }, {}],
      [401, { error: { message: 'no key' } }, {}],
      [429, { error: { message: 'slow down' } }, { 'retry-after': '2' }],
      [500, 'not json at all', {}],
    ];
    for (const [status, body, headers] of cases) {
      answer =
        typeof body === 'string'
          ? (res) => {
              res.writeHead(status, { 'content-type': 'text/plain' });
              res.end(body);
            }
          : json(status, body, headers);
      const ours = await adapter()
        .chat({ task: 'answer', language: 'English', input: { context: '', question: 'q' }, messages })
        .then(
          () => null,
          (e: unknown) => e,
        );
      const theirs = await sdk()
        .chat.completions.create({ model: 'gpt-4o-mini', messages, temperature: 0 })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(theirs).toBeInstanceOf(OpenAI.APIError);
      const t = theirs as InstanceType<typeof OpenAI.APIError>;
      const o = ours as { status?: number; retryable?: boolean; message: string; cause?: unknown };
      expect(o.status).toBe(status);
      // The adapter maps the SDK error it got: the same class, status and message.
      expect(o.cause).toBeInstanceOf(t.constructor);
      const cause = o.cause as InstanceType<typeof OpenAI.APIError>;
      expect(cause.message).toBe(t.message);
      expect(cause.status).toBe(t.status);
      expect(cause.error).toEqual(t.error);
      expect(cause.headers?.get('retry-after') ?? null).toBe(t.headers?.get('retry-after') ?? null);
    }
  });

  it('a refused connection is a network error; an abort rejects with its reason', async () => {
    const closed = new OpenAIProvider({
      section: 'model_config',
      model: 'm',
      apiKey: 'k',
      baseUrl: 'http://127.0.0.1:1/v1',
    });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const e = (await closed
      .chat({ task: 'answer', language: 'English', input: { context: '', question: 'q' }, messages })
      .catch((x) => x)) as {
      retryable?: boolean;
      cause?: unknown;
    };
    expect(e.retryable).toBe(true);
    expect(e.cause).toBeInstanceOf(OpenAI.APIConnectionError);
    answer = () => undefined; // never answers
    const ctl = new AbortController();
    const pending = adapter().chat(
      { task: 'answer', language: 'English', input: { context: '', question: 'q' }, messages },
      { signal: ctl.signal },
    );
    setTimeout(() => ctl.abort(new Error('stop now')), 50);
    await expect(pending).rejects.toThrow('stop now');
  });
});
