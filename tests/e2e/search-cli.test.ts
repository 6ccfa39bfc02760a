/**
 * The query side end to end (docs/method.md §7.2, §7.3): `noderag search -f DIR` spawned as a
 * real process on a hand-built index, providers being the fake OpenAI server (the real SDK
 * over HTTP) or the local provider; the terminal client's three flag combinations and its
 * server-down message; HTTP errors through the real server; 503 until a first build
 * finishes; 60 concurrent requests; refusals; graceful shutdown.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeConfig } from '../../ts/config/node-config.js';
import { NodeSearch } from '../../ts/search/node-search.js';
import { type FakeOpenAIServer, startFakeOpenAI } from '../helpers/fake-providers/index.js';
import {
  curieSpec,
  writeSearchConfig,
  writeSearchIndex,
  writeSearchProject,
} from '../helpers/search-index.js';
import { freePort, type Served, serve } from '../helpers/search-server.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(REPO, 'ts', 'cli', 'main.ts');
const KEY = 'sk-fake-0123456789abcdef';
const DIM = 64;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[]): Promise<Result> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: REPO, env: process.env });
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
const children: ChildProcess[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'noderag-search-e2e-'));
  dirs.push(d);
  return d;
}

/** Child processes of `pid` (a --workers primary's workers), from Linux /proc. */
function childPids(pid: number): string[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    });
}

/** Remote (client) ports of the established TCP connections to `port` that process `pid` holds. */
function heldConnections(pid: string, port: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || f[3] !== '01' || !inodes.has(f[9]!)) continue;
    if (Number.parseInt(f[1]!.split(':')[1]!, 16) === port)
      ports.add(Number.parseInt(f[2]!.split(':')[1]!, 16));
  }
  return ports;
}

async function until(ok: () => boolean, ms = 5000): Promise<void> {
  for (const end = Date.now() + ms; !ok(); ) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

let fake: FakeOpenAIServer;
beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: KEY, dim: DIM });
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await fake.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The Curie index with local-provider vectors, configured for the fake OpenAI server. */
async function openaiProject(port: number, key = KEY): Promise<string> {
  const root = tempDir();
  await writeSearchProject(root, { ...curieSpec(), dim: DIM, vectors: 'local', config: { port } });
  const yaml = `model_config:
  service_provider: openai
  model_name: gpt-4o-mini
  base_url: ${fake.baseUrl}
  api_keys: ${key}
embedding_config:
  service_provider: openai
  embedding_model_name: text-embedding-3-small
  base_url: ${fake.baseUrl}
  api_keys: ${key}
config:
  main_folder: ${root}
  dim: ${DIM}
  port: ${port}
`;
  writeFileSync(join(root, 'Node_config.yaml'), yaml);
  return root;
}

const QUESTION = 'Where was Marie Curie born?';

