/**
 * The real `openai` and `@google/genai` SDKs over real HTTP against the fake servers on
 * 127.0.0.1: round trips, retries, Retry-After, the json_schema fallback, repair, timeouts,
 * the response cache and the rate limit as the server sees it.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NodeConfig } from '../../ts/config/node-config.js';
import { ProviderError } from '../../ts/errors.js';
import { type CreateProvidersOptions, createProviders } from '../../ts/llm/create-providers.js';
import { featureHashBatch } from '../../ts/llm/local/feature-hash.js';
import { localDecompose, localQuery } from '../../ts/llm/local/tasks.js';
import { OpenAIProvider } from '../../ts/llm/openai.js';
import { buildRequest } from '../../ts/llm/prompts/index.js';
import { BUILD_RETRY_POLICY } from '../../ts/llm/retry.js';
import { TASK_SCHEMAS, TASK_VALIDATORS } from '../../ts/llm/task-schemas.js';
import { countTokens } from '../../ts/text/index.js';
import {
  type FakeGeminiServer,
  type FakeOpenAIServer,
  startFakeGemini,
  startFakeOpenAI,
} from '../helpers/fake-providers/index.js';

const TEXT = 'Marie Curie was born in Warsaw in 1867. She moved to Paris in 1891.';
const KEY = 'sk-test-secret-0123456789abcdef';
/** A cheap stand-in counter where inputs are far below the 8,000-token cap. */
const tokenCounter = { countTokens: (s: string) => Buffer.byteLength(s) };
const FAST_RETRY = { ...BUILD_RETRY_POLICY, baseDelayMs: 20, maxDelayMs: 100 };

let dir: string;
let openai: FakeOpenAIServer;
let gemini: FakeGeminiServer;

beforeAll(async () => {
  openai = await startFakeOpenAI({ apiKey: KEY });
  gemini = await startFakeGemini({ apiKey: 'gemini-key-0123456789' });
});
afterAll(async () => {
  await openai.close();
  await gemini.close();
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'noderag-providers-'));
  openai.reset();
  gemini.reset();
  openai.options.latencyMs = 0;
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function openaiConfig(extra: { rate?: number; dim?: number; key?: string } = {}): NodeConfig {
  return NodeConfig.fromData(
    {
      model_config: {
        service_provider: 'openai',
        base_url: openai.baseUrl,
        api_keys: extra.key ?? KEY,
        rate_limit: extra.rate ?? 40,
      },
      embedding_config: { service_provider: 'openai', base_url: openai.baseUrl, api_keys: extra.key ?? KEY },
      config: { dim: extra.dim ?? 64 },
    },
    dir,
    { env: {} },
  );
}

function geminiConfig(baseUrl = gemini.baseUrl): NodeConfig {
  return NodeConfig.fromData(
    {
      model_config: {
        service_provider: 'gemini',
        model_name: 'gemini-2.5-flash',
        base_url: baseUrl,
        api_keys: 'gemini-key-0123456789',
      },
      embedding_config: {
        service_provider: 'gemini',
        embedding_model_name: 'text-embedding-004',
        base_url: baseUrl,
        api_keys: 'gemini-key-0123456789',
      },
      config: { dim: 768, language: 'Chinese' },
    },
    dir,
    { env: {} },
  );
}

function providers(config: NodeConfig, options: Partial<CreateProvidersOptions> = {}) {
  return createProviders(config, {
    mode: 'build',
    tokenCounter,
    retry: FAST_RETRY,
    cacheDir: join(dir, 'cache', 'response_cache'),
    ...options,
  });
}

async function rejection(p: Promise<unknown>): Promise<ProviderError> {
  const e = await p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ProviderError);
  return e as ProviderError;
}

