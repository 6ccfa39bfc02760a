/**
 * The real `noderag search -f <folder>` command spawned as a child process for benchmarks,
 * run as users run it: `bin/noderag.js` on the compiled `dist/` (rebuilt first by
 * `buildDist`, so it matches the working tree), not through tsx:
 * a free loopback port, readiness by polling GET /health, the child's RSS from /proc, and a
 * SIGINT stop that waits for the process to exit (so a --cpu-prof profile gets written).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT } from './hotpot.js';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** VmRSS and VmHWM (peak) of a process, in bytes, from its /proc status (Linux). */
export function processMemory(
  pid: number,
  status = readFileSync(`/proc/${pid}/status`, 'utf8'),
): {
  rss: number;
  peak: number;
} {
  const kb = (key: string) =>
    Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') * 1024, peak: kb('VmHWM') * 1024 };
}

/** CPU time (user + system) a process has used so far, in ms (Linux /proc, 100 ticks/s). */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Compiles ts/ into dist/ (what `npm ci` does through `prepare`), so the bench serves the current code. */
export function buildDist(): void {
  execFileSync(
    process.execPath,
    [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: REPO_ROOT,
      stdio: 'inherit',
    },
  );
}

/** `pid` and its child processes (a `--workers N` server's workers), from /proc. */
export function processTree(pid: number): number[] {
  const children: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) children.push(Number(d));
    } catch {
      // exited meanwhile
    }
  }
  return [pid, ...children];
}

/**
 * Times the kernel took the CPU from a process's main thread while it could still run
 * (`nonvoluntary_ctxt_switches`, Linux /proc): another process woke up and preempted it.
 */
export function processPreemptions(
  pid: number,
  status = readFileSync(`/proc/${pid}/status`, 'utf8'),
): number {
  return Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN);
}

/** CPU ms, RSS bytes and preemptions (of the main threads) summed over a process and its children. */
export function treeUsage(pid: number): { cpuMs: number; rss: number; preemptions: number } {
  let cpuMs = 0;
  let rss = 0;
  let preemptions = 0;
  for (const p of processTree(pid)) {
    try {
      cpuMs += processCpuMs(p);
      const status = readFileSync(`/proc/${p}/status`, 'utf8');
      rss += processMemory(p, status).rss;
      preemptions += processPreemptions(p, status);
    } catch {
      // exited meanwhile
    }
  }
  return { cpuMs, rss, preemptions };
}

export interface SpawnedServer {
  child: ChildProcess;
  pid: number;
  url: string;
  /** ms from spawn to the first GET /health that reports a ready index. */
  startMs: number;
  output: () => string;
  stop: () => Promise<number | null>;
}

export async function spawnSearchServer(
  folder: string,
  /** `stdout`: a file descriptor for the server's stdout (default: a pipe kept in `output`). */
  options: { nodeFlags?: string[]; timeoutMs?: number; args?: string[]; stdout?: number } = {},
): Promise<SpawnedServer> {
  return spawnServer(
    (port) => [
      ...(options.nodeFlags ?? []),
      join(REPO_ROOT, 'bin', 'noderag.js'),
      'search',
      '-f',
      folder,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      ...(options.args ?? []),
    ],
    options.timeoutMs,
    options.stdout,
  );
}

/**
 * The floor for the HTTP layer: a plain node:http server (bench/lib/http-floor-server.mjs)
 * that reads each POST body and answers the bytes of `replyFile`, nothing else.
 */
export async function spawnFloorServer(replyFile: string): Promise<SpawnedServer> {
  return spawnServer((port) => [
    join(REPO_ROOT, 'bench', 'lib', 'http-floor-server.mjs'),
    String(port),
    replyFile,
  ]);
}

/** Spawns `node <argv(port)>` and waits until its GET /health reports a ready index. */
async function spawnServer(
  argv: (port: number) => string[],
  timeoutMs = 60_000,
  stdout?: number,
): Promise<SpawnedServer> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, argv(port), {
    cwd: REPO_ROOT,
    stdio: ['ignore', stdout ?? 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`search server exited (${child.exitCode}):\n${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`search server not ready within ${timeoutMs} ms:\n${out}`);
    }
    try {
      const r = await fetch(`${url}/health`);
      const body = (await r.json()) as { index?: string };
      if (body.index === 'ready') break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const startMs = performance.now() - t0;
  return {
    child,
    pid: child.pid!,
    url,
    startMs,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
