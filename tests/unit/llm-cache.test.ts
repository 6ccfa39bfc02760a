import { createHash } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ProviderError } from '../../ts/errors.js';
import { CACHE_VERSION, cacheKey, canonicalJson } from '../../ts/llm/cache-key.js';
import { CachedProvider } from '../../ts/llm/cached-provider.js';

type EachRequestFn = <T>(send: (signal: AbortSignal) => Promise<T>) => Promise<T>;

import { LocalProvider } from '../../ts/llm/local/provider.js';
import { buildRequest } from '../../ts/llm/prompts/index.js';
import { RateLimiter } from '../../ts/llm/rate-limiter.js';
import { EMBEDDINGS_FILE, REPLIES_FILE, ResponseCache } from '../../ts/llm/response-cache.js';
import { BUILD_RETRY_POLICY, SEARCH_RETRY_POLICY } from '../../ts/llm/retry.js';
import { TASK_SCHEMAS, TASK_VALIDATORS } from '../../ts/llm/task-schemas.js';
import { capTokens } from '../../ts/llm/token-cap.js';
import type { ProviderIdentity } from '../../ts/llm/types.js';

const identity: ProviderIdentity = {
  provider: 'openai',
  baseUrl: null,
  model: 'gpt-4o-mini',
  params: { temperature: 0, max_tokens: 100 },
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'noderag-cache-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('cache keys', () => {
  it('canonical JSON sorts keys at every level and has no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[1,{"y":2,"z":1}]},"b":1}',
    );
    expect(canonicalJson({ a: undefined, b: null })).toBe('{"b":null}');
  });

  it('key = sha256 of the canonical document, and any field change changes it', () => {
    const k = cacheKey(identity, 'chat', { messages: [{ role: 'user', content: 'hi' }] });
    expect(k).toHaveLength(32);
    expect(CACHE_VERSION).toBe(1);
    const same = cacheKey({ ...identity, params: { max_tokens: 100, temperature: 0 } }, 'chat', {
      messages: [{ content: 'hi', role: 'user' }],
    });
    expect(same.equals(k)).toBe(true);
    const variants = [
      cacheKey({ ...identity, model: 'gpt-4o' }, 'chat', { messages: [{ role: 'user', content: 'hi' }] }),
      cacheKey({ ...identity, baseUrl: 'http://x/v1' }, 'chat', {
        messages: [{ role: 'user', content: 'hi' }],
      }),
      cacheKey({ ...identity, params: { temperature: 1, max_tokens: 100 } }, 'chat', {
        messages: [{ role: 'user', content: 'hi' }],
      }),
      cacheKey(identity, 'structured', { messages: [{ role: 'user', content: 'hi' }] }),
      cacheKey(identity, 'chat', { messages: [{ role: 'user', content: 'hi!' }] }),
    ];
    for (const v of variants) expect(v.equals(k)).toBe(false);
  });

  it('a trailing slash on base_url is the same server, the same key', () => {
    const at = (baseUrl: string) =>
      cacheKey({ ...identity, baseUrl }, 'chat', { messages: [] }).toString('hex');
    expect(at('http://127.0.0.1:11434/v1/')).toBe(at('http://127.0.0.1:11434/v1'));
    expect(at('http://127.0.0.1:11434/v1//')).toBe(at('http://127.0.0.1:11434/v1'));
    expect(at('http://127.0.0.1:11434/v2')).not.toBe(at('http://127.0.0.1:11434/v1'));
  });

  it('keys stay sha256 of the whole canonical document (caches written before keep hitting)', () => {
    const reference = (id: typeof identity, kind: 'chat' | 'structured' | 'embedding', request: unknown) =>
      createHash('sha256')
        .update(
          canonicalJson({
            version: CACHE_VERSION,
            provider: id.provider,
            base_url: id.baseUrl,
            model: id.model,
            kind,
            request,
            params: id.params,
          }),
          'utf8',
        )
        .digest();
    const identities = [
      identity,
      { ...identity, baseUrl: null },
      { ...identity, params: {} },
      { ...identity, baseUrl: 'http://127.0.0.1:1/v1', params: { dimensions: 256, z: [1, { b: 2, a: 1 }] } },
    ];
    const requests = [
      'a text',
      '',
      'ü "quoted" \\ \u0000',
      { messages: [{ role: 'user', content: 'hi' }] },
      [1, null],
      null,
      undefined,
    ];
    for (const id of identities) {
      for (const kind of ['chat', 'structured', 'embedding'] as const) {
        for (const request of requests) {
          // Twice: the second call takes the document's head as kept for this identity.
          expect(cacheKey(id, kind, request).equals(reference(id, kind, request))).toBe(true);
          expect(cacheKey(id, kind, request).equals(reference(id, kind, request))).toBe(true);
        }
      }
    }
  });
});

