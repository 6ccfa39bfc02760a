import { describe, expect, it } from 'vitest';
import { IndexNotBuiltError, ProviderError } from '../../ts/errors.js';
import { RESULT_JSON } from '../../ts/search/engine-types.js';
import { createApp, MAX_BODY_BYTES } from '../../ts/server/app.js';
import { sameKey } from '../../ts/server/auth.js';
import type { SearchEngine } from '../../ts/server/engine.js';

const SOURCES = [{ document: 'a.md', chunks: ['c1'], items: [1, 2], cited: [2] }];
const CITATIONS = [{ n: 2, id: 'u1', type: 'semantic_unit' as const, document: 'a.md', chunk: 'c1' }];

function fakeEngine(overrides: Partial<SearchEngine> = {}): SearchEngine {
  return {
    status: async () => ({ ready: true, generation: 1, nodes: 10, vectors: 4 }),
    retrieve: async (q) => ({
      retrievalInfo: `ctx:${q}`,
      retrievalTokens: 2,
      sources: [{ ...SOURCES[0]!, cited: [] }],
    }),
    answer: async (q) => ({
      response: `ans:${q} [2]`,
      responseTokens: 2,
      retrievalInfo: `ctx:${q}`,
      retrievalTokens: 2,
      sources: SOURCES,
      citations: CITATIONS,
    }),
    ...overrides,
  };
}

const post = async (
  app: ReturnType<typeof createApp>,
  path: string,
  body: string,
  type = 'application/json',
): Promise<Response> => app.request(path, { method: 'POST', body, headers: { 'content-type': type } });

async function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
}

