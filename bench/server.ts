/**
 * `npm run bench -- server [--duration S] [--connections 10,50,200] [--profile] [--in-process]`
 *
 * Load test of POST /retrieval on 127.0.0.1: the real `noderag search -f <folder>` command
 * (spawned) serves the HotpotQA-100 index (local provider: the question's embedding and
 * decomposition are computed in process, so the numbers are the server's own cost), and
 * autocannon drives it at 10, 50 and 200 connections for 30 s each, rotating the 100
 * questions. Errors = non-2xx replies + socket errors + timeouts (10 s). The server's RSS is read
 * from /proc before and after. autocannon runs in this process on the same 2 cores as the
 * server, so the load generator takes CPU from it (the table reports its CPU per request), and
 * in the default scheduling class it preempts the server's workers when replies wake it (the
 * table reports their preemptions per request); the 2-worker server is measured a second time
 * with this process in the batch class (bench/lib/client-class.ts), which stops that.
 *
 * Then two more measurements: POST /answer with "stream": true (time to the first event and
 * to the end of the stream, 1 and 10 clients at a time) on a cache-off server, and the
 * default server without and with --api-key in alternating turns (auth_overhead_ratio), and the
 * cache-off server without and with --access-log, the same way (its cost, in the text only).
 *
 * With --profile (or when a goal is missed) a second, short run at 50 connections under
 * `node --cpu-prof` lists the server's top functions by self time.
 *
 * With --in-process, first the CPU time per question of the same work without HTTP
 * (bench/lib/in-process-cpu.ts): a number that moves little with the machine's other load.
 */

import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { clientClassAvailable, setClientClass } from './lib/client-class.js';
import { topSelfTime } from './lib/cpu-profile.js';
import { BENCH_DATA, ensureHotpotIndex, loadQuestions } from './lib/hotpot.js';
import { inProcessCpu } from './lib/in-process-cpu.js';
import { writeResultsSection } from './lib/results-md.js';
import {
  buildDist,
  type SpawnedServer,
  spawnFloorServer,
  spawnSearchServer,
  treeUsage,
} from './lib/spawned-server.js';
import { fmt, markdownTable, mib, percentile } from './lib/stats.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '30' },
    connections: { type: 'string', default: '10,50,200' },
    profile: { type: 'boolean', default: false },
    'in-process': { type: 'boolean', default: false },
  },
});
const duration = Number(args.duration);
const levels = args.connections.split(',').map(Number);
if (!(duration > 0) || levels.some((c) => !Number.isInteger(c) || c < 1)) {
  console.error('--duration must be > 0 seconds and --connections a comma list of positive integers');
  process.exit(2);
}
const GOALS = { rps: 3000, p99: 20, errors: 0 };

const folder = ensureHotpotIndex();
const bodies = loadQuestions().map((q) => JSON.stringify({ question: q.question }));

interface Row {
  connections: number;
  requests: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  non2xx: number;
  socketErrors: number;
  timeouts: number;
  errors: number;
  rssBefore: number;
  rssAfter: number;
  /** Server CPU time (user + system) per completed request. */
  cpuMsPerRequest: number;
  /** Preemptions of the server's main threads (processTree) per completed request. */
  preemptionsPerRequest: number;
  /** CPU time of this process (autocannon, the load generator) per completed request. */
  clientCpuMsPerRequest: number;
  /** 1-minute load average of the machine at the end of the row. */
  load: number;
}

/** POST /retrieval load; with `apiKey`, each request carries `Authorization: Bearer <apiKey>`. */
async function load(
  url: string,
  connections: number,
  seconds: number,
  apiKey?: string,
): Promise<autocannon.Result> {
  let next = 0;
  return autocannon({
    url: `${url}/retrieval`,
    connections,
    duration: seconds,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        },
        setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }),
      },
    ],
  });
}

/** One POST /retrieval that must succeed; returns the reply's bytes. */
async function sanity(url: string): Promise<Buffer> {
  const r = await fetch(`${url}/retrieval`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: bodies[0],
  });
  const bytes = Buffer.from(await r.arrayBuffer());
  const body = JSON.parse(bytes.toString('utf8')) as { retrieval?: string };
  if (r.status !== 200 || !body.retrieval)
    throw new Error(`POST /retrieval answered ${r.status}: ${bytes.toString('utf8').slice(0, 300)}`);
  return bytes;
}

