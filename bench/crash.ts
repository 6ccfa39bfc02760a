/**
 * `npm run bench -- crash`: the adversarial run of issue 18, kept in the repository.
 *
 * 1. Crash-consistency soak. A HotpotQA subset (the first 40 paragraphs, local provider,
 *    offline) is built once uninterrupted (the full reference) and once incrementally (30
 *    paragraphs, then 10 more: the incremental reference). Each trial starts
 *    `noderag build -f DIR --yes` (the tsx CLI entry) in its own process group, kills the whole
 *    group with SIGKILL at a seeded random time within the build's measured duration, runs the
 *    build again to completion and compares every file under cache/ (but response_cache) and
 *    info/state.json's generation byte for byte with the reference; then loads the index
 *    (NodeSearch) and answers one question. Counted: mismatches, unservable indexes, and leaked
 *    files (any path of the project that the reference does not have: staging, checkpoints,
 *    scratch folders, temp files, locks).
 * 2. Abuse run against `noderag search` (with --access-log) and `noderag ui` on 127.0.0.1:
 *    bad bodies, wrong types and content types, bodies over the limit (with and without
 *    Content-Length), unknown routes and methods, clients that leave mid-body, slow clients
 *    (partial headers or bodies, then a timeout), and hostile uploads (traversal names, a symbolic
 *    link in input/ pointing to a canary beside the project, oversize chunked uploads, bidi and
 *    control characters, names over 255 bytes). Counted: 5xx replies (seen by the client or in
 *    the access log) and writes outside input/ (the canary folder and every other file beside
 *    or inside the project but input/, compared before and after).
 *
 * Ends with `RESULT crash trials=N mismatches=0 unservable=0 leaked_files=0 abuse_requests=M
 * abuse_5xx=0 outside_writes=0` and writes its section of bench/RESULTS.md. Seeded: the same
 * seed gives the same kill times and the same request sequence.
 *
 *   npm run bench -- crash [--trials 30] [--paragraphs 40] [--seed 18]
 *                          [--abuse-requests 6000] [--abuse-seconds 100] [--no-write]
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import {
  BENCH_DATA,
  loadCorpus,
  loadQuestions,
  localConfigYaml,
  paragraphFileName,
  REPO_ROOT,
} from './lib/hotpot.js';
import { mulberry32 as rng } from './lib/random.js';
import { writeResultsSection } from './lib/results-md.js';
import { freePort } from './lib/spawned-server.js';
import { markdownTable } from './lib/stats.js';

const { values: opts } = parseArgs({
  options: {
    trials: { type: 'string', default: '30' },
    paragraphs: { type: 'string', default: '40' },
    seed: { type: 'string', default: '18' },
    'abuse-requests': { type: 'string', default: '6000' },
    'abuse-seconds': { type: 'string', default: '100' },
    code: { type: 'string', default: 'worktree' },
    'no-write': { type: 'boolean', default: false },
  },
});
const TRIALS = Number(opts.trials);
const PARAGRAPHS = Number(opts.paragraphs);
const BASE_PARAGRAPHS = Math.round(PARAGRAPHS * 0.75);
const SEED = Number(opts.seed);
const ABUSE_TARGET = Number(opts['abuse-requests']);
const ABUSE_MS = Number(opts['abuse-seconds']) * 1000;

const WORK = join(BENCH_DATA, 'crash');
/** Every build runs in this one folder, so config and paths are the same in all of them. */
const TRIAL_DIR = join(WORK, 'project');
const BASE_STORE = join(WORK, 'base-built');
const ABUSE_DIR = join(WORK, 'abuse');

/**
 * The code under test, frozen for the whole run: a copy of ts/ (the working tree's, or with
 * `--code head` the last commit's) beside package.json and a link to bindings/, so edits made
 * to the working tree while the run goes on do not mix two versions. Dependencies resolve from
 * the repository's node_modules above it.
 */
const CODE = join(WORK, 'code');
function freezeCode(from: string): string {
  rmSync(CODE, { recursive: true, force: true });
  mkdirSync(CODE, { recursive: true });
  if (from === 'head') {
    const tar = spawnSync('git', ['archive', '--format=tar', 'HEAD', 'ts'], {
      cwd: REPO_ROOT,
      maxBuffer: 1 << 30,
    });
    if (tar.status !== 0) throw new Error(`git archive failed: ${tar.stderr}`);
    const x = spawnSync('tar', ['-x', '-C', CODE], { input: tar.stdout });
    if (x.status !== 0) throw new Error(`tar failed: ${x.stderr}`);
  } else if (from === 'worktree') {
    cpSync(join(REPO_ROOT, 'ts'), join(CODE, 'ts'), { recursive: true });
  } else {
    throw new Error(`--code: expected worktree or head, got ${JSON.stringify(from)}`);
  }
  cpSync(join(REPO_ROOT, 'package.json'), join(CODE, 'package.json'));
  symlinkSync(join(REPO_ROOT, 'bindings'), join(CODE, 'bindings'));
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' });
  return from === 'head'
    ? `ts/ of commit ${commit.stdout.trim()}`
    : 'ts/ of the working tree at the start of the run';
}
const CODE_NOTE = freezeCode(opts.code!);
const CLI = join(CODE, 'ts', 'cli', 'main.ts');
const { NodeConfig, NodeSearch } = (await import(
  join(CODE, 'ts', 'index.ts')
)) as typeof import('../ts/index.js');

// ---------------------------------------------------------------------------------------------
// Projects and builds
// ---------------------------------------------------------------------------------------------

const corpus = Object.entries(loadCorpus()).slice(0, PARAGRAPHS);

