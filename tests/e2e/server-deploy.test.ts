/**
 * The deployable server (issue 16) against the real `noderag search` process on 127.0.0.1,
 * on the hand-built Curie index with the local provider: sources and citations in the
 * replies, the API key (NODERAG_API_KEY and --api-key), the refusal to expose a host without
 * a key, and the terminal client sending the key. Each server is stopped by its own PID.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curieSpec, writeSearchProject } from '../helpers/search-index.js';
import { envWith, freePort, killAll, type Served, serve, stop, waitFor } from '../helpers/search-server.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(REPO, 'ts', 'cli', 'main.ts');
const KEY = 'test-key-0123456789abcdef';
const QUESTION = 'Where was Marie Curie born?';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: NodeJS.ProcessEnv = envWith()): Promise<Result> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: REPO, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

const dirs: string[] = [];
afterAll(() => {
  killAll();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function project(port: number): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'noderag-deploy-e2e-'));
  dirs.push(root);
  await writeSearchProject(root, curieSpec({ config: { port } }));
  return root;
}

interface AnswerReply {
  answer: string;
  sources: { document: string; chunks: string[]; items: number[]; cited: number[] }[];
  citations: { n: number; id: string; document: string | null }[];
}

describe('a server with an API key (NODERAG_API_KEY), sources in every reply', () => {
  let root: string;
  let server: Served;
  const post = (path: string, body: unknown, key?: string) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    const port = await freePort();
    root = await project(port);
    server = await serve(root, [], envWith({ NODERAG_API_KEY: KEY }));
  });
  afterAll(async () => {
    if (server) expect(await stop(server)).toBe(0);
  });

  it('says a key is required, never prints it; /health stays open', async () => {
    expect(server.output().stdout).toContain('API key required');
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { index: string }).index).toBe('ready');
  });

  it('401 JSON without the right key', async () => {
    for (const key of [undefined, `${KEY}x`, 'wrong-key-0123456789']) {
      const res = await post('/answer', { question: QUESTION }, key);
      expect(res.status).toBe(401);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('unauthorized');
    }
    const out = server.output();
    expect(out.stdout + out.stderr).not.toContain(KEY);
  });

  it('/answer: the answer cites [n], the numbers map back to input files and chunks', async () => {
    const res = await post('/answer', { question: QUESTION }, KEY);
    expect(res.status).toBe(200);
    const r = (await res.json()) as AnswerReply;
    const used = [...r.answer.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
    expect(used.length).toBeGreaterThan(0);
    expect(r.citations.map((c) => c.n)).toEqual([...new Set(used)].sort((a, b) => a - b));
    // Each citation with a document is listed under that document's source as cited.
    for (const c of r.citations) {
      if (c.document === null) continue;
      const source = r.sources.find((s) => s.document === c.document);
      expect(source?.cited).toContain(c.n);
    }
    // The birth is in a.txt (chunk t-a), and the answer cites it.
    const a = r.sources.find((s) => s.document === 'a.txt');
    expect(a?.chunks).toContain('t-a');
    expect(a?.cited.length).toBeGreaterThan(0);
    expect(r.sources.every((s) => s.items.length > 0 && s.cited.every((n) => s.items.includes(n)))).toBe(
      true,
    );
  });

  it('/retrieval and /answer_retrieval carry sources too', async () => {
    const r = (await (await post('/retrieval', { question: QUESTION }, KEY)).json()) as {
      retrieval: string;
      sources: AnswerReply['sources'];
    };
    expect(r.retrieval).toContain('Marie Curie was born in Warsaw');
    expect(r.sources.map((s) => s.document)).toContain('a.txt');
    expect(r.sources.every((s) => s.cited.length === 0)).toBe(true);
    const both = (await (
      await post('/answer_retrieval', { question: QUESTION }, KEY)
    ).json()) as AnswerReply & {
      retrieval: string;
    };
    expect(both.retrieval).toBe(r.retrieval);
    expect(both.citations.length).toBeGreaterThan(0);
  });

  it('the openai SDK: the index as a model, a chat completion with cited sources', async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual([basename(root)]);
    const completion = await client.chat.completions.create({
      model: basename(root),
      messages: [
        { role: 'user', content: 'Who is Marie Curie?' },
        { role: 'assistant', content: 'A physicist.' },
        { role: 'user', content: QUESTION },
      ],
    });
    const text = completion.choices[0]?.message.content ?? '';
    expect(text).toMatch(/Marie Curie was born in Warsaw in 1867\. \[\d+\]/);
    expect(text).toMatch(/\n\nSources:\n(\[\d+\] .+\n?)+$/);
    const { sources, citations } = completion as unknown as AnswerReply;
    expect(sources.find((x) => x.document === 'a.txt')?.cited.length).toBeGreaterThan(0);
    // Every cited number is in the text's source list, named by its file.
    for (const c of citations) expect(text).toContain(`[${c.n}] ${c.document ?? '('}`);
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
    const anonymous = new OpenAI({
      baseURL: `${server.url}/v1`,
      apiKey: 'not-the-key-0123456789',
      maxRetries: 0,
    });
    await expect(anonymous.models.list()).rejects.toMatchObject({ status: 401 });
  });

  it('the openai SDK streams a reply and reads its sources from the last chunk', async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: basename(root),
      messages: [{ role: 'user', content: QUESTION }],
      stream: true,
    });
    let text = '';
    let pieces = 0;
    let sources: AnswerReply['sources'] | undefined;
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta.content;
      if (piece) {
        text += piece;
        pieces++;
      }
      if (chunk.choices[0]?.finish_reason === 'stop') sources = (chunk as unknown as AnswerReply).sources;
    }
    expect(pieces).toBeGreaterThan(5);
    expect(text).toMatch(/^Based on the retrieved context:\n- .*Warsaw.*\[\d+\]/);
    expect(text).toContain('\n\nSources:\n');
    expect(sources?.find((x) => x.document === 'a.txt')?.cited.length).toBeGreaterThan(0);
    // The same answer as without streaming.
    const whole = await client.chat.completions.create({
      model: basename(root),
      messages: [{ role: 'user', content: QUESTION }],
    });
    expect(text).toBe(whole.choices[0]?.message.content);
  });

  it('/answer with "stream": true: server-sent events, then the done event with sources', async () => {
    const res = await post('/answer', { question: QUESTION, stream: true }, KEY);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = (await res.text())
      .trim()
      .split('\n\n')
      .map(
        (b) => JSON.parse(b.replace(/^data: /, '')) as { type: string; text?: string } & Partial<AnswerReply>,
      );
    const done = events.pop()!;
    expect(done.type).toBe('done');
    expect(events.every((e) => e.type === 'delta')).toBe(true);
    expect(events.map((e) => e.text).join('')).toBe(done.answer);
    const plain = (await (await post('/answer', { question: QUESTION }, KEY)).json()) as AnswerReply;
    expect(done.answer).toBe(plain.answer);
    expect(done.sources).toEqual(plain.sources);
  });

  it('the terminal client sends NODERAG_API_KEY; without it, a clear 401 message', async () => {
    const ok = await runCli(['-f', root, '-q', QUESTION], envWith({ NODERAG_API_KEY: KEY }));
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/Marie Curie was born in Warsaw.*\[\d+\]/);
    const refused = await runCli(['-f', root, '-q', QUESTION]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('unauthorized');
    expect(refused.stderr).toContain('NODERAG_API_KEY');
  });
});

describe('refusals before listening', () => {
  it('a non-loopback host without a key is refused unless --insecure; bad keys and origins too', async () => {
    const port = await freePort();
    const root = await project(port);
    const exposed = await runCli(['search', '-f', root, '--host', '0.0.0.0']);
    expect(exposed.code).toBe(2);
    expect(exposed.stderr).toContain('Refusing to listen on 0.0.0.0');
    expect(exposed.stderr).toContain('--insecure');
    expect(exposed.stdout).not.toContain('listening on');
    const short = await runCli(['search', '-f', root, '--api-key', 'short']);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('--api-key: the key must be at least 16 characters');
    expect(short.stderr).not.toContain('short"');
    const envShort = await runCli(['search', '-f', root], envWith({ NODERAG_API_KEY: 'tiny' }));
    expect(envShort.code).toBe(2);
    expect(envShort.stderr).toContain('NODERAG_API_KEY: the key must be at least 16 characters');
    const cors = await runCli(['search', '-f', root, '--cors', 'https://app.example.com/path']);
    expect(cors.code).toBe(2);
    expect(cors.stderr).toContain('--cors: expected an origin');
  });

  it('--host 0.0.0.0 with --api-key listens and asks for the key', async () => {
    const port = await freePort();
    const root = await project(port);
    const s = await serve(root, ['--host', '0.0.0.0', '--api-key', KEY], envWith({}));
    try {
      const url = `http://127.0.0.1:${port}`;
      const res = await fetch(`${url}/retrieval`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question: QUESTION }),
      });
      expect(res.status).toBe(401);
      expect(s.output().stderr).not.toContain('not a loopback address');
    } finally {
      expect(await stop(s)).toBe(0);
    }
  });
});

describe('--metrics and --access-log on the real process', () => {
  it('logs one JSON line per request on stdout and serves /metrics behind the key', async () => {
    const port = await freePort();
    const root = await project(port);
    const s = await serve(root, ['--metrics', '--access-log'], envWith({ NODERAG_API_KEY: KEY }));
    try {
      const auth = { authorization: `Bearer ${KEY}` };
      const res = await fetch(`${s.url}/retrieval`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'e2e-1', ...auth },
        body: JSON.stringify({ question: QUESTION }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toBe('e2e-1');
      expect((await fetch(`${s.url}/metrics`)).status).toBe(401);
      const metrics = await (await fetch(`${s.url}/metrics`, { headers: auth })).text();
      expect(metrics).toContain(
        'noderag_http_requests_total{route="/retrieval",method="POST",status="200"} 1',
      );
      expect(metrics).toContain('noderag_index_generation 1');
      const logged = () =>
        s
          .output()
          .stdout.split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .find((l) => l.id === 'e2e-1');
      // Access-log lines go out at the end of the server's turn (ts/server/line-batch.ts).
      await waitFor(async () => logged() !== undefined, 10_000);
      const line = logged();
      expect(line).toMatchObject({ method: 'POST', route: '/retrieval', status: 200 });
      expect(line?.retrieval_tokens).toBeGreaterThan(10);
      expect(s.output().stdout + s.output().stderr).not.toContain(KEY);
    } finally {
      expect(await stop(s)).toBe(0);
    }
  });
});