interface StreamRow {
  concurrency: number;
  requests: number;
  errors: number;
  /** ms from sending the request to the first byte of the first event. */
  firstEvent: number[];
  /** ms from sending the request to the end of the stream (after the done event). */
  whole: number[];
  deltas: number;
}

/**
 * POST /answer with "stream": true from `concurrency` loops for `seconds`, the questions
 * rotated: the time to the first event and to the end of each stream (fetch client).
 */
async function streamLoad(url: string, concurrency: number, seconds: number): Promise<StreamRow> {
  const row: StreamRow = { concurrency, requests: 0, errors: 0, firstEvent: [], whole: [], deltas: 0 };
  const end = performance.now() + seconds * 1000;
  let next = 0;
  const loop = async () => {
    while (performance.now() < end) {
      const question = JSON.parse(bodies[next++ % bodies.length]!).question as string;
      const t0 = performance.now();
      try {
        const res = await fetch(`${url}/answer`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ question, stream: true }),
        });
        if (res.status !== 200 || !res.body) throw new Error(`status ${res.status}`);
        let first = -1;
        let text = '';
        for await (const chunk of res.body) {
          if (first < 0) first = performance.now() - t0;
          text += Buffer.from(chunk).toString('utf8');
        }
        if (!text.includes('"type":"done"')) throw new Error('no done event');
        row.firstEvent.push(first);
        row.whole.push(performance.now() - t0);
        row.deltas += text.split('"type":"delta"').length - 1;
        row.requests++;
      } catch {
        row.errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return row;
}

/**
 * The servers measured: the retrieval cache off, so every request pays the whole retrieval
 * (the server's real cost per question; the RESULT line takes the better of these two), with
 * one process and with one per core; the default server, where the 100 rotated
 * questions are all retrieved from its cache after their first time; and the floor, a plain
 * node:http server sending a saved reply (no search), spawned instead of `noderag search`.
 */
const ALL_MODES = [
  { name: 'cache off, 1 worker', args: ['--cache-size', '0'], kind: 'uncached', client: 'default' },
  {
    name: 'cache off, 2 workers',
    args: ['--cache-size', '0', '--workers', '2'],
    kind: 'uncached',
    client: 'default',
  },
  // The same server, the load generator in the batch scheduling class (bench/lib/client-class.ts):
  // it no longer preempts a worker at every reply, closer to a client on another machine.
  {
    name: 'cache off, 2 workers, client in the batch class',
    args: ['--cache-size', '0', '--workers', '2'],
    kind: 'uncached',
    client: 'batch',
  },
  { name: 'cache on (default), 1 worker', args: [] as string[], kind: 'cached', client: 'default' },
  // Peer in the same run: what plain node:http costs with the same client, reply and cores.
  { name: 'floor: plain node:http, fixed reply', args: [] as string[], kind: 'floor', client: 'default' },
] as const;
const batchClass = clientClassAvailable();
if (!batchClass) console.log('chrt is not available: the batch-class client row is skipped.');
const MODES = ALL_MODES.filter((m) => m.client === 'default' || batchClass);
type Mode = (typeof ALL_MODES)[number]['name'];
const modeNamed = (mode: Mode) => ALL_MODES.find((m) => m.name === mode)!;
const kindOf = (mode: Mode) => modeNamed(mode).kind;

interface ModeRun {
  mode: Mode;
  rows: Row[];
  /** Latency of lone requests (one at a time). */
  serial: number[];
  startMs: number;
}