function writeInputs(folder: string, from: number, to: number): void {
  mkdirSync(join(folder, 'input'), { recursive: true });
  for (let i = from; i < to; i++) {
    const [title, sentences] = corpus[i]!;
    writeFileSync(join(folder, 'input', paragraphFileName(i, title)), `${title}\n\n${sentences.join('')}\n`);
  }
}

function freshProject(paragraphs: number): void {
  rmSync(TRIAL_DIR, { recursive: true, force: true });
  writeInputs(TRIAL_DIR, 0, paragraphs);
  writeFileSync(join(TRIAL_DIR, 'Node_config.yaml'), localConfigYaml(TRIAL_DIR));
}

/** The 30-paragraph project built once, copied into place for each incremental trial. */
function incrementalProject(): void {
  rmSync(TRIAL_DIR, { recursive: true, force: true });
  cpSync(BASE_STORE, TRIAL_DIR, { recursive: true, verbatimSymlinks: true });
  writeInputs(TRIAL_DIR, BASE_PARAGRAPHS, PARAGRAPHS);
}

interface BuildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
  /** ms from spawn to the first stage line. */
  firstStageMs: number | null;
  /** ms from spawn to the `Build finished` line. */
  finishedMs: number | null;
  /** The last stage line seen (`[k/8] Name`), 'Build finished, exiting', or 'startup' before any. */
  stage: string;
  out: string;
}

/** When to kill a build: `ms` after its spawn, or after its first stage line (startup time varies most). */
interface KillPlan {
  from: 'spawn' | 'first stage';
  ms: number;
}

/** `noderag build -f TRIAL_DIR --yes` in its own process group; killed with SIGKILL as `kill` says. */
function build(kill: KillPlan | null = null): Promise<BuildRun & { killSentMs: number | null }> {
  const t0 = performance.now();
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', CLI, 'build', '-f', TRIAL_DIR, '--yes'],
    { cwd: REPO_ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let firstStageMs: number | null = null;
  let finishedMs: number | null = null;
  let stage = 'startup';
  let timer: NodeJS.Timeout | undefined;
  let killSentMs: number | null = null;
  const arm = (ms: number) => {
    timer = setTimeout(() => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      killSentMs = performance.now() - t0;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, ms);
  };
  if (kill?.from === 'spawn') arm(kill.ms);
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const m of out.matchAll(/^\[(\d+)\/(\d+)\] (.+)$/gm)) stage = `${m[1]}/${m[2]} ${m[3]!.trim()}`;
    if (firstStageMs === null && stage !== 'startup') {
      firstStageMs = performance.now() - t0;
      if (kill?.from === 'first stage') arm(kill.ms);
    }
    if (finishedMs === null && /^Build finished/m.test(out)) {
      stage = 'Build finished, exiting';
      finishedMs = performance.now() - t0;
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((resolve) => {
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, ms: performance.now() - t0, firstStageMs, finishedMs, stage, out, killSentMs });
    });
  });
}

