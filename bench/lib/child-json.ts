/**
 * Running a benchmark's child process (a Python driver, a noderag CLI) asynchronously, so a
 * fake server in the bench process keeps answering it, and reading the `PEER_JSON {…}` line
 * it prints last.
 */
import { spawn } from 'node:child_process';
import { REPO_ROOT } from './hotpot.js';

/** The `PEER_JSON {…}` line a driver prints last, parsed; null when there is none. */
export function parseDriverOutput(stdout: string): Record<string, unknown> | null {
  const at = stdout.lastIndexOf('PEER_JSON ');
  if (at < 0) return null;
  const line = stdout.slice(at + 'PEER_JSON '.length).split('\n')[0]!;
  return JSON.parse(line) as Record<string, unknown>;
}

export interface ChildJson {
  /** The PEER_JSON object, or null (none printed, or not JSON). */
  json: Record<string, unknown> | null;
  wallS: number;
  /** The end of stdout, the kept stderr, and how the child ended when not with 0. */
  raw: string;
}

export interface ChildJsonOptions {
  env: NodeJS.ProcessEnv;
  /** Written to the child's stdin (then closed); none = no stdin. */
  stdin?: string;
  /** Killed with SIGKILL after this long. */
  timeoutMs?: number;
  /** Characters of stdout kept in `raw` (default 3000); stderr keeps its last 20,000. */
  outTail?: number;
}

export function runChildJson(cmd: string, argv: string[], options: ChildJsonOptions): Promise<ChildJson> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, argv, {
      cwd: REPO_ROOT,
      env: options.env,
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (options.stdin !== undefined) child.stdin?.end(options.stdin);
    let out = '';
    let err = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-20_000);
    });
    const limit = options.timeoutMs;
    const timer = limit === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), limit);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const wallS = (performance.now() - t0) / 1000;
      const killed = signal
        ? `\nkilled by ${signal}${limit === undefined ? '' : ` (limit ${limit / 1000} s)`}`
        : '';
      const raw = `${out.slice(-(options.outTail ?? 3000))}${err}${killed}${code ? `\nexit ${code}` : ''}`;
      let json: Record<string, unknown> | null = null;
      try {
        json = parseDriverOutput(out);
      } catch {
        json = null;
      }
      resolve({ json, wallS, raw });
    });
  });
}