describe('search server + terminal client through the fake OpenAI server', () => {
  let root: string;
  let server: Served;
  let expected: { answer: string; retrieval: string };
  beforeAll(async () => {
    const port = await freePort();
    root = await openaiProject(port);
    server = await serve(root);
    children.push(server.child);
    // The same question in process, on the same index and providers.
    const search = new NodeSearch(NodeConfig.fromMainFolder(root));
    const a = await search.answer(QUESTION);
    search.close();
    expected = { answer: a.response, retrieval: a.retrievalInfo };
  });

  it('prints the URL and serves /health', async () => {
    expect(server.output().stdout).toContain(
      `listening on ${server.url} (index generation 1: 23 nodes, 11 vectors)`,
    );
    const health = await (await fetch(`${server.url}/health`)).json();
    expect(health).toEqual({ status: 'ok', index: 'ready', generation: 1, nodes: 23, vectors: 11 });
  });

  it('no flag and -a print the answer; -r the context; -r -a both as JSON', async () => {
    expect(expected.retrieval).toContain('1. Marie Curie was born in Warsaw in 1867.');
    const [plain, a, r, both] = await Promise.all([
      runCli(['-f', root, '-q', QUESTION]),
      runCli(['-f', root, '-q', QUESTION, '-a']),
      runCli(['-f', root, '-q', QUESTION, '-r']),
      runCli(['-f', root, '-q', QUESTION, '-r', '-a']),
    ]);
    for (const x of [plain, a, r, both]) expect(x.code, x.stderr).toBe(0);
    for (const x of [plain, a, r, both]) expect(x.stderr).toBe('');
    expect(plain.stdout).toBe(`${expected.answer}\n`);
    expect(a.stdout).toBe(`${expected.answer}\n`);
    expect(r.stdout).toBe(`${expected.retrieval}\n`);
    expect(both.stdout).toBe(
      `${JSON.stringify({ answer: expected.answer, retrieval: expected.retrieval }, null, 2)}\n`,
    );
  });

  it('warns when the server on the port serves another project than -f', async () => {
    // Another project whose config names the same port: the reply comes from root's index.
    const other = tempDir();
    await writeSearchConfig(other, { dim: DIM, config: { port: Number(new URL(server.url).port) } });
    for (const extra of [['-r'], ['-a', '--no-stream'], ['-a', '--stream']]) {
      const r = await runCli(['-f', other, '-q', QUESTION, ...extra]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(
        `Warning: the server at ${server.url} serves the project "${basename(root)}", not "${basename(other)}" (-f)`,
      );
    }
  });

  it('60 concurrent requests are all answered correctly', async () => {
    const questions = [QUESTION, 'Who married Pierre Curie?', 'What is the capital of Poland?'];
    const truth = new Map<string, unknown>();
    for (const q of questions) {
      const res = await fetch(`${server.url}/answer_retrieval`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question: q }),
      });
      truth.set(q, await res.json());
    }
    const before = fake.count('chat');
    const replies = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const q = questions[i % questions.length]!;
        const res = await fetch(`${server.url}/answer_retrieval`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ question: q }),
        });
        return { q, status: res.status, body: await res.json() };
      }),
    );
    for (const r of replies) {
      expect(r.status).toBe(200);
      expect(r.body).toEqual(truth.get(r.q));
    }
    expect(new Set(replies.map((r) => JSON.stringify(r.body))).size).toBe(3);
    // The three questions were asked above, so their retrievals come from the server's
    // retrieval cache: one answer call each, no query (decomposition) call.
    expect(fake.count('chat') - before).toBe(60);
  });

  it('HTTP errors are JSON with the documented status and code', async () => {
    const post = (path: string, body: string, type = 'application/json') =>
      fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': type }, body });
    const check = async (res: Response, status: number, code: string) => {
      expect(res.status).toBe(status);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
    };
    await check(await post('/answer', '{"question":"x"}', 'text/plain'), 415, 'unsupported_media_type');
    await check(await post('/answer', '{"question"'), 400, 'invalid_json');
    await check(await post('/retrieval', '[]'), 400, 'invalid_body');
    await check(await post('/retrieval', '{}'), 400, 'missing_question');
    await check(await post('/retrieval', '{"question":7}'), 400, 'invalid_question');
    await check(await post('/retrieval', '{"question":" "}'), 400, 'empty_question');
    await check(
      await post('/retrieval', JSON.stringify({ question: 'q'.repeat(8001) })),
      400,
      'question_too_long',
    );
    await check(
      await post('/retrieval', JSON.stringify({ question: 'q'.repeat(70_000) })),
      413,
      'payload_too_large',
    );
    await check(await fetch(`${server.url}/nope`), 404, 'not_found');
    const wrong = await fetch(`${server.url}/answer`);
    expect(wrong.headers.get('allow')).toBe('POST');
    await check(wrong, 405, 'method_not_allowed');
  });

  // No API key on a loopback address: a web page whose DNS name is rebound to 127.0.0.1
  // reaches the server under its own name; only loopback names are answered.
  it('without a key, answers only requests addressed to a loopback name (DNS rebinding)', async () => {
    const { port } = new URL(server.url);
    const get = (path: string, host: string) =>
      new Promise<{ status: number; body: string }>((done, fail) => {
        const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
          let body = '';
          res.on('data', (d) => {
            body += d;
          });
          res.on('end', () => done({ status: res.statusCode!, body }));
        });
        req.on('error', fail);
        req.end();
      });
    const rebound = await get('/documents', `attacker.example:${port}`);
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body).error.code).toBe('wrong_host');
    expect(JSON.parse(rebound.body).error.message).toMatch(/API key/);
    expect((await get('/health', `attacker.example:${port}`)).status).toBe(403);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
      expect((await get('/health', host)).status, host).toBe(200);
    }
  });

  it('SIGTERM stops the server gracefully (exit 0)', async () => {
    const port = await freePort();
    const other = await serve(await openaiProject(port));
    children.push(other.child);
    other.child.kill('SIGTERM');
    expect(await other.exited).toBe(0);
    expect(other.output().stderr).toContain('Search server stopped.');
  });
});