describe('openai adapter through the real SDK', () => {
  it('round-trips structured, chat and embed', async () => {
    const p = providers(openaiConfig());
    const d = await p.run('decompose', { text: TEXT });
    expect(d).toEqual(localDecompose(TEXT, 'English'));
    const answer = await p.run('answer', {
      context: '------------semantic_unit-------------\n1. Marie Curie was born in Warsaw.\n',
      question: 'Where was Marie Curie born?',
    });
    expect(answer).toBe('Based on the retrieved context:\n- Marie Curie was born in Warsaw.');
    const e = await p.embedDocuments(['Marie Curie', 'Warsaw']);
    expect(e.dim).toBe(64);
    expect(Array.from(e.vectors)).toEqual(Array.from(featureHashBatch(['Marie Curie', 'Warsaw'], 64)));
    p.close();

    const [chat1, , emb] = openai.requests;
    expect(chat1?.route).toBe('chat');
    const body = chat1!.body as {
      model: string;
      response_format: { type: string; json_schema: { strict: boolean } };
    };
    expect(body.model).toBe('gpt-4o-mini');
    expect(body.response_format.type).toBe('json_schema');
    expect(body.response_format.json_schema.strict).toBe(true);
    expect(emb?.route).toBe('embeddings');
    expect(emb!.body).toMatchObject({
      model: 'text-embedding-3-small',
      input: ['Marie Curie', 'Warsaw'],
      encoding_format: 'base64',
    });
    expect(chat1?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('embeddings: reads float lists from a server that ignores base64; asks for floats once one rejects it', async () => {
    const texts = ['Marie Curie', 'Warsaw', 'Paris'];
    const expected = Array.from(featureHashBatch(texts, 64));
    const formats = (s: FakeOpenAIServer) =>
      s.requests.map((r) => (r.body as { encoding_format?: string }).encoding_format);
    for (const behaviour of [{ floatsOnly: true }, { rejectBase64: true }]) {
      const server = await startFakeOpenAI(behaviour);
      try {
        const config = NodeConfig.fromData(
          {
            model_config: { service_provider: 'local' },
            embedding_config: { service_provider: 'openai', base_url: server.baseUrl },
            config: { dim: 64 },
          },
          dir,
          { env: {} },
        );
        const p = providers(config, { cacheDir: null });
        expect(Array.from((await p.embedDocuments(texts)).vectors)).toEqual(expected);
        expect(Array.from((await p.embedDocuments(texts.slice(1))).vectors)).toEqual(expected.slice(64));
        expect(formats(server)).toEqual(
          behaviour.floatsOnly ? ['base64', 'base64'] : ['base64', 'float', 'float'],
        );
        p.close();
      } finally {
        await server.close();
      }
    }
  });

  it('a stopped caller (noNewRequests) gets no second request in another form from a server that refuses the first', async () => {
    const stopped = AbortSignal.abort(new Error('build stopped'));
    for (const behaviour of [{ rejectJsonSchema: true }, { rejectBase64: true }]) {
      const server = await startFakeOpenAI(behaviour);
      try {
        const adapter = new OpenAIProvider({
          section: 'model_config',
          model: 'gpt-4o-mini',
          apiKey: 'k',
          baseUrl: server.baseUrl,
          dim: 8,
        });
        const call = behaviour.rejectJsonSchema
          ? adapter.structured(
              buildRequest({ task: 'query', language: 'English', input: { question: 'Who?' } }),
              TASK_SCHEMAS.query,
              TASK_VALIDATORS.query,
              { noNewRequests: stopped },
            )
          : adapter.embed(['Marie Curie'], { noNewRequests: stopped });
        await expect(call).rejects.toThrow('build stopped');
        // The request in flight when the caller stopped was its last.
        expect(server.requests).toHaveLength(1);
      } finally {
        await server.close();
      }
    }
  });

  it('falls back to plain JSON mode once when the server rejects json_schema, and remembers', async () => {
    const strictless = await startFakeOpenAI({ rejectJsonSchema: true });
    try {
      const config = NodeConfig.fromData(
        {
          model_config: { base_url: strictless.baseUrl },
          embedding_config: { service_provider: 'local' },
          config: { dim: 8 },
        },
        dir,
        { env: {} },
      );
      const p = providers(config, { cacheDir: null });
      const q = await p.run('query', { question: 'Where did Marie Curie work?' });
      expect(q).toEqual(localQuery('Where did Marie Curie work?', 'English'));
      expect(
        strictless.requests.map(
          (r) => (r.body as { response_format: { type: string } }).response_format.type,
        ),
      ).toEqual(['json_schema', 'json_object']);
      const system = (strictless.requests[1]!.body as { messages: Array<{ content: string }> }).messages[0]
        ?.content;
      expect(system).toContain('matching this JSON Schema');
      expect(system).toContain('"elements"');
      await p.run('query', { question: 'Who?' });
      expect(strictless.count()).toBe(3); // straight to json_object
    } finally {
      await strictless.close();
    }
  });

  it('repairs an invalid structured reply once', async () => {
    const p = providers(openaiConfig(), { cacheDir: null });
    openai.inject({ route: 'chat', fault: { kind: 'invalid-reply' } });
    const q = await p.run('query', { question: 'What did Marie Curie discover?' });
    expect(q.elements).toEqual(['Marie Curie', 'discover']);
    expect(openai.count('chat')).toBe(2);
    const repair = openai.requests[1]!.body as { messages: Array<{ role: string; content: string }> };
    expect(repair.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(repair.messages[3]?.content).toMatch(/^Your reply was not valid: not valid JSON/);
  });

  it('the repair is a request of its own: its own timeout and rate-limit slot', async () => {
    // Each reply takes 300 ms, the timeout is 500 ms per request: the reply and its repair
    // together (600 ms) used to fail the timeout on every attempt.
    const slow = await startFakeOpenAI({ latencyMs: 300 });
    try {
      const config = NodeConfig.fromData(
        {
          model_config: { base_url: slow.baseUrl, rate_limit: 1 },
          embedding_config: { service_provider: 'local' },
          config: { dim: 8 },
        },
        dir,
        { env: {} },
      );
      const p = providers(config, {
        cacheDir: null,
        retry: { ...FAST_RETRY, maxAttempts: 1 },
        timeouts: { chatMs: 500 },
      });
      slow.inject({ route: 'chat', fault: { kind: 'invalid-reply' } });
      const q = await p.run('query', { question: 'Where did Marie Curie work?' });
      expect(q).toEqual(localQuery('Where did Marie Curie work?', 'English'));
      expect(slow.count('chat')).toBe(2);
      // rate_limit: 1 per second holds for the repair too: it starts a second after the reply.
      const [first, repair] = slow.requests.map((r) => r.at);
      expect(repair! - first!).toBeGreaterThanOrEqual(900);
    } finally {
      await slow.close();
    }
  });

  it('an invalid reply after the repair is a failed (retryable) attempt', async () => {
    const p = providers(openaiConfig(), { cacheDir: null, retry: { ...FAST_RETRY, maxAttempts: 1 } });
    openai.inject({ route: 'chat', times: 2, fault: { kind: 'invalid-reply' } });
    const e = await rejection(p.run('decompose', { text: TEXT }));
    expect(e.retryable).toBe(true);
    expect(e.message).toMatch(
      /returned an invalid decompose reply: not valid JSON .*also after one repair attempt/,
    );
  });
});

describe('gemini adapter through the real SDK', () => {
  it('never sends the key to another origin a redirect points to', async () => {
    // base_url answers every request with a 307 to the fake server under another origin.
    const elsewhere = gemini.baseUrl.replace('127.0.0.1', 'localhost');
    const redirector = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(307, { location: `${elsewhere}${req.url}` }).end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    const at = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
    try {
      const p = providers(geminiConfig(at), { cacheDir: null });
      await expect(
        p.run('attribute', { entity: 'Curie', units: ['Curie found radium.'], relationships: [] }),
      ).rejects.toThrow();
      await expect(p.embedDocuments(['Curie'])).rejects.toThrow();
      p.close();
      expect(gemini.requests.length).toBeGreaterThan(0);
      for (const r of gemini.requests) expect(r.headers['x-goog-api-key']).toBeUndefined();
    } finally {
      await new Promise<void>((r) => redirector.close(() => r()));
    }
  });

  it('round-trips structured, chat and embed (Chinese prompts)', async () => {
    const p = providers(geminiConfig());
    const text = '居里夫人在巴黎发现了镭。她于1903年获得诺贝尔物理学奖。';
    expect(await p.run('decompose', { text })).toEqual(localDecompose(text, 'Chinese'));
    const a = await p.run('attribute', {
      entity: '居里夫人',
      units: ['居里夫人在巴黎发现了镭。'],
      relationships: [],
    });
    expect(a).toBe('居里夫人在巴黎发现了镭。');
    const e = await p.embedDocuments(['居里夫人', '巴黎', '镭']);
    expect(e.dim).toBe(768);
    expect(Array.from(e.vectors)).toEqual(Array.from(featureHashBatch(['居里夫人', '巴黎', '镭'], 768)));
    p.close();

    const gen = gemini.requests[0];
    expect(gen?.url).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(gen?.headers['x-goog-api-key']).toBe('gemini-key-0123456789');
    const cfg = (gen!.body as { generationConfig: Record<string, unknown> }).generationConfig;
    expect(cfg.responseMimeType).toBe('application/json');
    expect(cfg.responseSchema).toMatchObject({ type: 'OBJECT', required: ['Output'] });
    const plain = (gemini.requests[1]!.body as { generationConfig: Record<string, unknown> })
      .generationConfig;
    expect(plain.responseMimeType).toBeUndefined();
    const emb = gemini.requests[2];
    expect(emb?.route).toBe('batchEmbedContents');
    expect((emb!.body as { requests: unknown[] }).requests).toHaveLength(3);
    expect(
      (emb!.body as { requests: Array<{ outputDimensionality: number }> }).requests[0]?.outputDimensionality,
    ).toBe(768);
  });

  it('replies of the wrong shape are invalid replies, retried; a bad status keeps its meaning whatever its body', async () => {
    const p = providers(geminiConfig(), { cacheDir: null });
    // A null body, then parts that are not a list: retried, then answered.
    gemini.inject({ route: 'generateContent', fault: { kind: 'raw', body: 'null' } });
    gemini.inject({
      route: 'generateContent',
      fault: { kind: 'raw', body: JSON.stringify({ candidates: [{ content: { parts: {} } }] }) },
    });
    expect((await p.run('query', { question: '居里夫人是谁？' })).elements.length).toBeGreaterThan(0);
    expect(gemini.count('generateContent')).toBe(3);
    // Values that are not numbers, and an embedding without values: retried, never zeros.
    gemini.inject({
      route: 'batchEmbedContents',
      fault: { kind: 'raw', body: JSON.stringify({ embeddings: [{ values: [null, true, '2'] }] }) },
    });
    gemini.inject({
      route: 'batchEmbedContents',
      fault: { kind: 'raw', body: JSON.stringify({ embeddings: [{}] }) },
    });
    const batch = await p.embedDocuments(['a']);
    expect(batch.dim).toBe(768);
    expect(gemini.count('batchEmbedContents')).toBe(3);
    // A 401 whose body is not JSON still fails at once as an authentication failure.
    gemini.reset();
    gemini.inject({ route: 'generateContent', fault: { kind: 'raw', status: 401, body: '' } });
    const e = await rejection(p.run('query', { question: '谁？' }));
    expect(gemini.count()).toBe(1);
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(/^authentication failed for provider gemini \(HTTP 401\)/);
  });

  it('retries a 429 honouring Retry-After, and fails at once on a bad key', async () => {
    const p = providers(geminiConfig(), { cacheDir: null });
    gemini.inject({ route: 'generateContent', fault: { kind: 'status', status: 429, retryAfter: '1' } });
    await p.run('query', { question: '居里夫人是谁？' });
    const [first, second] = gemini.requests;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(990);
    expect(second!.at - first!.at).toBeLessThan(2500);
    expect(p.stats().chat.retries).toBe(1);

    const badConfig = NodeConfig.fromData(
      {
        model_config: {
          service_provider: 'gemini',
          model_name: 'gemini-2.5-flash',
          base_url: gemini.baseUrl,
          api_keys: 'AIzaWrongKey0123456789abcdefghij',
        },
        embedding_config: { service_provider: 'local' },
      },
      dir,
      { env: {} },
    );
    gemini.reset();
    const e = await rejection(providers(badConfig, { cacheDir: null }).run('query', { question: '谁？' }));
    expect(gemini.count()).toBe(1);
    expect(e.status).toBe(401);
    expect(e.retryable).toBe(false);
    expect(e.message).toBe(
      'authentication failed for provider gemini (HTTP 401): check model_config.api_keys or GEMINI_API_KEY / GOOGLE_API_KEY',
    );
  });
});

describe('retries and failures', () => {
  it('recovers from 500s and from a malformed body', async () => {
    const p = providers(openaiConfig(), { cacheDir: null });
    openai.inject({ route: 'chat', times: 2, fault: { kind: 'status', status: 500 } });
    openai.inject({ route: 'chat', fault: { kind: 'malformed-json' } });
    expect((await p.run('query', { question: 'Who is Marie Curie?' })).elements).toEqual(['Marie Curie']);
    expect(openai.count('chat')).toBe(4);
    expect(p.stats().chat).toMatchObject({ calls: 1, requests: 4, retries: 3 });
  });

  it('replies of the wrong shape are invalid replies, retried: a null body, no "data", a non-finite vector, an error event in a stream', async () => {
    const p = providers(openaiConfig({ dim: 64 }), { cacheDir: null });
    openai.inject({ route: 'chat', fault: { kind: 'raw', body: 'null' } });
    expect((await p.run('query', { question: 'Who is Marie Curie?' })).elements).toEqual(['Marie Curie']);
    expect(openai.count('chat')).toBe(2);

    openai.inject({ route: 'embeddings', fault: { kind: 'raw', body: '{"object":"list","model":"x"}' } });
    const nan = new Float32Array(64).fill(0.1);
    nan[3] = Number.NaN;
    const nanBody = JSON.stringify({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: Buffer.from(nan.buffer).toString('base64') }],
      model: 'x',
      usage: { prompt_tokens: 1, total_tokens: 1 },
    });
    openai.inject({ route: 'embeddings', fault: { kind: 'raw', body: nanBody } });
    const batch = await p.embedDocuments(['x']);
    expect(batch.dim).toBe(64);
    expect(batch.vectors.every(Number.isFinite)).toBe(true);
    expect(openai.count('embeddings')).toBe(3);

    openai.inject({
      route: 'chat',
      fault: {
        kind: 'raw',
        contentType: 'text/event-stream',
        body: 'data: {"error":{"message":"overloaded","type":"server_error"}}\n\n',
      },
    });
    let text = '';
    for await (const delta of p.stream('answer', { context: '', question: 'Why?' })) text += delta;
    expect(text.length).toBeGreaterThan(0);
    expect(openai.count('chat')).toBe(4);
  });

  it('embedding rows whose "index" fields are not each input once are an invalid reply, retried (never stored against other texts)', async () => {
    const p = providers(openaiConfig({ dim: 64 }), { cacheDir: null });
    const vec = (x: number) => Buffer.from(new Float32Array(64).fill(x).buffer).toString('base64');
    const twoAtZero = JSON.stringify({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: vec(0.2) },
        { object: 'embedding', index: 0, embedding: vec(0.1) },
      ],
      model: 'x',
      usage: { prompt_tokens: 1, total_tokens: 1 },
    });
    openai.inject({ route: 'embeddings', fault: { kind: 'raw', body: twoAtZero } });
    const batch = await p.embedDocuments(['first text', 'second text']);
    expect(openai.count('embeddings')).toBe(2);
    // The retried reply is the fake's own: each vector is that of its text.
    const again = await p.embedDocuments(['second text']);
    expect([...batch.vectors.subarray(64, 128)]).toEqual([...again.vectors]);
  });

  it("a 200 embeddings reply holding an error object says the server's words (Ollama: model not found)", async () => {
    const p = providers(openaiConfig({ dim: 64 }), {
      cacheDir: null,
      retry: { ...FAST_RETRY, maxAttempts: 1 },
    });
    openai.inject({
      route: 'embeddings',
      fault: {
        kind: 'raw',
        body: '{"error":{"message":"model \\"nomic-embed-text\\" not found, try pulling it first"}}',
      },
    });
    const e = await p.embedDocuments(['x']).catch((x: unknown) => x);
    expect((e as Error).message).toContain(
      'an error instead of embeddings: model "nomic-embed-text" not found, try pulling it first',
    );
  });

  it("an OpenAI refusal fails at once with the model's words (asking again gets the same)", async () => {
    const p = providers(openaiConfig(), { cacheDir: null });
    const refusal = JSON.stringify({
      id: 'x',
      object: 'chat.completion',
      created: 0,
      model: 'gpt-4o-mini',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' },
          finish_reason: 'stop',
        },
      ],
    });
    openai.inject({ route: 'chat', fault: { kind: 'raw', body: refusal } });
    const e = await p.run('query', { question: 'Who is Marie Curie?' }).catch((x: unknown) => x);
    expect((e as Error).message).toMatch(/refused to answer: I cannot help with that\.$/);
    expect(openai.count('chat')).toBe(1);
  });

  it('honours Retry-After on the OpenAI route too', async () => {
    const p = providers(openaiConfig(), { cacheDir: null });
    openai.inject({ route: 'embeddings', fault: { kind: 'status', status: 429, retryAfter: '1' } });
    await p.embedDocuments(['x']);
    const [a, b] = openai.requests;
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(990);
  });

  it('gives up after the attempt limit with a clear error', async () => {
    const p = providers(openaiConfig(), { cacheDir: null, retry: { ...FAST_RETRY, maxAttempts: 3 } });
    openai.inject({
      route: 'chat',
      times: 10,
      fault: { kind: 'status', status: 503, message: 'overloaded' },
    });
    const e = await rejection(p.run('answer', { context: '', question: 'Why?' }));
    expect(openai.count('chat')).toBe(3);
    expect(e.status).toBe(503);
    expect(e.message).toBe(
      'provider openai (model_config, model gpt-4o-mini) returned HTTP 503: 503 overloaded (gave up after 3 attempts)',
    );
  });

  it('400/401/404 fail at once with an actionable message and never show the key', async () => {
    const wrongKey = 'sk-wrong-key-abcdefghijklmnop';
    const p = providers(openaiConfig({ key: wrongKey }), { cacheDir: null });
    const e = await rejection(p.run('query', { question: 'Who?' }));
    expect(openai.count()).toBe(1);
    expect(e.message).toBe(
      'authentication failed for provider openai (HTTP 401): check model_config.api_keys or OPENAI_API_KEY',
    );
    expect(JSON.stringify({ m: e.message, s: e.stack })).not.toContain(wrongKey);

    openai.reset();
    const ok = providers(openaiConfig(), { cacheDir: null });
    openai.inject({ fault: { kind: 'status', status: 404, message: 'The model `gpt-x` does not exist' } });
    const nf = await rejection(ok.run('query', { question: 'Who?' }));
    expect(nf.retryable).toBe(false);
    expect(nf.message).toMatch(
      /^provider openai returned HTTP 404 for model "gpt-4o-mini": check model_config.model_name and base_url/,
    );
    openai.inject({ fault: { kind: 'status', status: 400, message: 'bad request' } });
    const br = await rejection(ok.run('answer', { context: '', question: 'x' }));
    expect(br.message).toMatch(/rejected the request \(HTTP 400\)/);
    expect(openai.count()).toBe(2);
  });

  it('a wrong embedding length is a clear, non-retried error', async () => {
    const p = providers(openaiConfig({ dim: 64 }), { cacheDir: null });
    openai.inject({ route: 'embeddings', fault: { kind: 'wrong-dim', dim: 32 } });
    const e = await rejection(p.embedDocuments(['a', 'b']));
    expect(e.retryable).toBe(false);
    expect(e.message).toBe(
      'embedding model openai/text-embedding-3-small returned vectors of length 32, but config.dim is 64; set config.dim to 32 or choose another model',
    );
    expect(openai.count()).toBe(1);
  });

  it('times out a slow request (retryable, code upstream_timeout)', async () => {
    const p = providers(openaiConfig(), {
      cacheDir: null,
      retry: { ...FAST_RETRY, maxAttempts: 1 },
      timeouts: { chatMs: 150 },
    });
    openai.inject({ route: 'chat', fault: { kind: 'delay', ms: 1500 } });
    const started = performance.now();
    const e = await rejection(p.run('query', { question: 'Who?' }));
    expect(performance.now() - started).toBeLessThan(1400);
    expect(e.code).toBe('upstream_timeout');
    expect(e.retryable).toBe(true);
    expect(e.message).toBe(
      'provider openai (model_config, model gpt-4o-mini) did not answer within 0.2 s (model_config.request_timeout)',
    );
  });

  it("a timeout cut short by the call's deadline says so instead of naming request_timeout", async () => {
    const p = providers(openaiConfig(), {
      cacheDir: null,
      retry: { ...FAST_RETRY, maxAttempts: 1, deadlineMs: 300 },
      timeouts: { chatMs: 10_000 },
    });
    openai.inject({ route: 'chat', fault: { kind: 'delay', ms: 1500 } });
    const e = await rejection(p.run('query', { question: 'Who?' }));
    expect(e.message).toBe(
      "provider openai (model_config, model gpt-4o-mini) did not answer within 0.3 s (what was left of the call's deadline)",
    );
  });

  it('a deadline equal to request_timeout: the timeout is request_timeout', async () => {
    const p = providers(openaiConfig(), {
      cacheDir: null,
      retry: { ...FAST_RETRY, maxAttempts: 1, deadlineMs: 300 },
      timeouts: { chatMs: 300 },
    });
    openai.inject({ route: 'chat', fault: { kind: 'delay', ms: 1500 } });
    const e = await rejection(p.run('query', { question: 'Who?' }));
    expect(e.message).toBe(
      'provider openai (model_config, model gpt-4o-mini) did not answer within 0.3 s (model_config.request_timeout)',
    );
  });

  it('a server that is not there: the message names the service and the socket error', async () => {
    // A port nothing listens on (freed at once).
    const closed = await new Promise<number>((done) => {
      const srv = createServer();
      srv.listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as { port: number };
        srv.close(() => done(port));
      });
    });
    const config = NodeConfig.fromData(
      {
        model_config: { service_provider: 'local' },
        embedding_config: {
          service_provider: 'openai',
          embedding_model_name: 'nomic-embed-text',
          base_url: `http://127.0.0.1:${closed}/v1`,
          api_keys: KEY,
        },
        config: { dim: 64 },
      },
      dir,
    );
    const p = providers(config, { cacheDir: null, retry: { ...FAST_RETRY, maxAttempts: 1 } });
    const e = await rejection(p.embedding.embed(['x']));
    expect(e.message).toMatch(
      /^cannot reach provider openai \(embedding_config, model nomic-embed-text\) at http:\/\/127\.0\.0\.1:\d+\/v1 \(embedding_config\.base_url\): .*ECONNREFUSED/,
    );
  });

  it('an AbortSignal cancels the request without retrying', async () => {
    const p = providers(openaiConfig(), { cacheDir: null });
    openai.inject({ route: 'chat', fault: { kind: 'delay', ms: 1500 } });
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error('client went away')), 100);
    const started = performance.now();
    await expect(p.run('query', { question: 'Who?' }, { signal: ctl.signal })).rejects.toThrow(
      'client went away',
    );
    expect(performance.now() - started).toBeLessThan(1400);
    expect(openai.count()).toBe(1);
  });
});