buildDist();
const loadAtStart = loadavg()[0]!;
let inProcessText = '';
if (args['in-process']) {
  const r = await inProcessCpu(
    folder,
    loadQuestions().map((q) => q.question),
  );
  inProcessText = `In process (NodeSearch.search, cache off, + the /retrieval reply body; ${r.questionsPerRound} questions per round): CPU ${r.roundsUs.map((u) => fmt(u, 0)).join(', ')} µs per question, median ${fmt(r.medianUs, 0)} µs (load average ${fmt(loadavg()[0]!, 1)}).`;
  console.log(inProcessText);
}
const runs: ModeRun[] = [];
/** A real /retrieval reply (of the first question), which the floor server sends back. */
const floorReply = join(BENCH_DATA, 'server-floor-reply.json');
for (const mode of MODES) {
  const server =
    mode.kind === 'floor'
      ? await spawnFloorServer(floorReply)
      : await spawnSearchServer(folder, { args: [...mode.args] });
  const run: ModeRun = { mode: mode.name, rows: [], serial: [], startMs: server.startMs };
  runs.push(run);
  try {
    const reply = await sanity(server.url);
    if (mode.kind !== 'floor') writeFileSync(floorReply, reply);
    // One request at a time: the latency of a lone request, without queueing.
    for (let i = 0; i < bodies.length; i++) {
      const t = performance.now();
      const r = await fetch(`${server.url}/retrieval`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: bodies[i],
      });
      await r.arrayBuffer();
      run.serial.push(performance.now() - t);
    }
    // After the spawn: the server keeps the default class.
    if (mode.client === 'batch') setClientClass('batch');
    await load(server.url, 10, Math.min(3, duration)); // warm-up (JIT, tokenizer), not reported
    for (const connections of levels) {
      const before = treeUsage(server.pid);
      const clientBefore = process.cpuUsage();
      const r = await load(server.url, connections, duration);
      const client = process.cpuUsage(clientBefore);
      const after = treeUsage(server.pid);
      const cpuMs = after.cpuMs - before.cpuMs;
      const rssBefore = before.rss;
      const rssAfter = after.rss;
      // autocannon's `errors` already includes the timeouts.
      const errors = r.non2xx + r.errors;
      run.rows.push({
        connections,
        requests: r.requests.total,
        rps: r.requests.average,
        p50: r.latency.p50,
        p90: r.latency.p90,
        p99: r.latency.p99,
        max: r.latency.max,
        non2xx: r.non2xx,
        socketErrors: r.errors - r.timeouts,
        timeouts: r.timeouts,
        errors,
        rssBefore,
        rssAfter,
        cpuMsPerRequest: cpuMs / Math.max(1, r.requests.total),
        preemptionsPerRequest: (after.preemptions - before.preemptions) / Math.max(1, r.requests.total),
        clientCpuMsPerRequest: (client.user + client.system) / 1000 / Math.max(1, r.requests.total),
        load: loadavg()[0]!,
      });
      console.log(
        `${mode.name}, ${connections} connections: ${fmt(r.requests.average, 0)} req/s, p99 ${r.latency.p99} ms, errors ${errors}`,
      );
    }
  } finally {
    if (mode.client === 'batch') setClientClass('default');
    await server.stop();
  }
}
// Streaming: POST /answer "stream": true on a cache-off server (every request a whole
// retrieval, then the local provider's answer in word pieces), one and 10 clients at a time.
const STREAM_LEVELS = [1, 10];
const streamSeconds = Math.min(10, duration);
const streamRows: StreamRow[] = [];
{
  const server = await spawnSearchServer(folder, { args: ['--cache-size', '0'] });
  try {
    await streamLoad(server.url, 4, Math.min(2, streamSeconds)); // warm-up, not reported
    for (const c of STREAM_LEVELS) {
      const row = await streamLoad(server.url, c, streamSeconds);
      streamRows.push(row);
      console.log(
        `stream, ${c} at a time: first event p50 ${fmt(percentile(row.firstEvent, 50), 1)} ms, p99 ${fmt(percentile(row.firstEvent, 99), 1)} ms, errors ${row.errors}`,
      );
    }
  } finally {
    await server.stop();
  }
}

/** Totals of one side of a turns measurement (see `inTurns`). */
interface TurnTotals {
  requests: number;
  seconds: number;
  errors: number;
  cpuMs: number;
  p99: number[];
}

/**
 * Two servers, both running, loaded in turns (A B A B …, `rounds` times each, `seconds` per
 * turn after a warm-up of each): the two sides share whatever else the machine does, and the
 * server CPU per request does not depend on how much CPU the other load left them.
 */
