/**
 * Observability of the search server (issue 16 item 5): an `X-Request-Id` on every reply (the
 * client's when it sent a sane one, else a new UUID), an optional JSON access-log line per
 * request, and Prometheus metrics on `GET /metrics` through prom-client.
 *
 * With `--workers N` every worker answers a scrape with the sum over all workers: it asks the
 * primary (ts/cli/search-cluster.ts), which gathers each worker's registry through
 * prom-client's AggregatorRegistry. Counters and histograms are summed; the index gauges
 * take the lowest value (the generation every worker serves).
 * Routes are labelled by their pattern (`/answer`, `/v1/chat/completions`), unknown paths
 * as `unmatched`, so label cardinality stays bounded.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { SearchEngine } from './engine.js';
import { PROJECT_HEADER } from './project-header.js';

/** What a route reports for the access log (tokens are counted only when a log is kept). */
export interface RequestFacts {
  retrievalTokens?: () => number;
  answerTokens?: () => number;
}

/** The facts of each request being logged (only those: without an access log nothing is kept). */
const FACTS = new WeakMap<Context, RequestFacts>();

/** Lets a route add its token counts to the request's access-log line. */
export function noteFacts(c: Context, facts: RequestFacts): void {
  const kept = FACTS.get(c);
  if (kept) Object.assign(kept, facts);
}

/** How a streamed reply ended: its log line and metrics are written then, not at its start. */
export interface StreamOutcome {
  /** The code of the error event that ended it, or `client_closed` when the client left. */
  error?: string;
  retrievalTokens?: number;
  answerTokens?: number;
}

/** Streams being observed: the end each one will report. */
const STREAM_ENDS = new WeakMap<Context, Promise<StreamOutcome>>();

/**
 * Called by a route whose reply is a stream, before it returns: the request's log line and
 * metrics wait for the returned function (called once, when the stream ends). A no-op when
 * the request is not observed.
 */
export function streamEnd(c: Context): (outcome: StreamOutcome) => void {
  if (!OBSERVED.has(c)) return () => {};
  let report!: (outcome: StreamOutcome) => void;
  STREAM_ENDS.set(
    c,
    new Promise((resolve) => {
      report = resolve;
    }),
  );
  return report;
}

/** Requests the middleware measures (metrics or a log). */
const OBSERVED = new WeakSet<Context>();

/** Model calls made for the request being handled (kept only while an access log is). */
const CALLS = new AsyncLocalStorage<{ query: number }>();

/** Called by the counted providers (./provider-metrics.ts) for each model call. */
export function noteProviderCall(task: string): void {
  const calls = CALLS.getStore();
  if (calls && task === 'query') calls.query++;
}

