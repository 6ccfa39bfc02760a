/**
 * A local model server answers one request at a time (Ollama, llama.cpp, a single-threaded
 * embedding server): requests beyond the first wait in its queue. Here a proxy on 127.0.0.1
 * puts the fake OpenAI-compatible server behind such a queue, through the real `openai` SDK.
 *
 * - With `max_in_flight: 1` the requests wait in our own limiter instead, where the
 *   per-request timeout does not run: 10 requests of 150 ms each finish under a 1 s
 *   `request_timeout` although the last one waits about 1.35 s in all, and the server never
 *   sees more than one at a time.
 * - With 10 in flight and a 0.5 s timeout, the later ones time out in the server's queue.
 * - A build with `max_in_flight: 1` in both sections keeps the server at one request at a time.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NodeConfig } from '../../ts/config/node-config.js';
import { ProviderError } from '../../ts/errors.js';
import { createProviders } from '../../ts/llm/create-providers.js';
import { BUILD_RETRY_POLICY } from '../../ts/llm/retry.js';
import { type FakeOpenAIServer, startFakeOpenAI } from '../helpers/fake-providers/index.js';
import { createProject, type Project } from '../helpers/project.js';

/** Inputs here are far below the 8,000-token cap: a cheap counter keeps the Rust core out. */
const tokenCounter = { countTokens: (s: string) => Buffer.byteLength(s) };
/** One attempt, so a timeout shows as the call's error instead of being retried. */
const ONE_ATTEMPT = { ...BUILD_RETRY_POLICY, maxAttempts: 1 };

/**
 * A queue in front of an upstream server: one request forwarded at a time, in arrival order.
 * Counts the requests open at once (arrived and not yet answered) and skips those whose
 * client gave up while they waited, as llama.cpp and Ollama do.
 */
class SerialServer {
  /** Requests open at once, at most, per route (`embeddings`, `chat`). */
  readonly maxOpen = new Map<string, number>();
  #open = new Map<string, number>();
  #chain: Promise<void> = Promise.resolve();
  #server: Server;
  #url = '';

  constructor(private readonly upstream: string) {
    this.#server = createServer((req, res) => this.#accept(req, res));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.#url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  get baseUrl(): string {
    return `${this.#url}/v1`;
  }

  /** Most requests of any route open at once. */
  get peak(): number {
    return Math.max(0, ...this.maxOpen.values());
  }

  reset(): void {
    this.maxOpen.clear();
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(req: IncomingMessage, res: ServerResponse): void {
    const route = req.url?.endsWith('/embeddings') ? 'embeddings' : 'chat';
    const open = (this.#open.get(route) ?? 0) + 1;
    this.#open.set(route, open);
    this.maxOpen.set(route, Math.max(this.maxOpen.get(route) ?? 0, open));
    let gone = false;
    res.on('close', () => {
      gone = !res.writableFinished;
      this.#open.set(route, (this.#open.get(route) ?? 1) - 1);
    });
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      this.#chain = this.#chain.then(() => (gone ? undefined : this.#forward(req, Buffer.concat(body), res)));
    });
  }

  #forward(req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> {
    return new Promise<void>((resolve) => {
      const up = request(
        `${this.upstream}${req.url}`,
        { method: req.method, headers: { ...req.headers, host: new URL(this.upstream).host } },
        (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => {
            if (!res.destroyed) {
              res.writeHead(r.statusCode ?? 502, { 'content-type': 'application/json' });
              res.end(Buffer.concat(chunks));
            }
            resolve();
          });
        },
      );
      up.on('error', () => {
        if (!res.destroyed) res.destroy();
        resolve();
      });
      up.end(body);
    });
  }
}

let upstream: FakeOpenAIServer;
let serial: SerialServer;
let dir: string;
const projects: Project[] = [];

beforeAll(async () => {
  upstream = await startFakeOpenAI({ latencyMs: 150 });
  serial = await new SerialServer(upstream.origin).start();
});
afterAll(async () => {
  await serial.close();
  await upstream.close();
  for (const p of projects) await p.remove();
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'noderag-local-server-'));
  serial.reset();
  upstream.reset();
  upstream.options.latencyMs = 150;
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function configWith(section: Record<string, unknown>): NodeConfig {
  const common = { service_provider: 'openai', base_url: serial.baseUrl, ...section };
  return NodeConfig.fromData({ model_config: common, embedding_config: common, config: { dim: 32 } }, dir, {
    env: {},
  });
}