/** A Curie project on a free port, served by `search --workers 2`. */
async function serveTwoWorkers(): Promise<{ port: number; root: string; served: Served }> {
  const port = await freePort();
  const root = tempDir();
  await writeSearchProject(root, { ...curieSpec(), config: { port } });
  const served = await serve(root, ['--workers', '2']);
  children.push(served.child);
  return { port, root, served };
}

describe('failures', () => {
  it('the client says how to start the server when none is running (exit 1)', async () => {
    const port = await freePort();
    const root = await openaiProject(port);
    const r = await runCli(['-f', root, '-q', QUESTION]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `No search server is running at http://127.0.0.1:${port}. Start it with: noderag search -f ${root}`,
    );
  });

  it('a provider failure is 502 upstream_error without the key; the client prints code: message (exit 1)', async () => {
    const port = await freePort();
    const root = await openaiProject(port, 'sk-wrong-key-0000000000');
    const s = await serve(root);
    children.push(s.child);
    const res = await fetch(`${s.url}/answer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: QUESTION }),
    });
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('upstream_error');
    expect(body.error.message).toMatch(/openai/);
    expect(body.error.message).not.toContain('sk-wrong-key');
    const cli = await runCli(['-f', root, '-q', QUESTION]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/^upstream_error: .*openai/);
    s.child.kill('SIGTERM');
    await s.exited;
  });

  it('starts on a project never built (503 until a build), refuses a taken port (exit 1) and a bad --port (exit 2)', async () => {
    const empty = tempDir();
    await writeSearchConfig(empty, { dim: 4, config: { port: await freePort() } });
    const waiting = await serve(empty);
    children.push(waiting.child);
    expect(waiting.output().stderr).toContain(
      `the index of ${empty} is not built yet; question routes answer 503 until the first build finishes`,
    );
    const r = await fetch(`${waiting.url}/retrieval`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"question":"Who?"}',
    });
    expect(r.status).toBe(503);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('index_not_built');
    expect(((await (await fetch(`${waiting.url}/health`)).json()) as { generation: number }).generation).toBe(
      0,
    );
    waiting.child.kill('SIGTERM');
    expect(await waiting.exited).toBe(0);

    const port = await freePort();
    const root = tempDir();
    await writeSearchProject(root, { ...curieSpec(), config: { port } });
    const first = await serve(root);
    children.push(first.child);
    const second = await runCli(['search', '-f', root]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `port ${port} on 127.0.0.1 is already in use; stop the other process or set --port or config.port`,
    );
    first.child.kill('SIGTERM');
    await first.exited;

    const bad = await runCli(['search', '-f', root, '--port', '70000']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--port: expected an integer from 1 to 65535, got "70000"');

    const badCache = await runCli(['search', '-f', root, '--cache-size', '-3']);
    expect(badCache.code).toBe(2);
    expect(badCache.stderr).toContain('--cache-size: expected a non-negative integer (0 disables), got "-3"');
  });

  it('--workers 2: two processes share the port and answer alike; a taken port is reported once; SIGTERM stops all', async () => {
    const { root, served } = await serveTwoWorkers();
    expect(served.output().stdout).toContain('with 2 workers');
    const workerPids = () => childPids(served.child.pid!);
    const pids = workerPids();
    expect(pids).toHaveLength(2);
    const bodies = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const res = await fetch(`${served.url}/retrieval`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ question: 'Who married Pierre Curie?' }),
        });
        expect(res.status).toBe(200);
        return ((await res.json()) as { retrieval: string }).retrieval;
      }),
    );
    expect(new Set(bodies).size).toBe(1);
    // A real retrieval: the Curie passages (a unit whose chunk is present is left out).
    expect(bodies[0]).toContain('------------text-------------');

    // A worker that dies is replaced.
    process.kill(Number(pids[0]), 'SIGKILL');
    let now = workerPids();
    for (let i = 0; i < 300 && (now.length !== 2 || now.includes(pids[0]!)); i++) {
      await new Promise((r) => setTimeout(r, 50));
      now = workerPids();
    }
    expect(now).toHaveLength(2);
    expect(now).not.toContain(pids[0]);
    expect(served.output().stderr).toContain('starting a replacement');

    const taken = await runCli(['search', '-f', root, '--workers', '2']);
    expect(taken.code).toBe(1);
    expect(taken.stderr.match(/already in use/g)).toHaveLength(1);

    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
    expect(served.output().stderr).toContain('Search server stopped.');
    for (const pid of now) expect(existsSync(`/proc/${pid}`)).toBe(false);

    const bad = await runCli(['search', '-f', root, '--workers', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--workers: expected an integer from 1 to 256, got "0"');
  });

  it('--workers 2: each connection goes to the worker with the fewest open ones', async () => {
    const { port, served } = await serveTwoWorkers();
    const [a, b] = childPids(served.child.pid!);
    // Keep-alive connections, each answered once so a worker holds it.
    const open = async (n: number): Promise<Socket[]> => {
      const sockets: Socket[] = [];
      for (let i = 0; i < n; i++) {
        const s = connect(port, '127.0.0.1');
        await new Promise<void>((r) => {
          s.once('data', () => r());
          s.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
        });
        sockets.push(s);
      }
      return sockets;
    };
    /** Client ports of the connections each worker holds. */
    const held = (pid: string) => heldConnections(pid, port);
    const first = await open(6);
    await until(() => held(a!).size + held(b!).size === 6);
    expect([held(a!).size, held(b!).size]).toEqual([3, 3]);
    // Worker a's connections close: the next three connections all go to it.
    const ofA = held(a!);
    for (const s of first) if (ofA.has(s.localPort!)) s.destroy();
    await until(() => held(a!).size === 0);
    await new Promise((r) => setTimeout(r, 300)); // the worker's note reaches the primary
    const next = await open(3);
    await until(() => held(a!).size === 3);
    expect(held(b!).size).toBe(3);
    for (const s of [...first, ...next]) s.destroy();
    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
  });

  it('--workers 2: a worker that is stopping gets no new connections', async () => {
    const { port, served } = await serveTwoWorkers();
    const pids = childPids(served.child.pid!);
    // A request half sent keeps its worker draining (up to 10 s) once told to stop.
    const half = connect(port, '127.0.0.1');
    await new Promise<void>((r) => half.once('connect', () => r()));
    half.write(
      'POST /retrieval HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
    );
    await until(() => pids.some((p) => heldConnections(p, port).size === 1));
    const draining = pids.find((p) => heldConnections(p, port).size === 1)!;
    process.kill(Number(draining), 'SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    // Every new connection goes to the other worker and is answered.
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/health`, { headers: { connection: 'close' } });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses).toEqual(Array(12).fill(200));
    half.destroy();
    served.child.kill('SIGTERM');
    expect(await served.exited).toBe(0);
  });

  it('while a first build runs: 503 index_not_built, then served without a restart (local provider)', async () => {
    const root = tempDir();
    const port = await freePort();
    const unfinished = curieSpec({
      config: { port },
      state: { last_finished_generation: 0, current_state: 'Summary pipeline' },
    });
    await writeSearchProject(root, unfinished);
    const s = await serve(root, ['--host', '0.0.0.0', '--port', String(port), '--insecure']);
    children.push(s.child);
    expect(s.output().stderr).toContain('not built yet; question routes answer 503');
    expect(s.output().stderr).toContain('0.0.0.0, which is not a loopback address');
    const url = `http://127.0.0.1:${port}`;
    const ask = () =>
      fetch(`${url}/retrieval`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question: 'Where is Warsaw?' }),
      });
    const down = await ask();
    expect(down.status).toBe(503);
    expect(((await down.json()) as { error: { code: string } }).error.code).toBe('index_not_built');
    expect(((await (await fetch(`${url}/health`)).json()) as { index: string }).index).toBe('not_built');

    await writeSearchIndex(root, curieSpec());
    const up = await ask();
    expect(up.status).toBe(200);
    expect(((await up.json()) as { retrieval: string }).retrieval).toContain('------------text-------------');
    s.child.kill('SIGINT');
    expect(await s.exited).toBe(0);
  });
});