describe('HTTP app (docs/method.md §7.2)', () => {
  const app = createApp({ engine: fakeEngine() });

  it('answers the three question routes and /health', async () => {
    const q = JSON.stringify({ question: 'who?' });
    expect(await (await post(app, '/answer', q)).json()).toEqual({
      answer: 'ans:who? [2]',
      sources: SOURCES,
      citations: CITATIONS,
    });
    expect(await (await post(app, '/retrieval', q)).json()).toEqual({
      retrieval: 'ctx:who?',
      sources: [{ ...SOURCES[0], cited: [] }],
    });
    expect(await (await post(app, '/answer_retrieval', q)).json()).toEqual({
      answer: 'ans:who? [2]',
      retrieval: 'ctx:who?',
      sources: SOURCES,
      citations: CITATIONS,
    });
    expect(await (await app.request('/health')).json()).toEqual({
      status: 'ok',
      index: 'ready',
      generation: 1,
      nodes: 10,
      vectors: 4,
    });
  });

  it('/retrieval sends the JSON the engine serialised (RESULT_JSON) exactly as c.json would', async () => {
    const sources = [{ document: 'a "b".md', chunks: ['c1'], items: [1], cited: [] }];
    const withJson = createApp({
      engine: fakeEngine({
        retrieve: async (q) => ({
          retrievalInfo: `ctx "${q}"\n`,
          retrievalTokens: 2,
          sources,
          [RESULT_JSON]: {
            retrievalInfo: [
              Buffer.from(JSON.stringify(`ctx "${q}"\n`).slice(0, 3)),
              Buffer.from(JSON.stringify(`ctx "${q}"\n`).slice(3)),
            ],
            sources: Buffer.from(JSON.stringify(sources)),
          },
        }),
      }),
    });
    const res = await post(withJson, '/retrieval', JSON.stringify({ question: 'é?' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.text()).toBe(JSON.stringify({ retrieval: 'ctx "é?"\n', sources }));
  });

  it('accepts +json content types with parameters', async () => {
    const res = await post(app, '/answer', '{"question":"x"}', 'application/vnd.api+json; charset=utf-8');
    expect(res.status).toBe(200);
  });

  it('rejects bad requests with the documented status and code', async () => {
    await expectError(
      await post(app, '/answer', '{"question":"x"}', 'text/plain'),
      415,
      'unsupported_media_type',
    );
    await expectError(await post(app, '/answer', '{"question":', 'application/json'), 400, 'invalid_json');
    await expectError(await post(app, '/answer', '[1,2]'), 400, 'invalid_body');
    await expectError(await post(app, '/answer', '"q"'), 400, 'invalid_body');
    await expectError(await post(app, '/answer', '{}'), 400, 'missing_question');
    await expectError(await post(app, '/answer', '{"question":42}'), 400, 'invalid_question');
    await expectError(await post(app, '/answer', '{"question":"  \\n "}'), 400, 'empty_question');
    await expectError(
      await post(app, '/answer', JSON.stringify({ question: 'x'.repeat(8001) })),
      400,
      'question_too_long',
    );
    // The limit counts characters (code points): 8,000 emoji fit, 8,001 do not.
    expect((await post(app, '/answer', JSON.stringify({ question: '😀'.repeat(8000) }))).status).toBe(200);
    const emoji = await post(app, '/answer', JSON.stringify({ question: '😀'.repeat(8001) }));
    expect(emoji.status).toBe(400);
    expect(((await emoji.json()) as { error: { message: string } }).error.message).toContain(
      'has 8001 characters',
    );
    // A byte-order mark before the JSON is ignored.
    expect((await post(app, '/answer', '\uFEFF{"question":"x"}')).status).toBe(200);
    await expectError(
      await post(app, '/answer', JSON.stringify({ question: 'x', pad: 'y'.repeat(MAX_BODY_BYTES) })),
      413,
      'payload_too_large',
    );
  });

  it('404 for unknown routes, 405 with Allow for wrong methods', async () => {
    await expectError(await app.request('/nope'), 404, 'not_found');
    const res = await app.request('/answer');
    expect(res.headers.get('allow')).toBe('POST');
    await expectError(res, 405, 'method_not_allowed');
  });

  it('maps engine errors: 503 not built, 502 provider, 504 provider timeout, 500 internal', async () => {
    const logged: unknown[] = [];
    const failing = (e: Error) =>
      createApp({
        engine: fakeEngine({
          answer: async () => {
            throw e;
          },
        }),
        logError: (x) => logged.push(x),
      });
    const q = '{"question":"x"}';
    await expectError(
      await post(failing(new IndexNotBuiltError('not built')), '/answer', q),
      503,
      'index_not_built',
    );
    await expectError(
      await post(
        failing(
          new ProviderError('openai returned 500', { provider: 'openai', status: 500, retryable: true }),
        ),
        '/answer',
        q,
      ),
      502,
      'upstream_error',
    );
    await expectError(
      await post(
        failing(
          new ProviderError('timed out', { provider: 'openai', retryable: true, code: 'upstream_timeout' }),
        ),
        '/answer',
        q,
      ),
      504,
      'upstream_timeout',
    );
    const res = await post(failing(new Error('secret details')), '/answer', q);
    const body = (await res.json()) as { error: { message: string } };
    expect(res.status).toBe(500);
    expect(body.error.message).not.toContain('secret');
    expect(logged).toHaveLength(1);
  });

  it('gives up after the per-request timeout with 504 and aborts the engine call', async () => {
    let aborted = false;
    const slow = createApp({
      requestTimeoutMs: 50,
      engine: fakeEngine({
        retrieve: (_q, signal) =>
          new Promise((resolve) => {
            signal.addEventListener('abort', () => {
              aborted = true;
            });
            setTimeout(() => resolve({ retrievalInfo: '', retrievalTokens: 0 }), 1000);
          }),
      }),
    });
    await expectError(await post(slow, '/retrieval', '{"question":"x"}'), 504, 'request_timeout');
    expect(aborted).toBe(true);
  });

  it('serves many concurrent requests', async () => {
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        post(app, '/answer', JSON.stringify({ question: `q${i}` })).then((r) => r.json()),
      ),
    );
    results.forEach((r, i) => {
      expect(r).toEqual({ answer: `ans:q${i} [2]`, sources: SOURCES, citations: CITATIONS });
    });
  });
});