async function buildOrThrow(what: string): Promise<BuildRun> {
  const r = await build();
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.out}`);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Fingerprints
// ---------------------------------------------------------------------------------------------

function sha(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Relative paths of everything under `dir` (files, links, folders), without following links. */
function walk(dir: string, root = dir, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const st = lstatSync(p);
    out.push(relative(root, p) + (st.isDirectory() ? '/' : ''));
    if (st.isDirectory()) walk(p, root, out);
  }
  return out;
}

interface Fingerprint {
  /** cache/ file → sha256 (response_cache left out). */
  cache: Map<string, string>;
  generation: string;
  /** Every path of the project (input/ and cache/response_cache/ left out). */
  paths: Set<string>;
}

function fingerprint(folder: string): Fingerprint {
  const cache = new Map<string, string>();
  const paths = new Set<string>();
  for (const p of walk(folder)) {
    if (p.startsWith('input/') || p.startsWith('cache/response_cache')) continue;
    paths.add(p);
    if (p.startsWith('cache/') && !p.endsWith('/')) cache.set(p, sha(join(folder, p)));
  }
  let generation = 'missing';
  try {
    const s = JSON.parse(readFileSync(join(folder, 'info', 'state.json'), 'utf8')) as Record<string, unknown>;
    generation = `${s.generation}/${s.last_finished_generation}/${s.current_state}`;
  } catch {
    // stays 'missing'
  }
  return { cache, generation, paths };
}

function compare(ref: Fingerprint, got: Fingerprint): { mismatched: string[]; leaked: string[] } {
  const mismatched: string[] = [];
  for (const [p, h] of ref.cache) if (got.cache.get(p) !== h) mismatched.push(p);
  for (const p of got.cache.keys()) if (!ref.cache.has(p) && !ref.paths.has(p)) mismatched.push(`+${p}`);
  if (got.generation !== ref.generation) mismatched.push(`state ${got.generation} (want ${ref.generation})`);
  const leaked = [...got.paths].filter((p) => !ref.paths.has(p));
  return { mismatched, leaked };
}

/** Extra entries in input/ (temp files of killed writers). */
function inputLeftovers(folder: string, expected: number): string[] {
  const names = readdirSync(join(folder, 'input'));
  return names.length === expected ? [] : names.filter((n) => !/^\d{4}-.*\.txt$/.test(n));
}

// ---------------------------------------------------------------------------------------------
// Part 1: the soak
// ---------------------------------------------------------------------------------------------

interface Trial {
  i: number;
  mode: 'full' | 'incremental';
  /** The seeded plan: `ms after spawn` or `ms after the first stage line`. */
  plan: string;
  /** When the kill was sent, ms after spawn (null: the build had ended). */
  killAtMs: number | null;
  killed: boolean;
  stage: string;
  rerunMs: number;
  mismatched: string[];
  leaked: string[];
  servable: boolean;
  note: string;
}

const QUESTION = loadQuestions()[0]!.question;

async function servable(expectedGeneration: string): Promise<{ ok: boolean; note: string }> {
  const search = new NodeSearch(NodeConfig.fromMainFolder(TRIAL_DIR));
  try {
    const status = await search.status();
    const a = await search.answer(QUESTION);
    const gen = expectedGeneration.split('/')[1];
    if (String(status.generation) !== gen)
      return { ok: false, note: `serves generation ${status.generation}` };
    if (!a.response || a.items.length === 0) return { ok: false, note: 'empty answer or context' };
    return { ok: true, note: '' };
  } catch (e) {
    return { ok: false, note: (e as Error).message.split('\n')[0]! };
  } finally {
    search.close();
  }
}

async function soak(): Promise<{ trials: Trial[]; refFullMs: number; refIncMs: number; refs: string }> {
  mkdirSync(WORK, { recursive: true });
  console.log(
    `crash soak: ${PARAGRAPHS} HotpotQA paragraphs, ${TRIALS} trials, seed ${SEED}; code: ${CODE_NOTE}`,
  );

  // Reference incremental: build the base, keep a copy, add the rest, build again.
  freshProject(BASE_PARAGRAPHS);
  await buildOrThrow('the base build');
  rmSync(BASE_STORE, { recursive: true, force: true });
  cpSync(TRIAL_DIR, BASE_STORE, { recursive: true, verbatimSymlinks: true });
  incrementalProject();
  const incRun = await buildOrThrow('the reference incremental build');
  const refInc = fingerprint(TRIAL_DIR);
  // Reference full build.
  freshProject(PARAGRAPHS);
  const fullRun = await buildOrThrow('the reference full build');
  const refFull = fingerprint(TRIAL_DIR);
  const refs = `full: ${refFull.cache.size} cache files, generation ${refFull.generation}, ${fullRun.ms.toFixed(0)} ms; incremental: ${refInc.cache.size} cache files, generation ${refInc.generation}, ${incRun.ms.toFixed(0)} ms`;
  console.log(`references: ${refs}`);

  // Startup (tsx, INIT) takes most of the variance under load, so most kills are timed from
  // the build's own first stage line, within 90% of the reference's pipeline time; 15% fall in
  // the startup (INIT's repair and recovery run there).
  const windowOf = (r: BuildRun) => ({
    startup: r.firstStageMs ?? 1000,
    pipeline: (r.finishedMs ?? r.ms) - (r.firstStageMs ?? 0),
  });
  const windows = { full: windowOf(fullRun), incremental: windowOf(incRun) };
  const random = rng(SEED);
  const trials: Trial[] = [];
  for (let i = 0; i < TRIALS; i++) {
    const mode = i % 2 === 0 ? 'full' : 'incremental';
    const w = windows[mode];
    const r1 = random();
    const r2 = random();
    const plan: KillPlan =
      r1 < 0.15
        ? { from: 'spawn', ms: Math.round(r2 * w.startup) }
        : { from: 'first stage', ms: Math.round(r2 * w.pipeline * 0.9) };
    if (mode === 'full') freshProject(PARAGRAPHS);
    else incrementalProject();
    const killed = await build(plan);
    const killAtMs = killed.killSentMs === null ? null : Math.round(killed.killSentMs);
    const rerun = await build();
    const ref = mode === 'full' ? refFull : refInc;
    const got = fingerprint(TRIAL_DIR);
    const { mismatched, leaked } = compare(ref, got);
    leaked.push(...inputLeftovers(TRIAL_DIR, PARAGRAPHS).map((n) => `input/${n}`));
    let note = rerun.code === 0 ? '' : `re-run exit ${rerun.code}: ${rerun.out.trim().split('\n').pop()}`;
    const serve = await servable(ref.generation);
    if (!serve.ok) note = note || serve.note;
    // Loading for search must create nothing either.
    for (const p of compare(ref, fingerprint(TRIAL_DIR)).leaked) if (!leaked.includes(p)) leaked.push(p);
    const t: Trial = {
      i,
      mode,
      plan: `${plan.ms} ms after ${plan.from === 'spawn' ? 'spawn' : 'the first stage'}`,
      killAtMs,
      killed: killed.signal === 'SIGKILL',
      stage: killed.signal === 'SIGKILL' ? killed.stage : `exited ${killed.code} (${killed.stage})`,
      rerunMs: rerun.ms,
      mismatched,
      leaked,
      servable: serve.ok,
      note,
    };
    trials.push(t);
    const outcome =
      mismatched.length || leaked.length || !serve.ok
        ? `FAIL ${[...mismatched, ...leaked.map((l) => `leaked ${l}`), note].filter(Boolean).join(', ')}`
        : 'identical, served';
    console.log(
      `  trial ${String(i).padStart(2)} ${mode.padEnd(11)} kill ${t.plan.padEnd(30)} (at ${String(killAtMs ?? '-').padStart(5)} ms)  ${t.stage.padEnd(26)} ${outcome}`,
    );
  }
  return { trials, refFullMs: fullRun.ms, refIncMs: incRun.ms, refs };
}

// ---------------------------------------------------------------------------------------------
// Part 2: the abuse run
// ---------------------------------------------------------------------------------------------

interface Reply {
  status: number | null;
  /** 'reply' | 'disconnected' (we left) | 'timeout' (slow client gave up) | 'reset'. */
  how: string;
}

/**
 * One request on its own socket: `head` (without the blank line), then `body` pieces. With
 * `leaveAfter` the client closes after that many body bytes; with `slowMs` each piece waits.
 */
function raw(
  port: number,
  head: string,
  body: (Buffer | string)[] = [],
  o: { leaveAfter?: number; slowMs?: number; timeoutMs?: number; headPieces?: string[] } = {},
): Promise<Reply> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    let done = false;
    let how = 'reset';
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(got);
      resolve({ status: m ? Number(m[1]) : null, how: m ? 'reply' : how });
    };
    const timer = setTimeout(() => {
      how = 'timeout';
      s.destroy();
      finish();
    }, o.timeoutMs ?? 30_000);
    s.on('data', (d: Buffer) => {
      if (got.length < 64) got += d.toString('latin1');
    });
    s.on('error', () => {});
    s.on('close', finish);
    s.once('connect', async () => {
      const pause = () => new Promise((r) => setTimeout(r, o.slowMs ?? 0));
      try {
        if (o.headPieces) {
          // Slowloris: the request line and headers a piece at a time, never the blank line.
          for (const piece of o.headPieces) {
            if (s.destroyed || got) return;
            s.write(piece);
            await pause();
          }
          how = 'timeout';
          s.destroy();
          finish();
          return;
        }
        s.write(`${head}\r\n\r\n`);
        let sent = 0;
        for (const piece of body) {
          if (s.destroyed || got) return;
          const b = typeof piece === 'string' ? Buffer.from(piece) : piece;
          if (o.leaveAfter !== undefined && sent + b.length > o.leaveAfter) {
            s.write(b.subarray(0, o.leaveAfter - sent));
            how = 'disconnected';
            setTimeout(() => s.destroy(), 20);
            return;
          }
          if (!s.write(b)) await new Promise((r) => s.once('drain', r));
          sent += b.length;
          if (o.slowMs) await pause();
        }
        if (o.leaveAfter !== undefined) {
          how = 'disconnected';
          s.destroy();
        }
      } catch {
        // the server closed on us: the reply (if any) is read in 'close'
      }
    });
  });
}

function request(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer | string | null,
  o: { leaveAfter?: number; chunked?: boolean; contentLength?: number | null; timeoutMs?: number } = {},
): Promise<Reply> {
  const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Connection: close'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  const b = body === null ? null : typeof body === 'string' ? Buffer.from(body) : body;
  const pieces: Buffer[] = [];
  if (b !== null && o.chunked) {
    lines.push('Transfer-Encoding: chunked');
    for (let at = 0; at < b.length; at += 64 * 1024) {
      const c = b.subarray(at, at + 64 * 1024);
      pieces.push(Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n'));
    }
    pieces.push(Buffer.from('0\r\n\r\n'));
  } else if (b !== null) {
    if (o.contentLength !== null) lines.push(`Content-Length: ${o.contentLength ?? b.length}`);
    pieces.push(b);
  }
  return raw(port, lines.join('\r\n'), pieces, {
    leaveAfter: o.leaveAfter,
    timeoutMs: o.timeoutMs ?? 30_000,
  });
}

const MARK = 'crash-canary-pwned';

function multipart(files: { name: string; bytes: Buffer | string; field?: string }[]): {
  type: string;
  body: Buffer;
} {
  const boundary = `----bench${createHash('md5')
    .update(files.map((f) => f.name).join())
    .digest('hex')}`;
  const parts: Buffer[] = [];
  for (const f of files) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${f.field ?? 'file'}"; filename="${f.name}"\r\nContent-Type: text/plain\r\n\r\n`,
      ),
      typeof f.bytes === 'string' ? Buffer.from(f.bytes) : f.bytes,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { type: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}