describe('response cache', () => {
  it('answers a repeated request without reaching the server, also after reopening', async () => {
    const p1 = providers(openaiConfig());
    const first = await p1.run('decompose', { text: TEXT });
    await p1.run('attribute', { entity: 'MARIE CURIE', units: [TEXT], relationships: [] });
    expect(openai.count()).toBe(2);
    expect(await p1.run('decompose', { text: TEXT })).toEqual(first);
    expect(openai.count()).toBe(2);
    expect(p1.stats().chat).toMatchObject({ calls: 2, cacheHits: 1 });
    p1.close();

    const p2 = providers(openaiConfig());
    expect(await p2.run('decompose', { text: TEXT })).toEqual(first);
    await p2.run('attribute', { entity: 'MARIE CURIE', units: [TEXT], relationships: [] });
    expect(openai.count()).toBe(2);
    expect(p2.stats().chat).toMatchObject({ calls: 0, cacheHits: 2 });
    p2.close();
    // The key is never written to the cache.
    const files = ['llm.jsonl', 'embeddings.bin'].map((f) =>
      readFileSync(join(dir, 'cache', 'response_cache', f)),
    );
    for (const f of files) expect(f.includes(KEY)).toBe(false);
  });

  it('caches embeddings per input: a different batching still hits', async () => {
    const p = providers(openaiConfig());
    const a = await p.embedDocuments(['alpha', 'beta', 'gamma']);
    const b = await p.embedDocuments(['beta', 'gamma', 'delta', 'alpha', 'delta']);
    expect(openai.count('embeddings')).toBe(2);
    expect((openai.requests[1]!.body as { input: string[] }).input).toEqual(['delta']);
    expect(Array.from(b.vectors.subarray(0, 64))).toEqual(Array.from(a.vectors.subarray(64, 128)));
    expect(Array.from(b.vectors.subarray(3 * 64, 4 * 64))).toEqual(Array.from(a.vectors.subarray(0, 64)));
    expect(p.stats().embedding).toMatchObject({ embeddingCacheHits: 3, embeddedTexts: 4 });
    // The repeated input gets the one vector sent for it, in both places.
    const delta = Array.from(featureHashBatch(['delta'], 64));
    expect(Array.from(b.vectors.subarray(2 * 64, 3 * 64))).toEqual(delta);
    expect(Array.from(b.vectors.subarray(4 * 64, 5 * 64))).toEqual(delta);
    p.close();
    // All from the cache, one record per text: no request, the same vectors.
    const again = providers(openaiConfig());
    const c = await again.embedDocuments(['delta', 'alpha', 'delta']);
    expect(openai.count('embeddings')).toBe(2);
    expect(Array.from(c.vectors)).toEqual([...delta, ...Array.from(a.vectors.subarray(0, 64)), ...delta]);
    expect(again.cache?.embeddingCount).toBe(4);
    again.close();
  });

  it('does not cache failures, and search mode does not cache at all', async () => {
    const p = providers(openaiConfig(), { retry: { ...FAST_RETRY, maxAttempts: 1 } });
    openai.inject({ route: 'chat', fault: { kind: 'status', status: 503 } });
    await rejection(p.run('query', { question: 'Who?' }));
    await p.run('query', { question: 'Who?' });
    expect(openai.count()).toBe(2);
    p.close();
    const s = providers(openaiConfig(), { mode: 'search', cacheDir: undefined });
    expect(s.cache).toBeUndefined();
    await s.run('query', { question: 'Who?' });
    await s.run('query', { question: 'Who?' });
    expect(openai.count()).toBe(4);
  });
});

