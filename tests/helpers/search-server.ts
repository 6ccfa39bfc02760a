/**
 * The real `noderag search` process for e2e tests: spawned on a project, ready once it prints
 * its "listening on" line, stopped by its own PID. Every server a test file starts is killed
 * in `killAll()` if the test left it running.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { eventField } from '../../ts/cli/sse.js';
import { CLI, REPO_ROOT } from './project.js';

export interface Served {
  child: ChildProcess;
  url: string;
  output: () => { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];

/** The environment without NODERAG_API_KEY, plus `extra`. */
export function envWith(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env.NODERAG_API_KEY;
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

/** Spawns `search -f root ...args` and waits for its "listening on" line (or its exit). */
export function serve(
  root: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = envWith(),
): Promise<Served> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'search', '-f', root, ...args], {
      cwd: REPO_ROOT,
      env,
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const output = () => ({ stdout, stderr });
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = /listening on (http:\/\/\S+) /.exec(stdout);
      if (m) done({ child, url: m[1]!, output, exited });
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    void exited.then((code) => fail(new Error(`search exited with ${code} before listening:\n${stderr}`)));
  });
}

/** SIGTERM to the server's own PID; resolves to its exit code. */
export function stop(s: Served): Promise<number | null> {
  process.kill(s.child.pid!, 'SIGTERM');
  return s.exited;
}

export function killAll(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

export function freePort(): Promise<number> {
  return new Promise((done) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => done(port));
    });
  });
}

/** Polls `check` every 100 ms until it holds or `timeoutMs` passes (then throws). */
export async function waitFor(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Reads server-sent events from `res` until `until(event, data)` is true; returns them all.
 * Throws when that takes longer than `timeoutMs`.
 */
export async function readEvents(
  res: Response,
  until: (event: string, data: string) => boolean,
  timeoutMs = 60_000,
): Promise<{ event: string; data: string }[]> {
  const reader = res.body!.getReader();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void reader.cancel();
  }, timeoutMs);
  let events: { event: string; data: string }[] = [];
  try {
    events = await readUntil(reader, until);
  } catch (e) {
    if (!timedOut) throw e;
  } finally {
    clearTimeout(timer);
  }
  // A cancelled read ends the stream (or fails it): either way the event did not come.
  if (timedOut) throw new Error(`the awaited event did not come within ${timeoutMs} ms`);
  return events;
}

async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  until: (event: string, data: string) => boolean,
): Promise<{ event: string; data: string }[]> {
  const decoder = new TextDecoder();
  const events: { event: string; data: string }[] = [];
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return events;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf('\n\n');
      const event = eventField(block, 'event')[0] ?? 'message';
      const data = eventField(block, 'data').join('\n');
      if (data === '' && !block.includes('event:')) continue;
      events.push({ event, data });
      if (until(event, data)) {
        await reader.cancel();
        return events;
      }
    }
  }
}