/** Ten embedding calls at once; each call's outcome and its duration as the caller sees it. */
async function tenEmbeddings(section: Record<string, unknown>) {
  const p = createProviders(configWith(section), {
    mode: 'build',
    cacheDir: null,
    tokenCounter,
    retry: ONE_ATTEMPT,
  });
  const t0 = performance.now();
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      p.embedDocuments([`text number ${i}`]).then(
        () => ({ ok: true as const, ms: performance.now() - t0 }),
        (error: unknown) => ({ ok: false as const, ms: performance.now() - t0, error }),
      ),
    ),
  );
  const stats = p.stats().embedding;
  p.close();
  return { results, stats };
}

describe('a server that answers one request at a time (150 ms each)', () => {
  it('max_in_flight 1, request_timeout 1 s: all 10 finish, none times out, the server sees one at a time', async () => {
    const { results, stats } = await tenEmbeddings({
      rate_limit: 1000,
      max_in_flight: 1,
      request_timeout: 1,
    });
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(serial.maxOpen.get('embeddings')).toBe(1);
    expect(stats).toMatchObject({ requests: 10, retries: 0, embeddedTexts: 10 });
    // The last one waited in our queue for longer than its timeout: that wait is not timed.
    expect(Math.max(...results.map((r) => r.ms))).toBeGreaterThan(1300);
  });

  it('max_in_flight 10, request_timeout 0.5 s: the later ones time out in the server queue', async () => {
    const { results } = await tenEmbeddings({ rate_limit: 1000, max_in_flight: 10, request_timeout: 0.5 });
    expect(serial.maxOpen.get('embeddings')).toBe(10);
    const failed = results.filter((r) => !r.ok);
    expect(failed.length).toBeGreaterThanOrEqual(5);
    for (const f of failed) {
      expect(f.error).toBeInstanceOf(ProviderError);
      expect((f.error as ProviderError).code).toBe('upstream_timeout');
      expect((f.error as ProviderError).retryable).toBe(true);
    }
    // The first ones were answered before their 0.5 s ran out.
    expect(results[0]?.ok).toBe(true);
  });

  it("max_in_flight null keeps today's cap, rate_limit (here 10)", async () => {
    const { results } = await tenEmbeddings({ rate_limit: 10, request_timeout: 5 });
    expect(results.every((r) => r.ok)).toBe(true);
    expect(serial.maxOpen.get('embeddings')).toBeGreaterThan(1);
  });

  it('model_config.max_in_flight caps chat calls on their own (2 at a time)', async () => {
    upstream.options.latencyMs = 50;
    const p = createProviders(configWith({ rate_limit: 1000, max_in_flight: 2, request_timeout: 5 }), {
      mode: 'search',
      tokenCounter,
    });
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => p.run('query', { question: `Who is number ${i}?` })),
    );
    p.close();
    expect(serial.maxOpen.get('chat')).toBe(2);
  });
});

describe('a build against it', () => {
  it('with max_in_flight 1 in both sections keeps the server at one request at a time', async () => {
    upstream.options.latencyMs = 5;
    const p = await createProject({
      files: {
        'a.md':
          'Marie Curie was born in Warsaw. She moved to Paris in 1891 and discovered radium with Pierre Curie.',
        'b.md': 'Lise Meitner worked in Berlin with Otto Hahn. She explained nuclear fission in 1939.',
      },
      provider: { openaiBaseUrl: serial.baseUrl },
      model: { max_in_flight: 1, request_timeout: 30 },
      embedding: { max_in_flight: 1, request_timeout: 30 },
    });
    projects.push(p);
    const r = await p.build();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(upstream.count('chat')).toBeGreaterThan(2);
    expect(upstream.count('embeddings')).toBeGreaterThan(0);
    expect(serial.maxOpen.get('chat')).toBe(1);
    expect(serial.maxOpen.get('embeddings')).toBe(1);
  });
});