describe('ResponseCache', () => {
  it('stores replies and embeddings and finds them after reopening', () => {
    const c = ResponseCache.open(dir);
    const k1 = cacheKey(identity, 'structured', 'a');
    const k2 = cacheKey(identity, 'embedding', 'b');
    c.putReply(k1, { provider: 'openai', model: 'm', kind: 'structured' }, { elements: ['x', 'ü'] });
    c.putEmbeddings([{ key: k2, vector: new Float32Array([0.5, -1.25, 3]) }]);
    c.close();
    const line = JSON.parse(readFileSync(join(dir, REPLIES_FILE), 'utf8').trim());
    expect(Object.keys(line)).toEqual(['key', 'provider', 'model', 'kind', 'created_at', 'response']);
    expect(line.key).toBe(k1.toString('hex'));
    // embeddings.bin: 32-byte key, u32 LE length, float32 LE values.
    const bin = readFileSync(join(dir, EMBEDDINGS_FILE));
    expect(bin.length).toBe(32 + 4 + 12);
    expect(bin.subarray(0, 32).equals(k2)).toBe(true);
    expect(bin.readUInt32LE(32)).toBe(3);
    expect(bin.readFloatLE(36 + 4)).toBe(-1.25);

    const again = ResponseCache.open(dir);
    expect(again.getReply(k1)).toEqual({ elements: ['x', 'ü'] });
    expect(Array.from(again.getEmbedding(k2) as Float32Array)).toEqual([0.5, -1.25, 3]);
    expect(again.getEmbedding(k1)).toBeUndefined();
    expect(again.loadReport).toMatchObject({
      replies: 1,
      embeddings: 1,
      truncatedBytes: { replies: 0, embeddings: 0 },
    });
    again.close();
  });

  it('ignores a torn last reply line, cuts it off, and appends cleanly after it', () => {
    const c = ResponseCache.open(dir);
    const good = cacheKey(identity, 'chat', 'good');
    c.putReply(good, { provider: 'openai', model: 'm', kind: 'chat' }, 'kept');
    c.close();
    const size = statSync(join(dir, REPLIES_FILE)).size;
    // A kill in the middle of the next write leaves half a line.
    appendFileSync(join(dir, REPLIES_FILE), '{"key":"abcdef","provider":"openai","resp');
    const reopened = ResponseCache.open(dir);
    expect(reopened.loadReport.truncatedBytes.replies).toBeGreaterThan(0);
    expect(reopened.replyCount).toBe(1);
    expect(statSync(join(dir, REPLIES_FILE)).size).toBe(size);
    const next = cacheKey(identity, 'chat', 'next');
    reopened.putReply(next, { provider: 'openai', model: 'm', kind: 'chat' }, 'after');
    reopened.close();
    const third = ResponseCache.open(dir);
    expect(third.getReply(good)).toBe('kept');
    expect(third.getReply(next)).toBe('after');
    expect(third.loadReport.skippedLines).toBe(0);
    third.close();
  });

  it('ignores a torn last embedding record (short values, or a short header)', () => {
    const c = ResponseCache.open(dir);
    const k = cacheKey(identity, 'embedding', 'x');
    c.putEmbeddings([{ key: k, vector: new Float32Array([1, 2, 3, 4]) }]);
    c.close();
    const path = join(dir, EMBEDDINGS_FILE);
    const whole = statSync(path).size;
    const torn = Buffer.alloc(36 + 8);
    cacheKey(identity, 'embedding', 'y').copy(torn);
    torn.writeUInt32LE(4, 32); // claims 4 values, holds 2
    appendFileSync(path, torn);
    const r = ResponseCache.open(dir);
    expect(r.embeddingCount).toBe(1);
    expect(r.loadReport.truncatedBytes.embeddings).toBe(44);
    expect(statSync(path).size).toBe(whole);
    r.close();
    appendFileSync(path, Buffer.alloc(20, 7)); // a torn header
    const r2 = ResponseCache.open(dir);
    expect(Array.from(r2.getEmbedding(k) as Float32Array)).toEqual([1, 2, 3, 4]);
    expect(r2.loadReport.truncatedBytes.embeddings).toBe(20);
    r2.close();
  });

  it('a damaged embedding record inside the file costs that record only; worse damage is kept aside', () => {
    const c = ResponseCache.open(dir);
    const keys = [0, 1, 2, 3, 4].map((i) => cacheKey(identity, 'embedding', `v${i}`));
    c.putEmbeddings(keys.map((key, i) => ({ key, vector: new Float32Array([i, i + 0.5, -i]) })));
    c.close();
    const path = join(dir, EMBEDDINGS_FILE);
    const record = 36 + 12;
    // A flipped length field in the second record (as a bad sector or a stray write would).
    const bytes = readFileSync(path);
    bytes.writeUInt32LE(0x7fffffff, record + 32);
    writeFileSync(path, bytes);
    const r = ResponseCache.open(dir);
    expect(r.loadReport.skippedRecords).toBe(1);
    expect(r.loadReport.damagedEmbeddingBytes).toBe(0);
    expect(r.embeddingCount).toBe(4);
    expect(r.getEmbedding(keys[1]!)).toBeUndefined();
    for (const i of [0, 2, 3, 4]) expect(Array.from(r.getEmbedding(keys[i]!)!)).toEqual([i, i + 0.5, -i]);
    // The file was repaired (the damaged record taken out, the original kept aside): appending
    // goes on, and the next open finds nothing to skip or report.
    expect(readFileSync(`${path}.damaged`)).toEqual(bytes);
    expect(statSync(path).size).toBe(4 * record);
    const more = cacheKey(identity, 'embedding', 'more');
    r.putEmbeddings([{ key: more, vector: new Float32Array([9, 9, 9]) }]);
    r.close();
    const again = ResponseCache.open(dir);
    expect(again.loadReport.skippedRecords).toBe(0);
    expect(again.embeddingCount).toBe(5);
    expect(Array.from(again.getEmbedding(more)!)).toEqual([9, 9, 9]);
    expect(Array.from(again.getEmbedding(keys[4]!)!)).toEqual([4, 4.5, -4]);
    again.close();
    // The first record damaged, with no length known yet: what cannot be read is cut, and
    // the file as it was is kept beside it.
    const damaged = readFileSync(path);
    damaged.writeUInt32LE(0, 32);
    writeFileSync(path, damaged);
    const cut = ResponseCache.open(dir);
    expect(cut.embeddingCount).toBe(0);
    expect(cut.loadReport.damagedEmbeddingBytes).toBe(damaged.length);
    expect(readFileSync(`${path}.damaged`)).toEqual(damaged);
    cut.close();
  });

  it('a torn last record after records of two lengths is a torn record, not damage', () => {
    const c = ResponseCache.open(dir);
    const short = [0, 1, 2].map((i) => cacheKey(identity, 'embedding', `s${i}`));
    const long = [0, 1].map((i) => cacheKey(identity, 'embedding', `l${i}`));
    c.putEmbeddings(short.map((key) => ({ key, vector: new Float32Array(24).fill(1) })));
    c.putEmbeddings(long.map((key) => ({ key, vector: new Float32Array(64).fill(2) })));
    c.close();
    const path = join(dir, EMBEDDINGS_FILE);
    const whole = statSync(path).size;
    // A kill in the middle of a third long record: its header and 200 of its 256 bytes.
    const torn = Buffer.alloc(36 + 200);
    cacheKey(identity, 'embedding', 'l2').copy(torn);
    torn.writeUInt32LE(64, 32);
    appendFileSync(path, torn);
    const r = ResponseCache.open(dir);
    expect(r.loadReport).toMatchObject({ skippedRecords: 0, damagedEmbeddingBytes: 0 });
    expect(r.loadReport.truncatedBytes.embeddings).toBe(236);
    expect(r.embeddingCount).toBe(5);
    expect(statSync(path).size).toBe(whole);
    r.close();
  });

  it('a line that is not UTF-8 is skipped, and a stored vector with a NaN is a miss', () => {
    const c = ResponseCache.open(dir);
    const k1 = cacheKey(identity, 'structured', 'a');
    const k2 = cacheKey(identity, 'embedding', 'b');
    c.putReply(k1, { provider: 'openai', model: 'm', kind: 'structured' }, { text: 'fake reply' });
    c.putEmbeddings([{ key: k2, vector: new Float32Array([0.5, -1.25, 3]) }]);
    c.close();
    // One byte of each file damaged: inside the reply text, and the second float.
    const replies = readFileSync(join(dir, REPLIES_FILE));
    replies[replies.indexOf('fake')] = 0xff;
    writeFileSync(join(dir, REPLIES_FILE), replies);
    const bin = readFileSync(join(dir, EMBEDDINGS_FILE));
    bin.writeFloatLE(Number.NaN, 36 + 4);
    writeFileSync(join(dir, EMBEDDINGS_FILE), bin);
    const r = ResponseCache.open(dir);
    expect(r.getReply(k1)).toBeUndefined();
    expect(r.loadReport.skippedLines).toBe(1);
    expect(r.getEmbedding(k2)).toBeUndefined();
    r.close();
  });

  it('skips a damaged complete line without losing the others', () => {
    writeFileSync(join(dir, REPLIES_FILE), 'not json\n');
    const c = ResponseCache.open(dir);
    expect(c.loadReport.skippedLines).toBe(1);
    c.close();
  });
});