export interface AccessLogLine {
  time: string;
  id: string;
  method: string;
  route: string;
  path: string;
  status: number;
  ms: number;
  /** A streamed reply: `ms` is to its end, `error` the code of the event that ended it. */
  stream?: true;
  error?: string;
  retrieval_tokens?: number;
  answer_tokens?: number;
  /** For a retrieval: served from the retrieval cache (no query call to the model). */
  cache_hit?: boolean;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/u;

export interface ServerMetrics {
  registry: Registry;
  requests: Counter<'route' | 'method' | 'status'>;
  duration: Histogram<'route' | 'method' | 'status'>;
  providerCalls: Counter<'task' | 'provider'>;
  providerTokens: Counter<'task' | 'provider' | 'direction'>;
  /** The text of a scrape: this process's metrics, or with --workers the sum over workers. */
  scrape(): Promise<string>;
}

export function createMetrics(engine: Pick<SearchEngine, 'status'>): ServerMetrics {
  const registry = new Registry();
  const requests = new Counter({
    name: 'noderag_http_requests_total',
    help: 'HTTP requests by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'noderag_http_request_duration_seconds',
    help: 'HTTP request latency by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const providerCalls = new Counter({
    name: 'noderag_provider_calls_total',
    help: 'Model calls the server made, by task (query, answer, embed_query) and provider',
    labelNames: ['task', 'provider'] as const,
    registers: [registry],
  });
  const providerTokens = new Counter({
    name: 'noderag_provider_tokens_total',
    help: 'Tokens of the text sent to (input) and received from (output) the model, o200k_base count',
    labelNames: ['task', 'provider', 'direction'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'noderag_index_generation',
    help: 'Generation of the loaded index (0 while not built); over workers, the lowest',
    aggregator: 'min',
    registers: [registry],
    async collect() {
      this.set((await engine.status()).generation);
    },
  });
  new Gauge({
    name: 'noderag_index_nodes',
    help: 'Nodes of the loaded index; over workers, the lowest',
    aggregator: 'min',
    registers: [registry],
    async collect() {
      this.set((await engine.status()).nodes);
    },
  });
  const scrape = cluster.isWorker ? clusterScrape(registry) : () => registry.metrics();
  return { registry, requests, duration, providerCalls, providerTokens, scrape };
}

/** Messages of a worker's scrape: asked of the primary, answered with the sum. */
export const SCRAPE_REQUEST = 'noderag:metrics-request';
export const SCRAPE_REPLY = 'noderag:metrics-reply';

/**
 * In a worker: this registry answers the primary's AggregatorRegistry, and a scrape asks
 * the primary for the sum over all workers (ts/cli/search-cluster.ts answers).
 */
function clusterScrape(registry: Registry): () => Promise<string> {
  new AggregatorRegistry(); // installs the worker's answer to the primary's requests
  AggregatorRegistry.setRegistries([registry]);
  let next = 0;
  return () =>
    new Promise((resolve, reject) => {
      const id = next++;
      const onReply = (m: { type?: string; id?: number; text?: string; error?: string }) => {
        if (m?.type !== SCRAPE_REPLY || m.id !== id) return;
        process.off('message', onReply);
        if (m.error !== undefined) reject(new Error(`metrics of the workers: ${m.error}`));
        else resolve(m.text ?? '');
      };
      process.on('message', onReply);
      process.send!({ type: SCRAPE_REQUEST, id });
    });
}

/** The pattern of the route that handled the request (middleware are method ALL). */
function routeOf(c: Context): string {
  const routes = matchedRoutes(c).filter((r) => r.method !== 'ALL');
  return routes[routes.length - 1]?.path ?? 'unmatched';
}

/**
 * The outermost middleware: request id, timing, metrics and the access-log line. Runs
 * before authentication, so refused requests are counted and logged too (never the key).
 */
export function observe(opts: {
  metrics?: ServerMetrics;
  accessLog?: (line: AccessLogLine) => void;
  /** Sent as `X-Noderag-Project` (percent-encoded): the terminal client checks it is its `-f`. */
  project?: string;
}): MiddlewareHandler {
  const { metrics, accessLog } = opts;
  const headers: [string, string][] = [];
  if (opts.project !== undefined) headers.push([PROJECT_HEADER, encodeURIComponent(opts.project)]);
  return async (c, next) => {
    const start = performance.now();
    const given = c.req.header('x-request-id');
    const id = given !== undefined && REQUEST_ID.test(given) ? given : randomUUID();
    const calls = accessLog ? { query: 0 } : null;
    if (calls) FACTS.set(c, {});
    if (metrics || calls) OBSERVED.add(c);
    try {
      await (calls ? CALLS.run(calls, next) : next());
    } finally {
      setHeaders(c, id, headers);
      // The route pattern and the rest are worked out only for metrics or a log.
      if (metrics || calls) {
        const streamed = STREAM_ENDS.get(c);
        if (streamed) void streamed.then((outcome) => observed(c, start, id, calls, outcome));
        else observed(c, start, id, calls);
      }
    }
  };

  /** Counts the request and writes its log line (`calls`: the model calls, when logged). */
  function observed(
    c: Context,
    start: number,
    id: string,
    calls: { query: number } | null,
    streamed?: StreamOutcome,
  ): void {
    const ms = performance.now() - start;
    const route = routeOf(c);
    const status = c.res.status;
    if (metrics) {
      const labels = { route, method: c.req.method, status: String(status) };
      metrics.requests.inc(labels);
      metrics.duration.observe(labels, ms / 1000);
    }
    if (accessLog && calls) {
      const line: AccessLogLine = {
        time: new Date().toISOString(),
        id,
        method: c.req.method,
        route,
        path: c.req.path,
        status,
        ms: Math.round(ms * 100) / 100,
      };
      const facts = FACTS.get(c);
      if (streamed) {
        line.stream = true;
        if (streamed.error !== undefined) line.error = streamed.error;
        if (streamed.retrievalTokens !== undefined) line.retrieval_tokens = streamed.retrievalTokens;
        if (streamed.answerTokens !== undefined) line.answer_tokens = streamed.answerTokens;
        if (streamed.retrievalTokens !== undefined) line.cache_hit = calls.query === 0;
      }
      if (facts?.retrievalTokens) line.retrieval_tokens = facts.retrievalTokens();
      if (facts?.answerTokens) line.answer_tokens = facts.answerTokens();
      // A retrieval that asked the model nothing came from the retrieval cache.
      if (facts?.retrievalTokens) line.cache_hit = calls.query === 0;
      accessLog(line);
    }
  }
}

/**
 * `X-Request-Id` (and the fixed headers) on the reply. Under Node it goes straight onto the outgoing message, which
 * @hono/node-server merges with the reply's own headers when it writes them; setting it on
 * `c.res.headers` instead turns the reply's plain header object into a `Headers` instance on
 * every request, only for the adapter to turn it back.
 */
function setHeaders(c: Context, id: string, more: readonly [string, string][]): void {
  const { outgoing } = (c.env ?? {}) as { outgoing?: ServerResponse };
  if (outgoing && !outgoing.headersSent && typeof outgoing.setHeader === 'function') {
    outgoing.setHeader('X-Request-Id', id);
    for (const [name, value] of more) outgoing.setHeader(name, value);
  } else {
    c.res.headers.set('X-Request-Id', id);
    for (const [name, value] of more) c.res.headers.set(name, value);
  }
}
