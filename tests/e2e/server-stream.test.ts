/**
 * True streaming (issue 16 item 2) against the real `noderag search` process on the hand-built
 * Curie index, its chat model a fake OpenAI-compatible server on 127.0.0.1 that streams its
 * reply slowly (one word piece per 40 ms): POST /answer and /v1/chat/completions send each
 * delta as it arrives, a client that disconnects cancels the provider's request, and the CLI
 * prints the answer as it is written. Each server is stopped by its own PID.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type FakeOpenAIServer, startFakeOpenAI } from '../helpers/fake-providers/index.js';
import { CLI, REPO_ROOT } from '../helpers/project.js';
import { curieSpec, writeSearchProject } from '../helpers/search-index.js';
import { envWith, freePort, killAll, type Served, serve, stop, waitFor } from '../helpers/search-server.js';

const QUESTION = 'Where was Marie Curie born?';
const DELAY_MS = 40;

let fake: FakeOpenAIServer;
let server: Served;
let port: number;
let root: string;

beforeAll(async () => {
  fake = await startFakeOpenAI({ streamDelayMs: DELAY_MS });
  port = await freePort();
  root = mkdtempSync(join(tmpdir(), 'noderag-stream-e2e-'));
  await writeSearchProject(root, curieSpec({ config: { port } }));
  const configFile = join(root, 'Node_config.yaml');
  const config = parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>;
  config.model_config = {
    service_provider: 'openai',
    model_name: 'gpt-4o-mini',
    base_url: fake.baseUrl,
    api_keys: 'fake-key',
  };
  writeFileSync(configFile, stringify(config));
  server = await serve(root, []);
}, 60_000);

afterAll(async () => {
  if (server) await stop(server);
  killAll();
  await fake?.close();
  rmSync(root, { recursive: true, force: true });
});

interface Timed {
  at: number;
  data: Record<string, unknown>;
}

/** The `data:` events of a streamed reply with the time each arrived (ms after the request). */
async function timedEvents(res: Response, started: number, stopAfter?: number): Promise<Timed[]> {
  const out: Timed[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body!) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      expect(block.startsWith('data: ')).toBe(true);
      out.push({ at: performance.now() - started, data: JSON.parse(block.slice(6)) });
      if (stopAfter !== undefined && out.length >= stopAfter) return out;
    }
  }
  return out;
}

const postAnswer = (body: object, signal?: AbortSignal) =>
  fetch(`${server.url}/answer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });

describe('POST /answer with "stream": true', () => {
  it('sends each delta as the provider streams it, then the done event with sources', async () => {
    const plain = (await (await postAnswer({ question: QUESTION })).json()) as { answer: string };
    const started = performance.now();
    const res = await postAnswer({ question: QUESTION, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = await timedEvents(res, started);
    const deltas = events.filter((e) => e.data.type === 'delta');
    const done = events[events.length - 1]!;
    expect(deltas.length).toBeGreaterThan(3);
    expect(done.data.type).toBe('done');
    expect(deltas.map((d) => d.data.text).join('')).toBe(done.data.answer);
    expect(done.data.answer).toBe(plain.answer);
    expect((done.data.sources as unknown[]).length).toBeGreaterThan(0);
    expect(done.data.responseTokens).toBeGreaterThan(0);
    // The provider sends a piece every 40 ms: the first delta reached the client long before
    // the last one was written.
    expect(deltas[deltas.length - 1]!.at - deltas[0]!.at).toBeGreaterThan(
      DELAY_MS * (deltas.length - 2) * 0.5,
    );
    const chat = fake.requests.filter((r) => r.route === 'chat');
    expect((chat[chat.length - 1]!.body as { stream?: boolean }).stream).toBe(true);
  });

  it('a provider failure before the first delta keeps its JSON reply and status', async () => {
    // The retrieval of QUESTION is cached by now: the one chat request is the streamed answer.
    const before = fake.count('chat');
    fake.inject({ route: 'chat', fault: { kind: 'status', status: 401 } });
    const res = await postAnswer({ question: QUESTION, stream: true });
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('upstream_error');
    expect(body.error.message).toMatch(/authentication failed/);
    expect(fake.count('chat')).toBe(before + 1);
    expect((fake.requests[fake.requests.length - 1]!.body as { stream?: boolean }).stream).toBe(true);
  });

  it('a client that disconnects mid-stream cancels the provider request', async () => {
    const before = fake.streamsAbandoned;
    const ctl = new AbortController();
    const res = await postAnswer(
      { question: 'When did Marie Curie move to Paris?', stream: true },
      ctl.signal,
    );
    const first = await timedEvents(res, performance.now(), 2);
    expect(first.map((e) => e.data.type)).toEqual(['delta', 'delta']);
    ctl.abort();
    // The fake server sees its connection closed before its last event.
    await waitFor(async () => fake.streamsAbandoned === before + 1, 10_000);
    // And the server still answers.
    expect((await postAnswer({ question: QUESTION })).status).toBe(200);
  });
});

describe('/v1/chat/completions streamed through the openai SDK', () => {
  it('one chunk per delta as it arrives, then the source list and the sources field', async () => {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: basename(root),
      messages: [{ role: 'user', content: QUESTION }],
      stream: true,
    });
    const started = performance.now();
    const contentAt: number[] = [];
    let text = '';
    let sources: unknown;
    for await (const chunk of stream) {
      const content = chunk.choices[0]?.delta.content;
      if (content) {
        contentAt.push(performance.now() - started);
        text += content;
      }
      if (chunk.choices[0]?.finish_reason === 'stop')
        sources = (chunk as unknown as { sources: unknown }).sources;
    }
    expect(contentAt.length).toBeGreaterThan(4);
    expect(contentAt[contentAt.length - 1]! - contentAt[0]!).toBeGreaterThan(DELAY_MS);
    expect(text).toContain('\n\nSources:\n');
    expect(Array.isArray(sources) && sources.length > 0).toBe(true);
  });
});

describe('the terminal client', () => {
  const ask = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; firstOutputMs: number; totalMs: number }>((done) => {
      const started = performance.now();
      const child = spawn(process.execPath, ['--import', 'tsx', CLI, '--port', String(port), ...args], {
        cwd: REPO_ROOT,
        env: envWith(),
      });
      let stdout = '';
      let firstOutputMs = -1;
      child.stdout.on('data', (d) => {
        if (firstOutputMs < 0) firstOutputMs = performance.now() - started;
        stdout += d;
      });
      child.on('close', (code) =>
        done({ code, stdout, firstOutputMs, totalMs: performance.now() - started }),
      );
    });

  it('--stream prints the answer as it is written, then its sources', async () => {
    const r = await ask(['-q', QUESTION, '--stream']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\n\nSources:\n\[\d+\] \S+/);
    const plain = await ask(['-q', QUESTION]);
    expect(plain.code).toBe(0);
    // Without a terminal and without --stream: today's output, the answer alone.
    expect(plain.stdout).not.toContain('Sources:');
    expect(r.stdout.startsWith(plain.stdout.trimEnd())).toBe(true);
    // Streamed, the first words are printed well before the process ends.
    expect(r.totalMs - r.firstOutputMs).toBeGreaterThan(DELAY_MS * 3);
  });

  it('--stream with -r is a usage error', async () => {
    const r = await ask(['-q', QUESTION, '--stream', '-r']);
    expect(r.code).toBe(2);
  });
});