describe('embedding input cap', () => {
  it('sends at most 8,000 o200k_base tokens of each input (the default counter is the Rust core)', async () => {
    const p = createProviders(openaiConfig(), { mode: 'build', cacheDir: null });
    const long = 'hello world '.repeat(5000);
    await p.embedDocuments([long, 'short']);
    const sent = (openai.requests[0]!.body as { input: string[] }).input;
    expect(countTokens(sent[0] as string)).toBe(8000);
    expect(long.startsWith(sent[0] as string)).toBe(true);
    expect(sent[1]).toBe('short');
  });
});

describe('rate limit, measured at the server', () => {
  it('holds rate_limit requests per second across concurrent callers', async () => {
    // A low rate keeps the spacing (200 ms) well above the scheduling jitter of a busy
    // 2-core machine, so what the server sees reflects the limiter, not the load.
    const rate = 5;
    const p = providers(openaiConfig({ rate }), { cacheDir: null });
    openai.options.latencyMs = 50;
    const n = 3 * rate;
    const started = performance.now();
    await Promise.all(Array.from({ length: n }, (_, i) => p.run('query', { question: `Question ${i}?` })));
    const elapsed = performance.now() - started;
    const times = openai.requests.map((r) => r.at).sort((x, y) => x - y);
    expect(times).toHaveLength(n);
    // No one-second window holds more than `rate` arrivals (one more allowed for network jitter).
    let most = 0;
    for (const t of times) most = Math.max(most, times.filter((x) => x >= t && x < t + 1000).length);
    expect(most).toBeLessThanOrEqual(rate + 1);
    // Unthrottled, all 15 would arrive within a few milliseconds.
    expect(times.at(-1)! - times[0]!).toBeGreaterThan(2000);
    // And it does not hold back more than it must: the arrivals come at the configured rate.
    const achieved = ((n - 1) / (times.at(-1)! - times[0]!)) * 1000;
    expect(achieved).toBeGreaterThan(0.85 * rate);
    expect(achieved).toBeLessThan(1.1 * rate);
    expect(elapsed).toBeLessThan(5000);
  });
});