describe('CachedProvider deadline', () => {
  it('a reply and its repair share the deadline: the repair gets what is left when it is sent', async () => {
    const wait = (ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, ms);
        signal.addEventListener('abort', () => {
          clearTimeout(t);
          reject(signal.reason);
        });
      });
    const adapter = {
      identity: { provider: 'openai', baseUrl: null, model: 'm', params: {} },
      // Two requests of 250 ms each (a reply, then its repair) under a 400 ms deadline.
      structured: async (_r: unknown, _s: unknown, _v: unknown, o: { eachRequest: EachRequestFn }) => {
        await o.eachRequest((signal) => wait(250, signal));
        await o.eachRequest((signal) => wait(250, signal));
        return { elements: [] };
      },
    };
    const p = new CachedProvider({
      // biome-ignore lint/suspicious/noExplicitAny: only structured is called
      adapter: adapter as any,
      section: 'model_config',
      retry: { ...SEARCH_RETRY_POLICY, maxAttempts: 1, deadlineMs: 400 },
      cache: undefined,
      timeouts: { chatMs: 10_000, embedMs: 10_000 },
      tokenCounter: { countTokens: (t) => t.length },
    });
    const req = buildRequest({ task: 'query', language: 'English', input: { question: 'Who?' } });
    const t0 = performance.now();
    await expect(p.structured(req, TASK_SCHEMAS.query, TASK_VALIDATORS.query)).rejects.toThrow();
    expect(performance.now() - t0).toBeLessThan(480);
  });
});