async function inTurns(
  what: string,
  sides: Record<'off' | 'on', { spawn: () => Promise<SpawnedServer>; apiKey?: string }>,
): Promise<Record<'off' | 'on', TurnTotals>> {
  const totals = {
    off: { requests: 0, seconds: 0, errors: 0, cpuMs: 0, p99: [] as number[] },
    on: { requests: 0, seconds: 0, errors: 0, cpuMs: 0, p99: [] as number[] },
  };
  const servers: Partial<Record<'off' | 'on', SpawnedServer>> = {};
  try {
    servers.off = await sides.off.spawn();
    servers.on = await sides.on.spawn();
    for (const side of ['off', 'on'] as const) {
      await load(servers[side]!.url, 10, Math.min(3, turnSeconds), sides[side].apiKey);
    }
    for (let round = 0; round < TURN_ROUNDS; round++) {
      for (const side of ['off', 'on'] as const) {
        const server = servers[side]!;
        const before = treeUsage(server.pid);
        const r = await load(server.url, TURN_CONNECTIONS, turnSeconds, sides[side].apiKey);
        const t = totals[side];
        t.cpuMs += treeUsage(server.pid).cpuMs - before.cpuMs;
        t.requests += r.requests.total;
        t.seconds += r.duration;
        t.errors += r.non2xx + r.errors;
        t.p99.push(r.latency.p99);
        console.log(
          `${what} ${side}, round ${round + 1}: ${fmt(r.requests.average, 0)} req/s, p99 ${r.latency.p99} ms`,
        );
      }
    }
  } finally {
    await servers.off?.stop();
    await servers.on?.stop();
  }
  return totals;
}

const turnRps = (t: TurnTotals) => t.requests / Math.max(1e-9, t.seconds);
const turnCpu = (t: TurnTotals) => t.cpuMs / Math.max(1, t.requests);

/** The table of a turns measurement: one row per side. */
function turnsTable(
  server: string,
  labels: Record<'off' | 'on', string>,
  totals: Record<'off' | 'on', TurnTotals>,
) {
  return markdownTable(
    [
      server,
      'connections',
      'seconds',
      'requests',
      'req/s',
      'p99 ms per turn',
      'errors',
      'server CPU ms / request',
    ],
    (['off', 'on'] as const).map((side) => [
      labels[side],
      TURN_CONNECTIONS,
      fmt(totals[side].seconds, 0),
      totals[side].requests,
      fmt(turnRps(totals[side]), 0),
      totals[side].p99.join(', '),
      totals[side].errors,
      fmt(turnCpu(totals[side]), 3),
    ]),
  );
}

const TURN_CONNECTIONS = 50;
const turnSeconds = Math.min(10, duration);
const TURN_ROUNDS = 3;

// Auth: the default server (cache on: the HTTP layer is most of a request, so a per-request
// cost shows most) without and with --api-key.
const AUTH_KEY = 'bench-key-0123456789abcdef';
const authTotals = await inTurns('auth', {
  off: { spawn: () => spawnSearchServer(folder) },
  on: { spawn: () => spawnSearchServer(folder, { args: ['--api-key', AUTH_KEY] }), apiKey: AUTH_KEY },
});
const authRatio = turnRps(authTotals.off) / turnRps(authTotals.on);

