/**
 * Metrics and the access log of the real `noderag search` process (issue 16 item 5) on the
 * hand-built Curie index with the local provider: with `--workers 2` every scrape of
 * GET /metrics shows the sum over both workers (requests, provider calls and tokens by task
 * and provider) and the index generation; the access log marks a repeated question as a
 * retrieval-cache hit.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { curieSpec, writeSearchProject } from '../helpers/search-index.js';
import { envWith, freePort, killAll, type Served, serve, stop, waitFor } from '../helpers/search-server.js';

const KEY = 'metrics-key-0123456789ab';
const auth = { authorization: `Bearer ${KEY}` };
const QUESTIONS = [
  'Where was Marie Curie born?',
  'Who discovered polonium?',
  'What did Marie Curie study in Paris?',
  'Which prizes did Marie Curie win?',
  'Who was Pierre Curie?',
  'What is radium?',
  'When did Marie Curie die?',
  'Where did Marie Curie work?',
];

const dirs: string[] = [];
afterAll(() => {
  killAll();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function project(): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'noderag-metrics-e2e-'));
  dirs.push(root);
  await writeSearchProject(root, curieSpec({ config: { port: await freePort() } }));
  return root;
}

const retrieval = (s: Served, question: string) =>
  fetch(`${s.url}/retrieval`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ question }),
  });

/** The value of one sample line of a Prometheus text (`name{labels} value`), or null. */
function sample(text: string, name: string, labels: Record<string, string>): number | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const ok = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (ok) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return null;
}

describe('metrics over --workers 2', () => {
  let server: Served;
  afterAll(async () => {
    if (server) expect(await stop(server)).toBe(0);
  });

  it('answers every scrape with the sum over the workers, provider calls and the generation', async () => {
    server = await serve(await project(), ['--workers', '2', '--metrics'], envWith({ NODERAG_API_KEY: KEY }));
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    for (const q of QUESTIONS) expect((await retrieval(server, q)).status).toBe(200);
    // Each request reaches one worker (round robin); any worker answers the scrape with the sum.
    for (let i = 0; i < 4; i++) {
      const r = await fetch(`${server.url}/metrics`, { headers: auth });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toContain('text/plain');
      const text = await r.text();
      const labels = { route: '/retrieval', method: 'POST', status: '200' };
      expect(sample(text, 'noderag_http_requests_total', labels)).toBe(QUESTIONS.length);
      expect(sample(text, 'noderag_http_request_duration_seconds_count', labels)).toBe(QUESTIONS.length);
      // Distinct questions: one query and one query embedding each, by the local provider.
      for (const task of ['query', 'embed_query']) {
        expect(sample(text, 'noderag_provider_calls_total', { task, provider: 'local' })).toBe(
          QUESTIONS.length,
        );
      }
      expect(
        sample(text, 'noderag_provider_tokens_total', {
          task: 'query',
          provider: 'local',
          direction: 'input',
        }),
      ).toBeGreaterThan(QUESTIONS.length);
      expect(sample(text, 'noderag_index_generation', {})).toBe(1);
    }
  }, 120_000);
});

describe('access log', () => {
  it('over --workers 2: every request once, whole lines, also when stdout backs up', async () => {
    // Two workers writing to one stdout pipe spliced each other's lines when it backed up
    // (Node joins queued writes into one larger than the pipe writes atomically); their lines
    // now go through the primary, the one writer (ts/cli/search-cluster.ts workerLogSink).
    const server = await serve(
      await project(),
      ['--workers', '2', '--access-log'],
      envWith({ NODERAG_API_KEY: KEY }),
    );
    const asked = 3000;
    // This end reads slowly (a pause after each chunk): the pipe fills and the writers queue.
    const out = server.child.stdout!;
    const slow = () => {
      out.pause();
      setTimeout(() => out.resume(), 200);
    };
    out.on('data', slow);
    try {
      let next = 0;
      const statuses: number[] = [];
      const client = async () => {
        while (next < asked) {
          const i = next++;
          const r = await retrieval(server, QUESTIONS[i % QUESTIONS.length]!);
          await r.arrayBuffer();
          statuses.push(r.status);
        }
      };
      await Promise.all(Array.from({ length: 40 }, client));
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
    } finally {
      expect(await stop(server)).toBe(0);
      out.off('data', slow);
    }
    const lines = server
      .output()
      .stdout.split('\n')
      .filter((l) => l.includes('"route"'));
    const parsed = lines.map((l) => {
      try {
        return JSON.parse(l) as { id: string; route: string; status: number };
      } catch {
        return { id: '', route: `broken line: ${l.slice(0, 120)}`, status: 0 };
      }
    });
    expect(parsed.filter((l) => l.route.startsWith('broken line')).map((l) => l.route)).toEqual([]);
    const retrievals = parsed.filter((l) => l.route === '/retrieval');
    expect(retrievals).toHaveLength(asked);
    expect(new Set(retrievals.map((l) => l.id)).size).toBe(asked);
  }, 120_000);

  it('marks a repeated question as a retrieval-cache hit', async () => {
    const server = await serve(await project(), ['--access-log'], envWith({ NODERAG_API_KEY: KEY }));
    try {
      for (let i = 0; i < 2; i++) expect((await retrieval(server, QUESTIONS[0]!)).status).toBe(200);
      const retrievalLines = () =>
        server
          .output()
          .stdout.split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { route: string; cache_hit?: boolean; retrieval_tokens?: number })
          .filter((l) => l.route === '/retrieval');
      // Lines are written at the end of the server's turn (ts/server/line-batch.ts), which may
      // be after the reply reached this process.
      await waitFor(async () => retrievalLines().length >= 2, 10_000);
      const retrievals = retrievalLines();
      expect(retrievals.map((l) => l.cache_hit)).toEqual([false, true]);
      expect(retrievals[0]!.retrieval_tokens).toBeGreaterThan(0);
      expect(server.output().stdout).not.toContain(KEY);
    } finally {
      expect(await stop(server)).toBe(0);
    }
  }, 60_000);
});