describe('CachedProvider with a cache', () => {
  it('never caches the local provider', async () => {
    const cache = ResponseCache.open(dir);
    const p = new CachedProvider({
      adapter: new LocalProvider({ dim: 8 }),
      section: 'model_config',
      retry: BUILD_RETRY_POLICY,
      cache,
      timeouts: { chatMs: 1000, embedMs: 1000 },
      tokenCounter: { countTokens: (s) => s.length },
    });
    const req = buildRequest({
      task: 'query',
      language: 'English',
      input: { question: 'Who is Marie Curie?' },
    });
    const r = await p.structured(req, TASK_SCHEMAS.query, TASK_VALIDATORS.query);
    expect(r.elements).toEqual(['Marie Curie']);
    await p.embed(['a b c']);
    expect(cache.replyCount).toBe(0);
    expect(cache.embeddingCount).toBe(0);
    cache.close();
  });
});

describe('CachedProvider: cached vectors of another length', () => {
  it('are asked for again, not returned, when config.dim changed behind the same model name', async () => {
    let cache = ResponseCache.open(dir);
    let requests = 0;
    /** An embedding server whose model gives vectors of `dim` values. */
    const provider = (dim: number) =>
      new CachedProvider({
        adapter: {
          identity: { provider: 'openai', baseUrl: 'http://127.0.0.1:1/v1', model: 'nomic', params: {} },
          chat: async () => '',
          chatStream: async function* () {},
          structured: async () => {
            throw new Error('not used');
          },
          embed: async (texts: readonly string[]) => {
            requests++;
            return { dim, vectors: new Float32Array(texts.length * dim).fill(0.5) };
          },
        } as never,
        section: 'embedding_config',
        retry: BUILD_RETRY_POLICY,
        cache,
        timeouts: { chatMs: 1000, embedMs: 1000 },
        tokenCounter: { countTokens: (s) => s.length },
        expectedDim: dim,
      });
    expect((await provider(4).embed(['a', 'b'])).dim).toBe(4);
    expect((await provider(4).embed(['a', 'b'])).dim).toBe(4);
    expect(requests).toBe(1); // the second time from the cache
    const now = await provider(8).embed(['a', 'b']);
    expect(now.dim).toBe(8);
    expect(now.vectors.length).toBe(16);
    expect(requests).toBe(2);
    // The new reply replaces the old one in the cache: asked once, not on every build.
    expect((await provider(8).embed(['a', 'b'])).dim).toBe(8);
    expect(requests).toBe(2);
    // And so after reopening (the next build's process).
    cache.close();
    cache = ResponseCache.open(dir);
    expect((await provider(8).embed(['a', 'b'])).dim).toBe(8);
    expect(requests).toBe(2);
    cache.close();
  });
});

