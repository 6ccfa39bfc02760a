/**
 * Resume and incremental builds through the real OpenAI SDK against the fake
 * OpenAI-compatible server (tests/helpers/fake-providers), with the CLI spawned:
 *
 * - a build killed with SIGKILL after each stage's commit, inside a commit (roll forward and
 *   roll back), and in the middle of decomposition, then re-run, ends with the same node and
 *   edge sets as an uninterrupted build, and no request answered before the kill is sent
 *   again (the response cache serves it);
 * - a file added later sends only its own chunks for decomposition.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../ts/llm/types.js';
import { STAGES } from '../../ts/project/state.js';
import {
  type FakeOpenAIServer,
  type LoggedRequest,
  recognizePrompt,
  startFakeOpenAI,
} from '../helpers/fake-providers/index.js';
import {
  createProject,
  duckdbQuery,
  indexFingerprints,
  LAYOUT_FILES,
  type Project,
  REPO_ROOT,
} from '../helpers/project.js';

const EXAMPLE = join(REPO_ROOT, 'examples', 'observatory', 'input');
const NAMES = readdirSync(EXAMPLE).sort();
const CORPUS: Record<string, string> = Object.fromEntries(
  NAMES.slice(0, 5).map((f) => [f, readFileSync(join(EXAMPLE, f), 'utf8')]),
);
const EXTRA = NAMES[5]!;

let server: FakeOpenAIServer;
const projects: Project[] = [];

beforeAll(async () => {
  server = await startFakeOpenAI();
});

afterAll(async () => {
  await server.close();
  for (const p of projects) await p.remove();
});

async function project(
  files: Record<string, string> = CORPUS,
  model: Record<string, unknown> = {},
): Promise<Project> {
  const p = await createProject({ files, provider: { openaiBaseUrl: server.baseUrl }, model });
  projects.push(p);
  return p;
}

/** Sorted node ids and edge pairs, read through DuckDB. */
async function graphOf(p: Project): Promise<{ nodes: string[]; edges: string[] }> {
  const nodes = await duckdbQuery(
    `SELECT id || ' ' || type || ' ' || weight AS k FROM read_parquet('${p.path('cache/graph_nodes.parquet')}') ORDER BY id`,
  );
  const edges = await duckdbQuery(
    `SELECT source || ' ' || target || ' ' || weight AS k FROM read_parquet('${p.path('cache/graph_edges.parquet')}') ORDER BY source, target`,
  );
  return { nodes: nodes.map((r) => r.k as string), edges: edges.map((r) => r.k as string) };
}

const fingerprints = indexFingerprints;

/** A request's identity: its route and body (what a provider would bill twice). */
function requestKey(r: LoggedRequest): string {
  return `${r.route} ${JSON.stringify(r.body)}`;
}

function duplicates(keys: string[]): string[] {
  const seen = new Set<string>();
  const dup: string[] = [];
  for (const k of keys) {
    if (seen.has(k)) dup.push(k);
    seen.add(k);
  }
  return dup;
}

function decomposeTexts(requests: LoggedRequest[]): string[] {
  const out: string[] = [];
  for (const r of requests) {
    if (r.route !== 'chat') continue;
    const call = recognizePrompt(((r.body as { messages?: ChatMessage[] }).messages ?? []) as ChatMessage[]);
    if (call?.task === 'decompose') out.push(call.input.text);
  }
  return out;
}

let reference: { nodes: string[]; edges: string[] };
let referenceRequests: string[];
let referenceFiles: Record<string, string>;

