/**
 * `npm run bench -- providers`: the rate limiter under load, through the real `openai` SDK
 * against the fake OpenAI server with 200 ms latency per request.
 *
 * For rate_limit 10, 40 and 100, enough concurrent callers to keep the limiter saturated
 * send RATE × SECONDS chat requests (the backlog is there from the first moment, so the
 * whole run is steady state). Measured:
 *
 * - achieved rate: the least-squares slope of arrival number over arrival time at the
 *   server (requests per second, whatever the shape of the traffic);
 * - the most starts in any one-second window at the client (the guarantee of §3.10) and
 *   the most arrivals in any one-second window at the server (what a provider counting per
 *   second would see, network and event-loop jitter included).
 *
 * Peer in the same run: a classic refilling token bucket (capacity = rate, refilled
 * continuously) with the same in-flight cap. It reaches the same average, but lets up to
 * twice the limit into one second, which docs/method.md §3.10 forbids.
 *
 * Last line: RESULT providers achieved_over_limit_min=<ratio> (ours; goal ≥ 0.95).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { type FakeOpenAIServer, startFakeOpenAI } from '../tests/helpers/fake-providers/index.js';
import { NodeConfig } from '../ts/config/node-config.js';
import { CachedProvider } from '../ts/llm/cached-provider.js';
import { systemClock } from '../ts/llm/clock.js';
import { createAdapter } from '../ts/llm/create-providers.js';
import { type Limiter, RateLimiter } from '../ts/llm/rate-limiter.js';
import { BUILD_RETRY_POLICY } from '../ts/llm/retry.js';
import { runTask } from '../ts/llm/run-task.js';

const RATES = [10, 40, 100];
const SECONDS = Number(process.env.BENCH_PROVIDERS_SECONDS ?? 8);
const LATENCY_MS = 200;

/** The peer: tokens refill continuously at `rate`/s up to `rate`; at most `rate` in flight. */
class RefillingTokenBucket implements Limiter {
  #tokens: number;
  #last = performance.now();
  #inFlight = 0;
  #queue: Array<() => void> = [];
  #timer = false;
  constructor(
    private readonly rate: number,
    private readonly onStart: (at: number) => void,
  ) {
    this.#tokens = rate;
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    await new Promise<void>((resolve) => {
      this.#queue.push(resolve);
      this.#pump();
    });
    try {
      return await fn();
    } finally {
      this.#inFlight--;
      this.#pump();
    }
  }
  #pump(): void {
    const now = performance.now();
    this.#tokens = Math.min(this.rate, this.#tokens + ((now - this.#last) / 1000) * this.rate);
    this.#last = now;
    while (this.#queue.length > 0 && this.#inFlight < this.rate && this.#tokens >= 1) {
      this.#tokens -= 1;
      this.#inFlight++;
      this.onStart(now);
      (this.#queue.shift() as () => void)();
    }
    if (this.#queue.length > 0 && this.#inFlight < this.rate && !this.#timer) {
      this.#timer = true;
      const wait = ((1 - this.#tokens) / this.rate) * 1000;
      setTimeout(
        () => {
          this.#timer = false;
          this.#pump();
        },
        Math.max(1, Math.ceil(wait)),
      );
    }
  }
}

interface Row {
  limiter: string;
  rate: number;
  requests: number;
  seconds: number;
  achieved: number;
  ratio: number;
  clientMaxPerSecond: number;
  serverMaxPerSecond: number;
}

/** Least-squares slope of i over t_i, in events per second. */
function slopePerSecond(times: number[]): number {
  const n = times.length;
  const meanT = times.reduce((a, b) => a + b, 0) / n;
  const meanI = (n - 1) / 2;
  let num = 0;
  let den = 0;
  times.forEach((t, i) => {
    num += (t - meanT) * (i - meanI);
    den += (t - meanT) ** 2;
  });
  return (num / den) * 1000;
}

/** Most events in any half-open window [t, t + 1000 ms). */
function maxPerSecond(sorted: number[]): number {
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < sorted.length; hi++) {
    while ((sorted[hi] as number) - (sorted[lo] as number) >= 1000) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

async function measure(
  server: FakeOpenAIServer,
  dir: string,
  name: string,
  rate: number,
  makeLimiter: (onStart: (at: number) => void) => Limiter,
): Promise<Row> {
  const config = NodeConfig.fromData(
    {
      model_config: { base_url: server.baseUrl, rate_limit: rate, api_keys: 'sk-bench' },
      embedding_config: { service_provider: 'local' },
    },
    dir,
    { env: {} },
  );
  // The limiter reports the moment it lets each request start, at the client.
  const starts: number[] = [];
  const limiter = makeLimiter((at) => starts.push(at));
  const provider = new CachedProvider({
    adapter: createAdapter(config, 'model_config'),
    section: 'model_config',
    retry: BUILD_RETRY_POLICY,
    limiter,
    timeouts: { chatMs: 120_000, embedMs: 60_000 },
    tokenCounter: { countTokens: (s) => Buffer.byteLength(s) },
  });
  server.reset();
  const n = rate * SECONDS;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      runTask(provider, 'English', 'query', { question: `Where is Paris ${i}?` }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const arrivals = server.requests.map((r) => r.at).sort((a, b) => a - b);
  if (arrivals.length !== n) throw new Error(`expected ${n} requests at the server, saw ${arrivals.length}`);
  const achieved = slopePerSecond(arrivals);
  return {
    limiter: name,
    rate,
    requests: n,
    seconds,
    achieved,
    ratio: achieved / rate,
    clientMaxPerSecond: maxPerSecond(starts.sort((a, b) => a - b)),
    serverMaxPerSecond: maxPerSecond(arrivals),
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'noderag-bench-providers-'));
  const server = await startFakeOpenAI({ latencyMs: LATENCY_MS });
  const rows: Row[] = [];
  try {
    for (const rate of RATES) {
      rows.push(
        await measure(
          server,
          dir,
          'noderag (paced + window cap)',
          rate,
          (on) => new RateLimiter(rate, systemClock, on),
        ),
      );
      await delay(100);
      rows.push(
        await measure(
          server,
          dir,
          'peer: refilling bucket',
          rate,
          (on) => new RefillingTokenBucket(rate, on),
        ),
      );
      await delay(100);
    }
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`fake OpenAI server, ${LATENCY_MS} ms latency, real openai SDK, ${SECONDS} windows per rate`);
  console.log('');
  console.log(
    '| limiter | rate_limit | requests | wall s | achieved req/s | achieved / limit | max starts in 1 s (client) | max arrivals in 1 s (server) |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.limiter} | ${r.rate} | ${r.requests} | ${r.seconds.toFixed(2)} | ${r.achieved.toFixed(2)} | ${r.ratio.toFixed(3)} | ${r.clientMaxPerSecond} | ${r.serverMaxPerSecond} |`,
    );
  }
  const ours = rows.filter((r) => r.limiter.startsWith('noderag'));
  const min = Math.min(...ours.map((r) => r.ratio));
  const overLimit = ours.filter((r) => r.clientMaxPerSecond > r.rate);
  console.log('');
  if (overLimit.length) {
    console.log(
      `ERROR: ours started more than rate_limit requests in one second at rate ${overLimit.map((r) => r.rate).join(', ')}`,
    );
  }
  console.log(`RESULT providers achieved_over_limit_min=${min.toFixed(3)}`);
}

await main();