describe('capTokens', () => {
  // A stand-in counter: one token per character (the real one is o200k_base from ts/text).
  const perChar = { countTokens: (s: string) => [...s].length };
  it('keeps short texts whole and cuts long ones to the largest prefix that fits', () => {
    expect(capTokens('short', 8000, perChar)).toBe('short');
    const long = 'x'.repeat(9000);
    expect(capTokens(long, 8000, perChar)).toHaveLength(8000);
  });
  it('uses the own truncation of the counter when it has one', () => {
    const calls: number[] = [];
    const exact = {
      countTokens: () => {
        throw new Error('not needed');
      },
      truncateToTokens: (s: string, n: number) => {
        calls.push(n);
        return s.slice(0, n);
      },
    };
    expect(capTokens('y'.repeat(9000), 8000, exact)).toHaveLength(8000);
    expect(capTokens('short', 8000, exact)).toBe('short');
    expect(calls).toEqual([8000]);
  });
  it('never splits a surrogate pair', () => {
    const s = '😀'.repeat(10); // 2 UTF-16 units each
    const cut = capTokens(s, 5, { countTokens: (t) => t.length });
    expect(cut).toBe('😀'.repeat(2));
  });
});

describe('CachedProvider: noNewRequests (a build being stopped)', () => {
  const req = buildRequest({ task: 'query', language: 'English', input: { question: 'Who?' } });
  /** An OpenAI-like adapter whose chat requests follow `reply` (called once per request sent). */
  function provider(reply: (n: number, signal: AbortSignal) => Promise<string>, limiter?: RateLimiter) {
    let sent = 0;
    const p = new CachedProvider({
      adapter: {
        identity: { provider: 'openai', baseUrl: null, model: 'm', params: {} },
        chat: (_r: unknown, o: { signal: AbortSignal }) => reply(++sent, o.signal),
      } as never,
      section: 'model_config',
      retry: BUILD_RETRY_POLICY,
      cache: undefined,
      limiter,
      timeouts: { chatMs: 10_000, embedMs: 10_000 },
      tokenCounter: { countTokens: (s) => s.length },
    });
    return { p, sent: () => sent };
  }
  const busy = () => new ProviderError('server busy', { provider: 'openai', status: 503, retryable: true });
  const stopped = () => new Error('stopped');

  it('a call waiting out a retry backoff ends at once with the reason, without another request', async () => {
    const stop = new AbortController();
    const { p, sent } = provider(async () => {
      throw busy();
    });
    const t0 = performance.now();
    const call = p.chat(req, { signal: new AbortController().signal, noNewRequests: stop.signal });
    await new Promise((r) => setTimeout(r, 50)); // the first request failed: in its ~1 s backoff
    stop.abort(stopped());
    await expect(call).rejects.toThrow('stopped');
    expect(performance.now() - t0).toBeLessThan(500);
    expect(sent()).toBe(1);
  });

  it('a request in flight finishes and its reply is returned', async () => {
    const stop = new AbortController();
    const { p, sent } = provider(() => new Promise((r) => setTimeout(() => r('an answer'), 100)));
    const call = p.chat(req, { signal: new AbortController().signal, noNewRequests: stop.signal });
    await new Promise((r) => setTimeout(r, 20));
    stop.abort(stopped());
    expect(await call).toBe('an answer');
    expect(sent()).toBe(1);
  });

  it('a call waiting for a rate-limit permit is not sent', async () => {
    const stop = new AbortController();
    const limiter = new RateLimiter(1);
    const { p, sent } = provider(() => new Promise((r) => setTimeout(() => r('an answer'), 100)), limiter);
    const options = { signal: new AbortController().signal, noNewRequests: stop.signal };
    const first = p.chat(req, options);
    const second = p.chat(
      buildRequest({ task: 'query', language: 'English', input: { question: 'Why?' } }),
      options,
    );
    await new Promise((r) => setTimeout(r, 20));
    expect(limiter.waiting).toBe(1);
    stop.abort(stopped());
    await expect(second).rejects.toThrow('stopped');
    expect(await first).toBe('an answer');
    expect(sent()).toBe(1);
  });

  it('a call answered by the cache combines no signals (Node keeps every combined signal alive)', async () => {
    const cache = ResponseCache.open(dir);
    const p = new CachedProvider({
      adapter: {
        identity: { provider: 'openai', baseUrl: null, model: 'm', params: {} },
        chat: async () => 'an answer',
        embed: async (texts: readonly string[]) => ({
          vectors: new Float32Array(texts.length * 2).fill(1),
          dim: 2,
        }),
      } as never,
      section: 'model_config',
      retry: BUILD_RETRY_POLICY,
      cache,
      timeouts: { chatMs: 10_000, embedMs: 10_000 },
      tokenCounter: { countTokens: (s) => s.length },
    });
    const options = { signal: new AbortController().signal, noNewRequests: new AbortController().signal };
    expect(await p.chat(req, options)).toBe('an answer');
    await p.embed(['a', 'b'], options);
    const any = vi.spyOn(AbortSignal, 'any');
    try {
      for (let i = 0; i < 100; i++) {
        expect(await p.chat(req, options)).toBe('an answer');
        await p.embed(['a', 'b'], options);
      }
      expect(any).not.toHaveBeenCalled();
    } finally {
      any.mockRestore();
      cache.close();
    }
  });

  it('without noNewRequests, the backoff runs its course and the next attempt succeeds', async () => {
    const { p, sent } = provider(async (n) => {
      if (n === 1) throw busy();
      return 'second time';
    });
    expect(await p.chat(req, {})).toBe('second time');
    expect(sent()).toBe(2);
  });
});