describe('"stream": true on /answer (issue 16 item 2)', () => {
  it('escapes U+2028 and U+2029 in its events, which clients may take for line ends', async () => {
    const app = createApp({ engine: fakeEngine() });
    const question = 'line\u2028separator\u2029paragraph';
    const res = await post(app, '/answer', JSON.stringify({ question, stream: true }));
    const text = await res.text();
    expect(text).not.toMatch(/[\u2028\u2029]/);
    expect(text).toContain('\\u2028');
    const done = JSON.parse(text.trim().split('\n\n').at(-1)!.slice(6)) as { answer: string };
    expect(done.answer).toBe(`ans:${question} [2]`);
  });

  it('sends server-sent events: the answer in pieces, then one done event', async () => {
    const app = createApp({ engine: fakeEngine() });
    const res = await post(app, '/answer', JSON.stringify({ question: 'who is there?', stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await res.text();
    expect(text.endsWith('\n\n')).toBe(true);
    const events = text
      .trim()
      .split('\n\n')
      .map((block) => {
        expect(block.startsWith('data: ')).toBe(true);
        return JSON.parse(block.slice(6)) as { type: string; text?: string };
      });
    const deltas = events.filter((e) => e.type === 'delta');
    expect(deltas.length).toBe(4);
    expect(deltas.map((d) => d.text).join('')).toBe('ans:who is there? [2]');
    expect(events[events.length - 1]).toEqual({
      type: 'done',
      answer: 'ans:who is there? [2]',
      sources: SOURCES,
      citations: CITATIONS,
      responseTokens: 2,
      retrievalTokens: 2,
    });
    // Errors before the answer keep their status and JSON body.
    await expectError(await post(app, '/answer', '{"question":"x","stream":"yes"}'), 400, 'invalid_stream');
    await expectError(await post(app, '/answer', '{"question":"","stream":true}'), 400, 'empty_question');
    // The routes that reply in one piece refuse "stream": true and a bad "stream", naming themselves.
    for (const route of ['/retrieval', '/answer_retrieval']) {
      for (const stream of ['true', '"yes"']) {
        const res = await post(app, route, `{"question":"x","stream":${stream}}`);
        expect(res.status, `${route} ${stream}`).toBe(400);
        const err = ((await res.json()) as { error: { code: string; message: string } }).error;
        expect(err.code).toBe('invalid_stream');
        if (stream === 'true') expect(err.message).toContain(`${route} replies in one piece`);
      }
      expect((await post(app, route, '{"question":"x","stream":false}')).status).toBe(200);
    }
    const failing = createApp({
      engine: fakeEngine({
        answer: async () => {
          throw new ProviderError('model down', { provider: 'openai', status: 500, retryable: false });
        },
      }),
      logError: () => {},
    });
    await expectError(
      await post(failing, '/answer', '{"question":"x","stream":true}'),
      502,
      'upstream_error',
    );
    // "stream": false is the plain JSON reply.
    const plain = await post(app, '/answer', '{"question":"x","stream":false}');
    expect(((await plain.json()) as { answer: string }).answer).toBe('ans:x [2]');
  });
});

describe('API key and CORS (issue 16 item 4)', () => {
  const KEY = 'k3y-0123456789abcdef';
  const app = createApp({ engine: fakeEngine(), apiKey: KEY, cors: 'https://app.example.com' });
  const ask = (headers: Record<string, string>, path = '/answer') =>
    app.request(path, {
      method: 'POST',
      body: '{"question":"who?"}',
      headers: { 'content-type': 'application/json', ...headers },
    });

  it('every route but /health needs "Authorization: Bearer KEY"; 401 JSON otherwise', async () => {
    expect((await app.request('/health')).status).toBe(200);
    const missing = await ask({});
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    await expectError(missing, 401, 'unauthorized');
    await expectError(await ask({ authorization: `Bearer ${KEY}x` }), 401, 'unauthorized');
    await expectError(await ask({ authorization: `Bearer ${KEY.slice(0, -1)}` }), 401, 'unauthorized');
    await expectError(await ask({ authorization: KEY }), 401, 'unauthorized');
    await expectError(await ask({ authorization: `Basic ${KEY}` }), 401, 'unauthorized');
    await expectError(await ask({}, '/retrieval'), 401, 'unauthorized');
    // Unknown routes do not tell whether they exist.
    await expectError(await app.request('/nope'), 401, 'unauthorized');
    const ok = await ask({ authorization: `Bearer ${KEY}` });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { answer: string }).answer).toBe('ans:who? [2]');
    expect((await ask({ authorization: `bearer ${KEY}` }, '/retrieval')).status).toBe(200);
    // The key is never echoed.
    const wrong = await ask({ authorization: `Bearer ${KEY}x` });
    expect(await wrong.text()).not.toContain(KEY);
  });

  it('sameKey: only the key itself, whatever the length or the characters of what is sent', () => {
    const key = Buffer.from(KEY);
    expect(sameKey(KEY, key)).toBe(true);
    for (const given of [
      '',
      KEY.slice(0, -1),
      `${KEY}x`,
      `${KEY.slice(0, -1)}g`, // same length, last byte differs
      `x${KEY.slice(1)}`, // same length, first byte differs
      'é'.repeat(KEY.length / 2), // same byte length, other bytes
      KEY.toUpperCase(),
    ]) {
      expect(sameKey(given, key), given).toBe(false);
    }
  });

  it('CORS: only the allowed origin gets headers; its preflight is answered without a key', async () => {
    const pre = await app.request('/answer', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(pre.headers.get('access-control-allow-headers')).toBe('authorization, content-type');
    // The openai SDK in a browser asks for headers of its own: allowed, or the browser blocks it.
    const sdk =
      'authorization,content-type,x-stainless-os,x-stainless-lang,x-stainless-retry-count,x-request-id';
    const sdkPre = await app.request('/v1/chat/completions', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': sdk,
      },
    });
    expect(sdkPre.status).toBe(204);
    expect(sdkPre.headers.get('access-control-allow-headers')).toBe(sdk);
    expect(sdkPre.headers.get('vary')).toContain('Access-Control-Request-Headers');
    const ok = await ask({ origin: 'https://app.example.com', authorization: `Bearer ${KEY}` });
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(ok.headers.get('access-control-expose-headers')).toBe('X-Request-Id, X-Noderag-Project');
    const denied = await ask({ origin: 'https://app.example.com' });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    const other = await ask({ origin: 'https://evil.example.com', authorization: `Bearer ${KEY}` });
    expect(other.status).toBe(200);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    // Off by default.
    const plain = createApp({ engine: fakeEngine() });
    const res = await plain.request('/health', { headers: { origin: 'https://app.example.com' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect((await post(plain, '/answer', '{"question":"x"}')).status).toBe(200);
  });
});

describe('observability (issue 16 item 5)', () => {
  it('X-Request-Id on every reply: the client id when sane, else a new UUID', async () => {
    const app = createApp({ engine: fakeEngine() });
    const given = await app.request('/health', { headers: { 'x-request-id': 'req-42.a:b' } });
    expect(given.headers.get('x-request-id')).toBe('req-42.a:b');
    const fresh = await app.request('/health', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const error = await post(app, '/answer', '{}');
    expect(error.status).toBe(400);
    expect(error.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('one JSON access-log line per request, with route pattern, status, ms and token counts', async () => {
    const lines: Record<string, unknown>[] = [];
    const KEY = 'log-key-0123456789abcdef';
    const app = createApp({
      engine: fakeEngine(),
      apiKey: KEY,
      accessLog: (line) => lines.push({ ...line }),
    });
    await app.request('/answer', {
      method: 'POST',
      body: '{"question":"who?"}',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'x-request-id': 'r1' },
    });
    await app.request('/answer', {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    await app.request('/nowhere/123', { headers: { authorization: `Bearer ${KEY}` } });
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({
      id: 'r1',
      method: 'POST',
      route: '/answer',
      path: '/answer',
      status: 200,
      retrieval_tokens: 2,
      answer_tokens: 2,
    });
    expect(typeof lines[0]!.ms).toBe('number');
    expect(lines[1]).toMatchObject({ route: '/answer', status: 401 });
    expect(lines[1]).not.toHaveProperty('answer_tokens');
    expect(lines[2]).toMatchObject({ route: 'unmatched', path: '/nowhere/123', status: 404 });
    expect(JSON.stringify(lines)).not.toContain(KEY);
  });

  it('a streamed answer is logged when it ends: its whole time, its tokens, or the error that ended it', async () => {
    const lines: Record<string, unknown>[] = [];
    const failing = fakeEngine({
      answerStream: async function* () {
        yield { type: 'delta' as const, text: 'partial' };
        throw new ProviderError('the model went away', { provider: 'openai', retryable: false });
      },
    });
    for (const [engine, question] of [
      [fakeEngine(), 'who?'],
      [failing, 'why?'],
    ] as const) {
      const app = createApp({ engine, accessLog: (line) => lines.push({ ...line }) });
      const before = lines.length;
      const res = await post(app, '/answer', JSON.stringify({ question, stream: true }));
      expect(res.status).toBe(200);
      expect(lines.length).toBe(before); // not at the reply's start
      await res.text();
      await new Promise((r) => setImmediate(r));
      expect(lines.length).toBe(before + 1);
    }
    expect(lines[0]).toMatchObject({
      route: '/answer',
      status: 200,
      stream: true,
      retrieval_tokens: 2,
      answer_tokens: 2,
    });
    expect(lines[0]).not.toHaveProperty('error');
    expect(lines[1]).toMatchObject({ route: '/answer', status: 200, stream: true, error: 'upstream_error' });
  });

  it('GET /metrics: request counts and latency by route and status, index generation', async () => {
    const app = createApp({ engine: fakeEngine(), metrics: true });
    for (let i = 0; i < 3; i++) await post(app, '/answer', '{"question":"q"}');
    await post(app, '/answer', '{}');
    await app.request('/v1/models');
    await app.request('/nowhere');
    await app.request('/answer'); // GET on a POST route
    const res = await app.request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('noderag_http_requests_total{route="/answer",method="POST",status="200"} 3');
    expect(text).toContain('noderag_http_requests_total{route="/answer",method="POST",status="400"} 1');
    expect(text).toContain('noderag_http_requests_total{route="/v1/models",method="GET",status="200"} 1');
    // Unknown routes and wrong methods are counted with the status they got.
    expect(text).toContain('noderag_http_requests_total{route="unmatched",method="GET",status="404"} 1');
    expect(text).toContain('noderag_http_requests_total{route="unmatched",method="GET",status="405"} 1');
    expect(text).not.toContain('route="unmatched",method="GET",status="200"');
    expect(text).toMatch(
      /noderag_http_request_duration_seconds_count\{route="\/answer",method="POST",status="200"\} 3/,
    );
    expect(text).toContain('noderag_index_generation 1');
    expect(text).toContain('noderag_index_nodes 10');
    // Off unless asked for; behind the key when one is set.
    expect((await createApp({ engine: fakeEngine() }).request('/metrics')).status).toBe(404);
    const keyed = createApp({ engine: fakeEngine(), metrics: true, apiKey: 'metrics-key-0123456789' });
    expect((await keyed.request('/metrics')).status).toBe(401);
  });
});

describe('loopbackHostOnly (no API key on a loopback address)', () => {
  it('answers loopback Host names only; another name gets 403 wrong_host', async () => {
    const app = createApp({ engine: fakeEngine(), loopbackHostOnly: true });
    const get = (host: string) => app.request('http://x/health', { headers: { host } });
    for (const host of ['127.0.0.1:5811', '127.1.2.3', 'localhost', 'LocalHost:80', '[::1]:5811']) {
      expect((await get(host)).status, host).toBe(200);
    }
    for (const host of ['attacker.example:5811', 'localhost.attacker.example', '127.0.0.1.nip.io', '']) {
      const r = await get(host);
      expect(r.status, host).toBe(403);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('wrong_host');
    }
    // Without the option (a key is set, or the server listens beyond loopback): no check.
    expect(
      (
        await createApp({ engine: fakeEngine() }).request('http://x/health', {
          headers: { host: 'a.example' },
        })
      ).status,
    ).toBe(200);
  });
});