// Access log: the cache-off server (every request a whole retrieval, as the log's
// retrieval_tokens counts each context) without and with --access-log, its lines going to a
// file as a deployment's would (a pipe to this process would charge their reading to the client).
const logDir = mkdtempSync(join(tmpdir(), 'noderag-bench-log-'));
const logFd = openSync(join(logDir, 'access.log'), 'w');
let logTotals: Record<'off' | 'on', TurnTotals>;
let loggedLines = 0;
try {
  logTotals = await inTurns('access log', {
    off: { spawn: () => spawnSearchServer(folder, { args: ['--cache-size', '0'] }) },
    on: {
      spawn: () => spawnSearchServer(folder, { args: ['--cache-size', '0', '--access-log'], stdout: logFd }),
    },
  });
  loggedLines = readFileSync(join(logDir, 'access.log'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{"time"')).length;
} finally {
  closeSync(logFd);
  rmSync(logDir, { recursive: true, force: true });
}
const logRatio = turnRps(logTotals.off) / turnRps(logTotals.on);

const rows = runs.flatMap((r) => r.rows);
const modeOf = new Map(runs.flatMap((run) => run.rows.map((row) => [row, run.mode] as const)));
const peakRss = (() => {
  // VmHWM of the exited process is gone; report the larger "after" reading instead.
  return Math.max(...rows.map((r) => r.rssAfter));
})();

const table = markdownTable(
  [
    'server',
    'connections',
    'requests',
    'req/s',
    'p50 ms',
    'p90 ms',
    'p99 ms',
    'max ms',
    'non-2xx',
    'socket errors',
    'timeouts',
    'RSS before MiB',
    'RSS after MiB',
    'server CPU ms / request',
    'server preemptions / request',
    'client CPU ms / request',
    'load avg (1 min)',
  ],
  rows.map((r) => [
    modeOf.get(r)!,
    r.connections,
    r.requests,
    fmt(r.rps, 0),
    r.p50,
    r.p90,
    r.p99,
    r.max,
    r.non2xx,
    r.socketErrors,
    r.timeouts,
    mib(r.rssBefore),
    mib(r.rssAfter),
    fmt(r.cpuMsPerRequest, 2),
    fmt(r.preemptionsPerRequest, 2),
    fmt(r.clientCpuMsPerRequest, 3),
    fmt(r.load, 1),
  ]),
);
// The RESULT line reports a cache-off server (every request a full retrieval) at 50
// connections (the middle load; else the best row), the faster of its two set-ups.
const uncachedRows = runs
  .filter((run) => kindOf(run.mode) === 'uncached' && modeNamed(run.mode).client === 'default')
  .flatMap((run) => run.rows);
const at50 = uncachedRows.filter((r) => r.connections === 50);
const headline = (at50.length > 0 ? at50 : uncachedRows).reduce((a, b) => (b.rps > a.rps ? b : a));
const headlineMode = modeOf.get(headline)!;
const totalErrors = runs.find((run) => run.mode === headlineMode)!.rows.reduce((s, r) => s + r.errors, 0);
const missed: string[] = [];
if (headline.rps < GOALS.rps) missed.push(`throughput ${fmt(headline.rps, 0)} < ${GOALS.rps} req/s`);
if (headline.p99 > GOALS.p99) missed.push(`p99 ${headline.p99} ms > ${GOALS.p99} ms`);
if (totalErrors > GOALS.errors) missed.push(`${totalErrors} errors`);

// Profile: where the server's time goes, at 50 connections.
let profileText = '';
if (args.profile || missed.length > 0) {
  const dir = join(BENCH_DATA, 'server-profile');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const profiled = await spawnSearchServer(folder, {
    nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
    // One process: a --workers server would write one profile per process.
    args: [...ALL_MODES[0].args],
  });
  const seconds = Math.min(10, duration);
  try {
    await load(profiled.url, 10, Math.min(2, seconds));
    await load(profiled.url, 50, seconds);
  } finally {
    await profiled.stop();
  }
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (file) {
    const top = topSelfTime(JSON.parse(readFileSync(join(dir, file), 'utf8')), 15);
    profileText = [
      `CPU profile of the ${ALL_MODES[0].name} server (\`node --cpu-prof\`, whole process life, ${seconds} s at 50 connections after start-up), top functions by self time:`,
      '',
      markdownTable(
        ['function', 'location', 'self ms', 'self %'],
        top.map((t) => [t.name, t.location, fmt(t.selfMs, 0), fmt(t.percent, 1)]),
      ),
    ].join('\n');
  } else {
    profileText = `CPU profile: no .cpuprofile written in ${dir} (the server did not exit cleanly).`;
  }
}

const streamTtfbP50 = percentile(streamRows[0]?.firstEvent ?? [], 50);
// The same server and connections with the load generator in the batch class, beside the
// headline (which keeps the default class, as every earlier run measured it).
const batchRow = runs
  .find((run) => modeNamed(run.mode).client === 'batch')
  ?.rows.find((r) => r.connections === headline.connections);
const batchKeys = batchRow
  ? ` batch_client_rps=${fmt(batchRow.rps, 0)} batch_client_p99_ms=${batchRow.p99}`
  : '';
const resultLine = `RESULT server rps=${fmt(headline.rps, 0)} p99_ms=${headline.p99} errors=${headline.errors} stream_ttfb_p50_ms=${fmt(streamTtfbP50, 1)} auth_overhead_ratio=${fmt(authRatio, 3)}${batchKeys}`;
const streamTable = markdownTable(
  [
    'clients at a time',
    'streams',
    'errors',
    'first event p50 ms',
    'first event p99 ms',
    'whole stream p50 ms',
    'whole stream p99 ms',
    'delta events / stream',
  ],
  streamRows.map((r) => [
    r.concurrency,
    r.requests,
    r.errors,
    fmt(percentile(r.firstEvent, 50), 1),
    fmt(percentile(r.firstEvent, 99), 1),
    fmt(percentile(r.whole, 50), 1),
    fmt(percentile(r.whole, 99), 1),
    fmt(r.deltas / Math.max(1, r.requests), 1),
  ]),
);
const authTable = turnsTable(
  'server (cache on, 1 worker)',
  { off: 'no API key', on: '--api-key (Bearer checked per request)' },
  authTotals,
);
const authVerdict =
  `auth_overhead_ratio = req/s without key / with key = ${fmt(turnRps(authTotals.off), 0)} / ${fmt(turnRps(authTotals.on), 0)} = ${fmt(authRatio, 3)} (goal ≤ 1.05: ${authRatio <= 1.05 ? 'met' : 'MISSED'}). ` +
  `Server CPU per request with key / without: ${fmt(turnCpu(authTotals.on), 3)} / ${fmt(turnCpu(authTotals.off), 3)} ms = ${fmt(turnCpu(authTotals.on) / turnCpu(authTotals.off), 3)} (less sensitive to the machine's other load than req/s).`;
const logTable = turnsTable(
  'server (cache off, 1 worker)',
  { off: 'no access log', on: '--access-log (to a file)' },
  logTotals,
);
const logVerdict = `Access log: req/s without / with = ${fmt(turnRps(logTotals.off), 0)} / ${fmt(turnRps(logTotals.on), 0)} = ${fmt(logRatio, 3)}; server CPU per request with / without: ${fmt(turnCpu(logTotals.on), 3)} / ${fmt(turnCpu(logTotals.off), 3)} ms = ${fmt(turnCpu(logTotals.on) / turnCpu(logTotals.off), 3)}; ${loggedLines} lines logged (the ${logTotals.on.requests} measured requests and the warm-up's).`;
const extrasText = [
  `Streaming: POST /answer with \`"stream": true\` on a cache-off server (\`--cache-size 0\`, 1 worker: each request a whole retrieval, then the \`local\` provider's answer in word pieces, one event-loop turn apart), ${streamSeconds} s per row, fetch client in the benchmark process, the 100 questions rotated. First event = the first body bytes (the first delta).`,
  '',
  streamTable,
  '',
  `Auth: the default server (cache on, 1 worker) without and with \`--api-key\`, both running, POST /retrieval at ${TURN_CONNECTIONS} connections in turns (off, on, … ${TURN_ROUNDS} times each, ${turnSeconds} s per turn after a warm-up).`,
  '',
  authTable,
  '',
  authVerdict,
  '',
  `Access log: the cache-off server (\`--cache-size 0\`, 1 worker) without and with \`--access-log\` (its stdout a file), both running, POST /retrieval at ${TURN_CONNECTIONS} connections in turns (off, on, … ${TURN_ROUNDS} times each, ${turnSeconds} s per turn after a warm-up).`,
  '',
  logTable,
  '',
  logVerdict,
].join('\n');
const serialText = [
  ...runs.map(
    (run) =>
      `${run.mode}: one request at a time (the 100 questions, fetch client): p50 ${fmt(percentile(run.serial, 50), 1)} ms, p99 ${fmt(percentile(run.serial, 99), 1)} ms; server start to ready ${fmt(run.startMs / 1000, 1)} s.`,
  ),
  `${cpus().length} cores, load average at start ${fmt(loadAtStart, 1)}.`,
  ...(inProcessText ? [inProcessText] : []),
].join('\n');
const verdict =
  missed.length === 0
    ? `Goals (≥ ${GOALS.rps} req/s, p99 ≤ ${GOALS.p99} ms, 0 errors) met by the ${headlineMode} server at ${headline.connections} connections.`
    : `Goals (≥ ${GOALS.rps} req/s, p99 ≤ ${GOALS.p99} ms, 0 errors) MISSED by the ${headlineMode} server at ${headline.connections} connections: ${missed.join('; ')}. ` +
      // Little's law: a saturated server holding N requests at throughput X answers each in
      // about N / X, so the latency goal needs the throughput goal first.
      `A saturated server answers in about connections / throughput (Little's law): ${headline.connections} / ${fmt(headline.rps, 0)} req/s = ${fmt((1000 * headline.connections) / headline.rps, 0)} ms (measured p50 ${headline.p50} ms); p99 ≤ ${GOALS.p99} ms at ${headline.connections} connections needs at least ${fmt((1000 * headline.connections) / GOALS.p99, 0)} req/s. ` +
      `Server CPU per request is ${fmt(headline.cpuMsPerRequest, 2)} ms: the profile below shows where it goes.`;

const floorRow = runs
  .find((run) => kindOf(run.mode) === 'floor')
  ?.rows.find((r) => r.connections === headline.connections);
const floorText = floorRow
  ? `Floor at ${floorRow.connections} connections (plain node:http, same client and reply): ${fmt(floorRow.rps, 0)} req/s, p50 ${floorRow.p50} ms, p99 ${floorRow.p99} ms, ${floorRow.errors} errors, ${fmt(floorRow.cpuMsPerRequest, 2)} ms server CPU per request.`
  : '';
const batchText = batchRow
  ? `Load generator in the batch scheduling class, same server and ${batchRow.connections} connections: ${fmt(batchRow.rps, 0)} req/s, p50 ${batchRow.p50} ms, p99 ${batchRow.p99} ms, ${batchRow.errors} errors (goals ${batchRow.rps >= GOALS.rps && batchRow.p99 <= GOALS.p99 && batchRow.errors === 0 ? 'met' : 'missed'}); ${fmt(batchRow.cpuMsPerRequest, 2)} ms of server CPU and ${fmt(batchRow.preemptionsPerRequest, 2)} preemptions of a worker per request, against ${fmt(headline.cpuMsPerRequest, 2)} ms and ${fmt(headline.preemptionsPerRequest, 2)} with the client in the default class, where a client woken by a reply takes the core from the worker running there.`
  : '';
const verdictWithFloor = [verdict, floorText, batchText].filter(Boolean).join('\n\n');

console.log(`\nPOST /retrieval load test, HotpotQA-100 index, ${duration} s per row\n`);
console.log(table);
console.log(`\n${serialText}\n${verdictWithFloor}`);
console.log(`\n${extrasText}`);
if (profileText) console.log(`\n${profileText}`);

if (duration >= 30) {
  writeResultsSection(
    'server',
    [
      'Load test of POST /retrieval on 127.0.0.1: the real `noderag search -f` command (spawned,',
      '`bin/noderag.js` on the compiled dist/, as installed) serving the HotpotQA-100 index built',
      'with the `local` provider (question embedding and decomposition computed in the server',
      'process, no network call), driven by autocannon 9 in the benchmark process on the same',
      `${cpus().length} cores, ${duration} s per row after a 3 s warm-up, the 100 questions rotated per request.`,
      'Three servers: **cache off** (`--cache-size 0`), one process and `--workers 2`: every request',
      "is a full retrieval, the server's real cost per question; **cache on** (the default, 1000",
      'questions): after its first time each of the 100 questions is retrieved from memory, so those',
      'rows measure the HTTP layer and the cache, what repeated questions cost. The RESULT line and',
      'the goal verdict use the faster cache-off server at 50 connections with the load generator in',
      'the default scheduling class. **client in the batch class**: the 2-worker cache-off server again,',
      'the benchmark process moved to SCHED_BATCH for its rows (`chrt -b`, bench/lib/client-class.ts):',
      'a client woken by a reply then waits for the end of the running slice instead of preempting',
      "the server's worker on that core, closer to a client on another machine; it still shares the",
      'cores, and reads replies only when it gets a core back (often at a scheduler tick), so its',
      'latencies are rounded up to that (its keys in the RESULT line: `batch_client_rps`,',
      '`batch_client_p99_ms`). Server',
      "preemptions: involuntary context switches of the server's main threads. **floor** is a peer in",
      'the same run: a plain node:http server (bench/lib/http-floor-server.mjs) that reads each body',
      'and sends a saved /retrieval reply, no framework and no search, i.e. what the HTTP layer alone',
      'costs with this client on these cores. Server CPU and RSS are summed over the server process',
      'and its workers; client CPU is that of the benchmark process (autocannon) during the row: the',
      `share of the ${cpus().length} cores the load generator takes from the server.`,
      'Errors = non-2xx + socket errors + timeouts (10 s, autocannon closes the connection). RSS from',
      `/proc of the server process before and after each row. Peak RSS seen: ${mib(peakRss)} MiB.`,
      '',
      `Command: \`npm run bench -- server\` (about ${Math.round((MODES.length * levels.length * (duration + 1) + 20 + STREAM_LEVELS.length * streamSeconds + 4 * TURN_ROUNDS * turnSeconds + 20) / 60)} min; \`--duration 5\` for a smoke run)`,
      '',
      table,
      '',
      serialText,
      '',
      verdictWithFloor,
      '',
      extrasText,
      ...(profileText ? ['', profileText] : []),
      '',
      resultLine,
    ].join('\n'),
  );
}
console.log(resultLine);
