/**
 * Observability of the search server (issue 16 item 5): an `X-Request-Id` on every reply (the
 * client's when it sent a sane one, else a new UUID), an optional JSON access-log line per
 * request, and Prometheus metrics on `GET /metrics` through prom-client.
 *
 * Metrics are per process: with `--workers N` a scrape reaches one worker (the port is
 * shared), so sum over scrapes per `instance` or run one worker per scrape target.
 * Routes are labelled by their pattern (`/answer`, `/v1/chat/completions`), unknown paths
 * as `unmatched`, so label cardinality stays bounded.
 */
import { randomUUID } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { SearchEngine } from './engine.js';

/** What a route reports for the access log (tokens are counted only when a log is kept). */
export interface RequestFacts {
  retrievalTokens?: () => number;
  answerTokens?: () => number;
}

const FACTS = new WeakMap<Context, RequestFacts>();

/** Lets a route add its token counts to the request's access-log line. */
export function noteFacts(c: Context, facts: RequestFacts): void {
  FACTS.set(c, { ...FACTS.get(c), ...facts });
}

export interface AccessLogLine {
  time: string;
  id: string;
  method: string;
  route: string;
  path: string;
  status: number;
  ms: number;
  retrieval_tokens?: number;
  answer_tokens?: number;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/u;

export interface ServerMetrics {
  registry: Registry;
  requests: Counter<'route' | 'method' | 'status'>;
  duration: Histogram<'route' | 'method' | 'status'>;
}

export function createMetrics(engine: SearchEngine): ServerMetrics {
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
  new Gauge({
    name: 'noderag_index_generation',
    help: 'Generation of the loaded index (0 while not built)',
    registers: [registry],
    async collect() {
      this.set((await engine.status()).generation);
    },
  });
  new Gauge({
    name: 'noderag_index_nodes',
    help: 'Nodes of the loaded index',
    registers: [registry],
    async collect() {
      this.set((await engine.status()).nodes);
    },
  });
  return { registry, requests, duration };
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
}): MiddlewareHandler {
  const { metrics, accessLog } = opts;
  return async (c, next) => {
    const start = performance.now();
    const given = c.req.header('x-request-id');
    const id = given !== undefined && REQUEST_ID.test(given) ? given : randomUUID();
    try {
      await next();
    } finally {
      c.res.headers.set('X-Request-Id', id);
      const ms = performance.now() - start;
      const route = routeOf(c);
      const status = c.res.status;
      if (metrics) {
        const labels = { route, method: c.req.method, status: String(status) };
        metrics.requests.inc(labels);
        metrics.duration.observe(labels, ms / 1000);
      }
      if (accessLog) {
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
        if (facts?.retrievalTokens) line.retrieval_tokens = facts.retrievalTokens();
        if (facts?.answerTokens) line.answer_tokens = facts.answerTokens();
        accessLog(line);
      }
    }
  };
}