describe('build through an OpenAI-compatible server', () => {
  // The uninterrupted build every resumed one is compared with (built once, on first use).
  let referenceBuild: Promise<Project> | undefined;
  async function buildReference(): Promise<Project> {
    referenceBuild ??= (async () => {
      const p = await project();
      server.reset();
      const r = await p.build();
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      reference = await graphOf(p);
      referenceFiles = await fingerprints(p);
      referenceRequests = server.requests.map(requestKey).sort();
      return p;
    })();
    return referenceBuild;
  }

  it('builds every file of the layout; the cache serves a repeated build', async () => {
    const p = await buildReference();
    for (const f of LAYOUT_FILES) expect(p.exists(f), f).toBe(true);
    expect(p.exists('cache/response_cache/llm.jsonl')).toBe(true);
    expect(p.exists('cache/response_cache/embeddings.bin')).toBe(true);
    expect(duplicates(referenceRequests)).toEqual([]);
    expect(referenceRequests.filter((k) => k.startsWith('chat ')).length).toBeGreaterThanOrEqual(5);
    expect(referenceRequests.filter((k) => k.startsWith('embeddings ')).length).toBeGreaterThan(0);

    // A re-run of a finished build sends nothing.
    server.reset();
    expect((await p.build()).code).toBe(0);
    expect(server.count()).toBe(0);
  });

  const crashPoints = [
    ...STAGES,
    'Graph pipeline:manifest-written', // crash inside a commit after its commit point: rolled forward
    'Summary pipeline:files-synced', // crash inside a commit before its commit point: rolled back
  ];
  for (const point of crashPoints) {
    it(`resumes after kill -9 at ${point} with the same graph and no repeated request`, async () => {
      await buildReference();
      const p = await project();
      server.reset();
      const killed = await p.buildWithHooks({ crashAt: point });
      expect(killed.signal).toBe('SIGKILL');
      const resumed = await p.build();
      expect(resumed.stderr).toBe('');
      expect(resumed.code).toBe(0);
      expect(await graphOf(p)).toEqual(reference);
      expect(await fingerprints(p)).toEqual(referenceFiles);
      const keys = server.requests.map(requestKey);
      expect(duplicates(keys)).toEqual([]);
      expect(keys.sort()).toEqual(referenceRequests);
    });
  }

  it('resumes after kill -9 in the middle of decomposition without repeating an answered request', async () => {
    await buildReference();
    const p = await project(CORPUS, { rate_limit: 1 });
    server.reset();
    server.options.latencyMs = 100;
    const llmCache = p.path('cache', 'response_cache', 'llm.jsonl');
    const cachedReplies = async () =>
      (await readFile(llmCache, 'utf8').catch(() => '')).split('\n').filter((l) => l.trim() !== '').length;
    let answeredBeforeKill: string[] = [];
    const killed = await p.build([], {
      onSpawn: (child) => {
        void (async () => {
          // Wait for two decompositions in the cache, then hold every later request.
          while ((await cachedReplies()) < 2) await new Promise((r) => setTimeout(r, 20));
          server.options.latencyMs = 3_000;
          const switchedAt = performance.now();
          const answered = server.requests.filter((r) => r.at < switchedAt);
          // Requests that arrived before the switch are answered: wait until all are cached.
          while ((await cachedReplies()) < answered.length) await new Promise((r) => setTimeout(r, 20));
          answeredBeforeKill = answered.map(requestKey);
          child.kill('SIGKILL');
        })();
      },
    });
    expect(killed.signal).toBe('SIGKILL');
    expect(answeredBeforeKill.length).toBeGreaterThanOrEqual(2);
    const state = await p.readJson<Record<string, unknown>>('info/state.json');
    expect(state.current_state).toBe('Text pipeline');

    server.options.latencyMs = 0;
    // rate_limit is not part of a request's identity: resume at full speed.
    await p.writeConfig({ model: {} });
    const firstRun = server.requests.length;
    const resumed = await p.build();
    expect(resumed.code).toBe(0);
    expect(await graphOf(p)).toEqual(reference);
    // The decompositions cached before the kill were served by the response cache.
    expect(decomposeTexts(server.requests.slice(firstRun)).length).toBeLessThanOrEqual(5 - 2);
    const again = new Set(server.requests.slice(firstRun).map(requestKey));
    expect(answeredBeforeKill.filter((k) => again.has(k))).toEqual([]);
  });

  it('sends only the chunks of a file added later for decomposition', async () => {
    const p = await project();
    expect((await p.build()).code).toBe(0);
    const stored = async (file: string) =>
      (await duckdbQuery(`SELECT context FROM read_parquet('${p.path('cache', file)}')`)).map(
        (r) => r.context as string,
      );
    const oldVectors = new Set([
      ...(await stored('text.parquet')),
      ...(await stored('semantic_units.parquet')),
    ]);
    const extra = readFileSync(join(EXAMPLE, EXTRA), 'utf8');
    await p.writeInput(EXTRA, extra);
    server.reset();
    const r = await p.build();
    expect(r.code).toBe(0);
    const texts = decomposeTexts(server.requests);
    expect(texts.length).toBeGreaterThan(0);
    for (const t of texts) expect(extra).toContain(t);
    // Embeddings: no stored chunk or unit is embedded again.
    const embedded = server.requests
      .filter((q) => q.route === 'embeddings')
      .flatMap((q) => {
        const input = (q.body as { input: string | string[] }).input;
        return typeof input === 'string' ? [input] : input;
      });
    expect(embedded.length).toBeGreaterThan(0);
    expect(embedded.filter((t) => oldVectors.has(t))).toEqual([]);
  });

  /** A build sent `signal` once its first model reply is cached: it stops in the Text pipeline. */
  async function interruptedBuild(signal: NodeJS.Signals): Promise<Project> {
    const p = await project(CORPUS, { rate_limit: 1.99 });
    server.reset();
    server.options.latencyMs = 300;
    const llmCache = p.path('cache', 'response_cache', 'llm.jsonl');
    const r = await p.build([], {
      onSpawn: (child) => {
        void (async () => {
          while (!(await readFile(llmCache, 'utf8').catch(() => '')).includes('\n'))
            await new Promise((res) => setTimeout(res, 20));
          child.kill(signal);
        })();
      },
    });
    server.options.latencyMs = 0;
    expect(r.signal).toBeNull();
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('Text pipeline interrupted; state saved. Run the build again to resume.');
    expect(await p.readJson('info/state.json')).toMatchObject({
      current_state: 'Text pipeline',
      error_type: 'INTERRUPTED',
      error_message: `interrupted by ${signal}`,
    });
    expect(await p.readText('info/info.log')).toContain(`${signal} received`);
    expect(existsSync(p.path('info', 'build.lock'))).toBe(false);
    return p;
  }

  it('on SIGINT sends no request waiting out a retry backoff and does not wait for it', async () => {
    const p = await project();
    server.reset();
    // Every decomposition fails with a retryable 503 asking for a 3 s wait: the stop comes
    // while the calls wait, which would send their next attempt within the 10 s grace.
    server.inject({
      route: 'chat',
      times: 1_000_000,
      fault: { kind: 'status', status: 503, retryAfter: '3' },
    });
    let killedAt = 0;
    try {
      const r = await p.build([], {
        onSpawn: (child) => {
          void (async () => {
            while (!server.requests.some((q) => q.route === 'chat'))
              await new Promise((res) => setTimeout(res, 20));
            await new Promise((res) => setTimeout(res, 300)); // the replies are in: backoff
            killedAt = performance.now();
            child.kill('SIGINT');
          })();
        },
      });
      const stoppedAfterMs = performance.now() - killedAt;
      expect(r.code).toBe(130);
      expect(r.stderr).toContain('Text pipeline interrupted; state saved.');
      expect(server.requests.filter((q) => q.route === 'chat' && q.at > killedAt)).toEqual([]);
      // The old code waited out the 10 s grace (and sent the retries meanwhile).
      expect(stoppedAfterMs).toBeLessThan(6000);
    } finally {
      server.clearFaults();
    }
  });

  it('on SIGHUP (its terminal closed) stops the same way instead of dying with its lock held', async () => {
    await interruptedBuild('SIGHUP');
  });

  it('on SIGINT lets requests in flight finish, saves INTERRUPTED, exits 130 and resumes without repeats', async () => {
    await buildReference();
    const p = await interruptedBuild('SIGINT');

    await p.writeConfig({ model: {} });
    const resumed = await p.build();
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('resumes here: interrupted by SIGINT');
    expect(await graphOf(p)).toEqual(reference);
    expect(await fingerprints(p)).toEqual(referenceFiles);
    // Every request of the interrupted run was answered and cached: nothing is sent twice.
    expect(duplicates(server.requests.map(requestKey))).toEqual([]);
  });

  const fastRetry = { fastRetry: true };
  it('fails the Text pipeline naming the chunk that failed after six attempts; the re-run asks only for it', async () => {
    await buildReference();
    const p = await project(CORPUS, { rate_limit: 1.99 });
    server.reset();
    server.inject({ route: 'chat', times: 6, fault: { kind: 'status', status: 500 } });
    const r = await p.buildWithHooks(fastRetry);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /decomposition failed for 1 chunk\(s\) \(text_id 1\); first error: .*gave up after 6 attempts/,
    );
    expect(r.stderr).toContain('State saved; run the build again to resume.');
    // The retries show on the terminal as they happen (the first of the burst only; info.log
    // has every attempt).
    expect(r.stdout.match(/ {2}warning: .*attempt 1 failed \(.*500.*\); retrying in /g)).toHaveLength(1);
    expect((await p.readText('info/info.log')).match(/retrying in/g)!.length).toBeGreaterThanOrEqual(5);
    expect(await p.readJson('info/state.json')).toMatchObject({
      current_state: 'Text pipeline',
      error_type: 'ERROR',
    });
    expect(server.count('chat')).toBe(6 + 4);

    await p.writeConfig({ model: {} });
    server.reset();
    const again = await p.buildWithHooks(fastRetry);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('[failed]');
    expect(decomposeTexts(server.requests)).toHaveLength(1);
    expect(await graphOf(p)).toEqual(reference);
    expect(await fingerprints(p)).toEqual(referenceFiles);
  });

  it('--allow-failures goes on without the failed chunk and lists it in info.log', async () => {
    const p = await project(CORPUS, { rate_limit: 1.99 });
    server.reset();
    server.inject({ route: 'chat', times: 6, fault: { kind: 'status', status: 500 } });
    const r = await p.buildWithHooks(fastRetry, ['--allow-failures']);
    expect(r.code).toBe(0);
    const log = await p.readText('info/info.log');
    expect(log).toMatch(/WARN --allow-failures: 1 chunk\(s\) failed and contribute nothing \(text_id 1\)/);
    const records = (await p.readText('cache/text_decomposition.jsonl'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: string; text_id: number; error: string | null });
    expect(records.map((x) => x.status)).toEqual(['failed', 'ok', 'ok', 'ok', 'ok']);
    expect(records[0]!.error).toContain('500');
  });
});