interface Server {
  child: ChildProcess;
  port: number;
  out: () => string;
  stop: () => Promise<void>;
}

async function startServer(args: string[], ready: string): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args, '--port', String(port)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${args[0]} exited (${child.exitCode}):\n${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${args[0]} not ready within 60 s:\n${out}`);
    }
    try {
      const r = await fetch(`http://127.0.0.1:${port}${ready}`);
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  // A run that throws must not leave its servers behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((r) =>
    child.once('exit', () => {
      process.off('exit', killOnExit);
      r();
    }),
  );
  return {
    child,
    port,
    out: () => out,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGINT');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** Everything under ABUSE_DIR but project/input/: type, size, content hash or link target. */
function outsideSnapshot(): Map<string, string> {
  const snap = new Map<string, string>();
  for (const p of walk(ABUSE_DIR)) {
    if (p.startsWith('project/input/')) continue;
    const abs = join(ABUSE_DIR, p);
    const st = lstatSync(abs);
    if (st.isSymbolicLink()) snap.set(p, `link ${readlinkSync(abs)}`);
    else if (st.isDirectory()) snap.set(p, 'dir');
    else snap.set(p, `file ${st.size} ${sha(abs)} ${st.mode}`);
  }
  return snap;
}

/** Entries named after the marker outside input/ (the repository root, the work folder, the temp dir). */
function markerHits(): string[] {
  const hits: string[] = [];
  for (const dir of [REPO_ROOT, WORK, join(WORK, '..'), tmpdir(), join(ABUSE_DIR, 'project')]) {
    try {
      for (const n of readdirSync(dir)) if (n.includes(MARK)) hits.push(join(dir, n));
    } catch {
      // unreadable: nothing to report
    }
  }
  return hits;
}

interface AbuseKind {
  name: string;
  weight: number;
  run: (n: number) => Promise<Reply>;
}

interface AbuseResult {
  requests: number;
  fiveXX: number;
  accessLog5xx: number;
  outsideWrites: string[];
  unsafeInputNames: string[];
  stackLines: number;
  ms: number;
  byKind: Map<string, { n: number; statuses: Map<string, number> }>;
  healthyDuring: number;
  healthChecks: number;
  uploadsAccepted: number;
}

async function abuse(): Promise<AbuseResult> {
  // A built project (the last soak trial's folder) and a canary folder beside it.
  rmSync(ABUSE_DIR, { recursive: true, force: true });
  mkdirSync(ABUSE_DIR, { recursive: true });
  const project = join(ABUSE_DIR, 'project');
  cpSync(TRIAL_DIR, project, { recursive: true, verbatimSymlinks: true });
  writeFileSync(join(project, 'Node_config.yaml'), localConfigYaml(project));
  const canary = join(ABUSE_DIR, 'canary');
  mkdirSync(canary);
  writeFileSync(join(canary, 'target.txt'), 'canary: must never change\n');
  const input = join(project, 'input');
  const placeLinks = () => {
    for (const [name, to] of [
      ['link-out.txt', join('..', '..', 'canary', 'target.txt')],
      ['link-new.txt', join('..', '..', 'canary', `${MARK}-new.txt`)],
      ['dir-out', join('..', '..', 'canary')],
    ] as const) {
      // A link under a temp name renamed over the name: the UI may write that name meanwhile.
      const temp = join(input, `.bench-link-${name}`);
      rmSync(temp, { force: true });
      symlinkSync(to, temp);
      renameSync(temp, join(input, name));
    }
  };
  placeLinks();
  const before = outsideSnapshot();

  console.log('abuse run: noderag search and noderag ui on 127.0.0.1');
  const search = await startServer(
    ['search', '-f', project, '--host', '127.0.0.1', '--access-log'],
    '/health',
  );
  const ui = await startServer(['ui', '-f', project], '/api/status');
  const S = search.port;
  const U = ui.port;
  const json = { 'Content-Type': 'application/json' };
  const origin = { Origin: `http://127.0.0.1:${U}` };
  const q = JSON.stringify({ question: QUESTION });
  const big = (n: number) => Buffer.alloc(n, 'a');
  let uploadsAccepted = 0;

  const hostileNames = [
    `../${MARK}.txt`,
    `../../${MARK}.txt`,
    `..%2F${MARK}.txt`,
    `/${MARK}.txt`,
    `dir-out/${MARK}.txt`,
    `sub/../../${MARK}.txt`,
    `..\\..\\${MARK}.txt`,
    `${MARK}\u202Etxt.exe.txt`,
    `${MARK}\u200F.txt`,
    `${MARK}\u0007bell.txt`,
    `${MARK}\u0085nel.txt`,
    `${'漢'.repeat(90)}.txt`,
    `${'é'.repeat(130)}.txt`,
    `${'a'.repeat(300)}.txt`,
    '.',
    '..',
    '',
    `${MARK}.exe`,
    `.${MARK}.txt`,
  ];

  const kinds: AbuseKind[] = [
    // --- noderag search ---
    {
      name: 'search: invalid JSON',
      weight: 6,
      run: () => request(S, 'POST', '/answer', json, '{"question": "x'),
    },
    {
      name: 'search: wrong types',
      weight: 6,
      run: (n) =>
        request(
          S,
          'POST',
          // "stream" is read by /answer only (the others never stream and ignore it).
          n % 7 === 6 ? '/answer' : ['/answer', '/retrieval', '/answer_retrieval'][n % 3]!,
          json,
          [
            '{"question": 42}',
            '[]',
            'null',
            '"q"',
            '{"question": ""}',
            '{"question": ["a"]}',
            '{"stream": "yes", "question": "a"}',
          ][n % 7]!,
        ),
    },
    {
      name: 'search: body over the limit (Content-Length)',
      weight: 3,
      run: () => request(S, 'POST', '/retrieval', json, `{"question":"${'a'.repeat(200_000)}"}`),
    },
    {
      name: 'search: body over the limit (chunked)',
      weight: 2,
      run: () => request(S, 'POST', '/answer', json, big(1_000_000), { chunked: true }),
    },
    {
      name: 'search: wrong content type',
      weight: 4,
      run: (n) =>
        request(
          S,
          'POST',
          '/retrieval',
          {
            'Content-Type': [
              'text/plain',
              'application/x-www-form-urlencoded',
              'multipart/form-data',
              'application/xml',
            ][n % 4]!,
          },
          n % 2 ? 'question=hello' : q,
        ),
    },
    {
      name: 'search: unknown route',
      weight: 5,
      run: (n) =>
        request(
          S,
          n % 2 ? 'GET' : 'POST',
          [
            '/nope',
            '/../../etc/passwd',
            '/%2e%2e/%2e%2e/etc/passwd',
            `/${'x'.repeat(6000)}`,
            '/answer/../health/..',
            '/v1/chat',
            '/v1/models/%00',
          ][n % 7]!,
          {},
          n % 2 ? null : '{}',
        ),
    },
    {
      name: 'search: wrong method',
      weight: 4,
      run: (n) =>
        request(
          S,
          ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE'][n % 6]!,
          ['/answer', '/retrieval', '/health'][n % 3]!,
          {},
          null,
        ),
    },
    {
      name: 'search: malformed HTTP',
      weight: 3,
      run: (n) =>
        raw(
          S,
          [
            'POST /answer HTTP/1.1\r\nHost: x\r\nContent-Length: abc',
            'POST /answer HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked',
            'GARBAGE\r\n\u0000\u0001',
            `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20_000)}`,
            'POST /answer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\nboom',
          ][n % 5]!,
        ),
    },
    {
      name: 'search: OpenAI route, bad bodies',
      weight: 3,
      run: (n) =>
        request(
          S,
          'POST',
          '/v1/chat/completions',
          json,
          [
            '{}',
            '{"messages": "hi"}',
            '{"messages": [{"role": "user"}]}',
            '{"messages": [{"role": 5, "content": {}}]}',
            '{"model": 1, "messages": []}',
          ][n % 5]!,
        ),
    },
    {
      name: 'search: leaves mid-body',
      weight: 6,
      run: (n) =>
        request(S, 'POST', '/answer', json, `{"question": "${'b'.repeat(2000)}"}`, {
          leaveAfter: 10 + (n % 500),
          chunked: n % 2 === 1,
        }),
    },
    { name: 'search: valid question', weight: 2, run: () => request(S, 'POST', '/retrieval', json, q) },
    // --- noderag ui ---
    {
      name: 'ui: hostile upload names',
      weight: 8,
      run: (n) => {
        const m = multipart([{ name: hostileNames[n % hostileNames.length]!, bytes: `${MARK}\n` }]);
        return request(
          U,
          'POST',
          `/api/files${n % 2 ? '?overwrite=1' : ''}`,
          { ...origin, 'Content-Type': m.type },
          m.body,
        );
      },
    },
    {
      name: 'ui: overwrite through a symlink in input/',
      weight: 3,
      run: async (n) => {
        placeLinks();
        const m = multipart([
          { name: n % 2 ? 'link-out.txt' : 'link-new.txt', bytes: `${MARK} through a link\n` },
        ]);
        const r = await request(
          U,
          'POST',
          '/api/files?overwrite=1',
          { ...origin, 'Content-Type': m.type },
          m.body,
        );
        if (r.status === 200) uploadsAccepted++;
        return r;
      },
    },
    {
      name: 'ui: oversize upload (chunked, no Content-Length)',
      weight: 1,
      run: () => {
        const m = multipart([{ name: `big-${MARK}.txt`, bytes: big(21 * 1024 * 1024) }]);
        return request(U, 'POST', '/api/files?overwrite=1', { ...origin, 'Content-Type': m.type }, m.body, {
          chunked: true,
        });
      },
    },
    {
      name: 'ui: oversize upload (Content-Length)',
      weight: 2,
      run: () => {
        const m = multipart([{ name: `big2-${MARK}.txt`, bytes: big(1024) }]);
        return request(U, 'POST', '/api/files', { ...origin, 'Content-Type': m.type }, m.body, {
          contentLength: 200 * 1024 * 1024,
          timeoutMs: 10_000,
        });
      },
    },
    {
      name: 'ui: malformed multipart',
      weight: 4,
      run: (n) =>
        request(
          U,
          'POST',
          '/api/files',
          {
            ...origin,
            'Content-Type': [
              'multipart/form-data',
              'multipart/form-data; boundary=zz',
              'text/plain',
              'multipart/form-data; boundary=',
            ][n % 4]!,
          },
          [
            '--zz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nno end',
            '--zz--',
            'plain',
            '\r\n\r\n',
          ][n % 4]!,
        ),
    },
    {
      name: 'ui: upload leaves mid-body',
      weight: 4,
      run: (n) => {
        const m = multipart([{ name: `mid-${n}.txt`, bytes: big(100_000) }]);
        return request(U, 'POST', '/api/files', { ...origin, 'Content-Type': m.type }, m.body, {
          leaveAfter: 200 + ((n * 997) % 90_000),
          chunked: n % 2 === 1,
        });
      },
    },
    {
      name: 'ui: cross-origin / foreign Host',
      weight: 3,
      run: (n) => {
        const m = multipart([{ name: `x-${MARK}.txt`, bytes: 'x' }]);
        const h: Record<string, string> =
          n % 2 ? { Origin: 'http://evil.example', 'Content-Type': m.type } : { 'Content-Type': m.type };
        return request(U, 'POST', '/api/files', h, m.body);
      },
    },
    {
      name: 'ui: bad JSON to config and chat',
      weight: 5,
      run: (n) =>
        request(
          U,
          'POST',
          n % 2 ? '/api/config' : '/api/chat',
          { ...origin, ...json },
          n % 2
            ? [
                '{"x":',
                '[]',
                '{"config": {"chunk_size": "-5"}}',
                '{"config": {"dim": "abc"}}',
                '{"model_config": {"service_provider": "nope"}}',
                `{"config": {"main_folder": "${'../'.repeat(5)}"`,
              ][Math.floor(n / 2) % 6]!
            : ['{"x":', '[]', '{"question": 7}', 'null', '{"question": ""}', '{"question": {"a": 1}}'][
                Math.floor(n / 2) % 6
              ]!,
        ),
    },
    {
      name: 'ui: unknown routes, methods, static traversal',
      weight: 5,
      run: (n) =>
        request(
          U,
          ['GET', 'DELETE', 'PUT', 'GET', 'GET', 'POST'][n % 6]!,
          [
            '/api/nope',
            '/api/files',
            '/api/config',
            '/assets/..%2f..%2fpackage.json',
            '/assets/%2e%2e%2fapp.ts',
            '/api/build/events/x',
          ][n % 6]!,
          origin,
          null,
        ),
    },
    {
      name: 'ui: accepted upload',
      weight: 1,
      run: async (n) => {
        const m = multipart([{ name: `ok-${n % 20}.txt`, bytes: `An accepted upload, number ${n}.\n` }]);
        const r = await request(
          U,
          'POST',
          '/api/files?overwrite=1',
          { ...origin, 'Content-Type': m.type },
          m.body,
        );
        if (r.status === 200) uploadsAccepted++;
        return r;
      },
    },
  ];

  const random = rng(SEED + 1);
  const total = kinds.reduce((s, k) => s + k.weight, 0);
  const pick = (): AbuseKind => {
    let x = random() * total;
    for (const k of kinds) {
      x -= k.weight;
      if (x < 0) return k;
    }
    return kinds[kinds.length - 1]!;
  };
  const byKind = new Map<string, { n: number; statuses: Map<string, number> }>();
  let requests = 0;
  let fiveXX = 0;
  const note = (kind: string, r: Reply) => {
    requests++;
    if (r.status !== null && r.status >= 500) fiveXX++;
    const e = byKind.get(kind) ?? { n: 0, statuses: new Map<string, number>() };
    e.n++;
    const key = r.status === null ? r.how : String(r.status);
    e.statuses.set(key, (e.statuses.get(key) ?? 0) + 1);
    byKind.set(kind, e);
  };

  const t0 = performance.now();
  const deadline = Date.now() + ABUSE_MS;
  // Slow clients: partial headers one piece every 400 ms (then they give up), and slow bodies,
  // held for the first part of the run while the other requests go on.
  const slow: Promise<void>[] = [];
  for (let c = 0; c < 40; c++) {
    const port = c % 2 ? U : S;
    const kind = c % 4 < 2 ? 'slow client: partial headers' : 'slow client: body a byte at a time';
    slow.push(
      (async () => {
        const r =
          c % 4 < 2
            ? await raw(port, '', [], {
                slowMs: 400,
                timeoutMs: 12_000,
                headPieces: [
                  'POST /answer HTTP/1.1\r\n',
                  `Host: 127.0.0.1:${port}\r\n`,
                  ...Array.from({ length: 20 }, (_, i) => `X-Slow-${i}: ${i}\r\n`),
                ],
              })
            : await raw(
                port,
                `POST ${port === S ? '/answer' : '/api/chat'} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: http://127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close`,
                Array.from({ length: 20 }, () => 'a'),
                { slowMs: 400, leaveAfter: 20, timeoutMs: 12_000 },
              );
        note(kind, r);
      })(),
    );
  }
  let healthChecks = 0;
  let healthyDuring = 0;
  const health = (async () => {
    while (Date.now() < deadline && requests < ABUSE_TARGET) {
      for (const [port, path] of [
        [S, '/health'],
        [U, '/api/status'],
      ] as const) {
        healthChecks++;
        const r = await request(port, 'GET', path, {}, null);
        if (r.status === 200) healthyDuring++;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  const workers = Array.from({ length: 12 }, async () => {
    let n = 0;
    while (Date.now() < deadline && requests < ABUSE_TARGET) {
      const k = pick();
      note(k.name, await k.run(n++));
      if (requests % 1000 === 0) console.log(`  ${requests} requests, ${fiveXX} 5xx`);
    }
  });
  await Promise.all([...workers, ...slow, health]);
  const ms = performance.now() - t0;
  // The servers are still up: a last health check of each.
  for (const [port, path] of [
    [S, '/health'],
    [U, '/api/status'],
  ] as const) {
    healthChecks++;
    if ((await request(port, 'GET', path, {}, null)).status === 200) healthyDuring++;
  }
  await search.stop();
  await ui.stop();

  placeLinks();
  const after = outsideSnapshot();
  const outsideWrites: string[] = [];
  for (const [p, v] of after)
    if (before.get(p) !== v) outsideWrites.push(`${p} (${before.has(p) ? 'changed' : 'new'})`);
  for (const p of before.keys()) if (!after.has(p)) outsideWrites.push(`${p} (gone)`);
  outsideWrites.push(...markerHits().map((h) => relative(REPO_ROOT, h)));
  // Names in input/ that the guards should have refused.
  const unsafeInputNames = readdirSync(input).filter(
    (n) =>
      Buffer.byteLength(n) > 255 ||
      // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters looked for
      /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/.test(n) ||
      n.startsWith('.noderag-upload-') ||
      n.includes(MARK),
  );
  const accessLog5xx = search
    .out()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      try {
        return JSON.parse(l) as { status?: number };
      } catch {
        return {};
      }
    })
    .filter((l) => (l.status ?? 0) >= 500).length;
  const stackLines = (search.out() + ui.out()).split('\n').filter((l) => /^\s+at .+[(:]/.test(l)).length;
  return {
    requests,
    fiveXX,
    accessLog5xx,
    outsideWrites,
    unsafeInputNames,
    stackLines,
    ms,
    byKind,
    healthyDuring,
    healthChecks,
    uploadsAccepted,
  };
}

// ---------------------------------------------------------------------------------------------

const t0 = performance.now();
const soakResult = await soak();
const soakMs = performance.now() - t0;
const a = await abuse();
const totalMs = performance.now() - t0;

const { trials } = soakResult;
const mismatches = trials.filter((t) => t.mismatched.length > 0).length;
const unservable = trials.filter((t) => !t.servable).length;
const leakedFiles = trials.reduce((s, t) => s + t.leaked.length, 0);
const outsideWrites = a.outsideWrites.length + a.unsafeInputNames.length;
const abuse5xx = a.fiveXX + a.accessLog5xx;

// Trials summarised by mode and stage reached.
const groups = new Map<string, Trial[]>();
for (const t of trials) {
  const key = `${t.mode}|${t.stage}`;
  groups.set(key, [...(groups.get(key) ?? []), t]);
}
const stageRows = [...groups.entries()]
  .sort(([x], [y]) => x.localeCompare(y))
  .map(([key, ts]) => {
    const [mode, stage] = key.split('|');
    const kills = ts
      .map((t) => t.killAtMs)
      .filter((k): k is number => k !== null)
      .sort((x, y) => x - y);
    const bad = ts.filter((t) => t.mismatched.length || t.leaked.length || !t.servable);
    return [
      mode!,
      stage!,
      String(ts.length),
      kills.length === 0
        ? '– (ended first)'
        : kills.length > 1
          ? `${kills[0]}–${kills[kills.length - 1]}`
          : String(kills[0]),
      bad.length ? `${bad.length} failed` : 'all identical, served',
    ];
  });
const stageTable = markdownTable(
  ['build', 'stage reached at the kill', 'trials', 'kill sent (ms after spawn)', 'outcome'],
  stageRows,
);
const trialTable = markdownTable(
  ['#', 'build', 'seeded kill time', 'kill sent (ms after spawn)', 'stage reached', 're-run (ms)', 'outcome'],
  trials.map((t) => [
    String(t.i),
    t.mode,
    t.plan,
    t.killAtMs === null ? '– (ended first)' : String(t.killAtMs),
    t.stage,
    t.rerunMs.toFixed(0),
    t.mismatched.length || t.leaked.length || !t.servable
      ? [...t.mismatched, ...t.leaked.map((l) => `leaked ${l}`), t.note].filter(Boolean).join(', ')
      : 'identical, served',
  ]),
);
const abuseTable = markdownTable(
  ['request kind', 'requests', 'replies'],
  [...a.byKind.entries()]
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([k, v]) => [
      k,
      String(v.n),
      [...v.statuses.entries()]
        .sort(([x], [y]) => x.localeCompare(y))
        .map(([s, c]) => `${s}×${c}`)
        .join(' '),
    ]),
);

console.log('');
console.log(stageTable);
console.log('');
console.log(abuseTable);
console.log('');
console.log(
  `abuse: ${a.requests} requests in ${(a.ms / 1000).toFixed(1)} s; 5xx seen ${a.fiveXX}, in the access log ${a.accessLog5xx}; ` +
    `health ${a.healthyDuring}/${a.healthChecks}; stack lines in server output ${a.stackLines}; ` +
    `uploads accepted ${a.uploadsAccepted}`,
);
if (a.outsideWrites.length) console.log(`outside writes: ${a.outsideWrites.join(', ')}`);
if (a.unsafeInputNames.length)
  console.log(`unsafe names in input/: ${a.unsafeInputNames.map((n) => JSON.stringify(n)).join(', ')}`);
console.log(`total ${(totalMs / 1000).toFixed(0)} s (soak ${(soakMs / 1000).toFixed(0)} s)`);

const resultLine = `RESULT crash trials=${trials.length} mismatches=${mismatches} unservable=${unservable} leaked_files=${leakedFiles} abuse_requests=${a.requests} abuse_5xx=${abuse5xx} outside_writes=${outsideWrites}`;

if (!opts['no-write']) {
  const incremental = trials.filter((t) => t.mode === 'incremental').length;
  writeResultsSection(
    'crash',
    [
      `\`npm run bench -- crash${opts.code === 'head' ? ' --code head' : ''}\` (seed ${SEED}): the adversarial run of issue 18, on ${CODE_NOTE} (copied to bench/.data/crash/code for the run). Total ${(totalMs / 1000).toFixed(0)} s on this machine (soak ${(soakMs / 1000).toFixed(0)} s, abuse ${(a.ms / 1000).toFixed(0)} s).`,
      '',
      `**Crash-consistency soak.** The first ${PARAGRAPHS} HotpotQA paragraphs (bench/data/hotpotqa), local provider, offline. References built uninterrupted: ${soakResult.refs}. ` +
        `${trials.length} trials (${trials.length - incremental} full builds, ${incremental} incremental: ${BASE_PARAGRAPHS} paragraphs built, then ${PARAGRAPHS - BASE_PARAGRAPHS} added): each runs \`noderag build -f DIR --yes\` (tsx CLI entry) in its own process group, ` +
        'kills the group with SIGKILL at a seeded random time (15% of trials: within the startup of the reference run, timed from the spawn; the others: within 90% of the pipeline time of the reference run, timed from the first stage line of the build itself, since the length of the startup varies most with load), runs the build again to completion, and compares every cache/ file (response_cache aside) and the generation in info/state.json byte for byte with the reference of its kind; ' +
        'then NodeSearch loads the index and answers one question. A leaked file is any path of the project (input/ aside) the reference does not have, after the re-run or after loading for search. ' +
        `${trials.filter((t) => t.killed).length} of the ${trials.length} builds were killed; 'exited 0 (finished)' means the build ended before its kill time (the machine's load moves build times), 'startup' that no stage line had been printed yet (INIT runs there), 'Build finished, exiting' that the kill came after the last line, before the process ended.`,
      '',
      stageTable,
      '',
      `<details><summary>Every trial</summary>\n\n${trialTable}\n\n</details>`,
      '',
      `**Abuse run.** \`noderag search --access-log\` and \`noderag ui\` on 127.0.0.1, 12 concurrent clients plus 40 slow clients (partial headers or a byte of body every 400 ms, giving up after 12 s), bounded at ${ABUSE_TARGET} requests or ${ABUSE_MS / 1000} s. ` +
        'A symbolic link in input/ points at a canary file in a folder beside the project (re-placed before each overwrite attempt), another at a file that does not exist there, a third at the canary folder. ' +
        `${a.requests} requests in ${(a.ms / 1000).toFixed(1)} s; 5xx replies seen by clients: ${a.fiveXX}; 5xx in the search access log (which also records requests whose client left): ${a.accessLog5xx}; ` +
        `health checks answered during the run: ${a.healthyDuring}/${a.healthChecks}; stack-trace lines in the servers' output: ${a.stackLines}; uploads accepted (allowed names, and overwrites of a link name, which replace the link itself): ${a.uploadsAccepted}. ` +
        `Writes outside input/ (every path under the work folder but input/, compared before and after, plus entries named after the marker beside the repository, the work folder and the temp folder): ${a.outsideWrites.length}; names in input/ the guards should have refused: ${a.unsafeInputNames.length}. ` +
        "Replies: a status, or 'disconnected' (the client left mid-body, by design), 'timeout' (a slow client gave up), 'reset' (the connection was reset before the client read a reply: seen only on bodies over the limit, which the server answers with 413 and closes with the rest of the body unread, while this client is still sending).",
      '',
      abuseTable,
      '',
      '```',
      resultLine,
      '```',
    ].join('\n'),
  );
}
console.log(resultLine);
