/**
 * The HTTP API as a Hono app factory (no listening here; see serve.ts). Routes and error
 * bodies follow docs/method.md §7.2: every error is `{"error": {"code", "message"}}`, mapped
 * from error codes to statuses in one place (`statusFor` in ./http.ts, shared with the web UI,
 * as are the JSON-body reader and the disconnect signal).
 */
import { basename } from 'node:path';
import type { Context } from 'hono';

import { Hono } from 'hono';
import { RESULT_JSON, type RetrievalResult } from '../search/engine-types.js';
import { validateQuestion } from '../search/question.js';
import { corsFor, requireApiKey } from './auth.js';
import type { SearchEngine } from './engine.js';
import { requireLoopbackHost } from './host-guard.js';
import { errorHandler, HttpError, readJsonObject, withRequestSignal } from './http.js';
import { type AccessLogLine, createMetrics, noteFacts, observe, type ServerMetrics } from './observe.js';
import { openAiRoutes } from './openai-compat.js';
import { type ProjectDeps, projectRoutes } from './project-routes.js';
import { ANSWER_EVENTS, streamAnswer, streamFlag } from './stream.js';

export { MAX_BODY_BYTES, statusFor } from './http.js';

export interface AppDeps {
  engine: SearchEngine;
  /** Per-request deadline in milliseconds (default 300 s). */
  requestTimeoutMs?: number;
  /** Where unexpected errors are reported (default console.error). */
  logError?: (e: unknown) => void;
  /** With a key, every route but /health needs `Authorization: Bearer <key>` (./auth.ts). */
  apiKey?: string;
  /** The one origin allowed by CORS (default none: no CORS headers). */
  cors?: string;
  /**
   * Answer only requests whose Host is a loopback name (./host-guard.ts): for a server on a
   * loopback address without a key, which a DNS-rebinding web page could otherwise read.
   */
  loopbackHostOnly?: boolean;
  /** The model name of the index on /v1 (./openai-compat.ts; default "noderag"). */
  modelName?: string;
  /**
   * Serve Prometheus metrics on GET /metrics (./observe.ts; behind the key when one is set):
   * true for a registry of the app's own, or one made by `createMetrics` (the server's
   * provider-call counters then share it).
   */
  metrics?: boolean | ServerMetrics;
  /** Receives one line per request (JSON access log); none by default. */
  accessLog?: (line: AccessLogLine) => void;
  /** The served project: documents and builds over HTTP (./project-routes.ts); none by default. */
  project?: ProjectDeps;
}

/**
 * The body of a /retrieval reply, `{"retrieval": …, "sources": […]}`: joined from the bytes
 * the engine already serialised (RESULT_JSON) when it has them, else `JSON.stringify` (what
 * `c.json` sends; the same bytes either way). Exported for bench/lib/in-process-cpu.ts, which
 * measures the server's work without HTTP.
 */
export function retrievalReply(r: RetrievalResult): Uint8Array<ArrayBuffer> | string {
  const json = r[RESULT_JSON];
  // (`retrievalInfo` is not read: the engine may make it only when it is.)
  if (json && r.sources) {
    return Buffer.concat([RETRIEVAL_OPEN, ...json.retrievalInfo, SOURCES_KEY, json.sources, CLOSE]);
  }
  return JSON.stringify({ retrieval: r.retrievalInfo, sources: r.sources ?? [] });
}

/**
 * A route that replies in one piece: a bad "stream" is refused as on /answer, and so is true.
 */
function refuseStream(stream: unknown, route: string): void {
  if (streamFlag(stream)) {
    throw new HttpError(
      400,
      'invalid_stream',
      `"stream": true is offered on /answer and /v1/chat/completions; ${route} replies in one piece`,
    );
  }
}

/** What a refused Host is told (a server without a key answers only its loopback names). */
const LOOPBACK_HINT =
  'without an API key this server answers only requests to localhost or 127.0.0.1; to serve other names, start it with an API key (NODERAG_API_KEY or --api-key)';

/** The fixed bytes of a /retrieval reply around its two values. */
const RETRIEVAL_OPEN = Buffer.from('{"retrieval":');
const SOURCES_KEY = Buffer.from(',"sources":');
const CLOSE = Buffer.from('}');

const ROUTES: Record<string, string[]> = {
  '/answer': ['POST'],
  '/retrieval': ['POST'],
  '/answer_retrieval': ['POST'],
  '/health': ['GET', 'HEAD'],
  '/v1/chat/completions': ['POST'],
  '/v1/models': ['GET', 'HEAD'],
};

/** The routes of `AppDeps.project` (./project-routes.ts), there only when it is given. */
const PROJECT_ROUTES: Record<string, string[]> = {
  '/documents': ['GET', 'HEAD', 'POST'],
  '/build': ['POST'],
  '/build/events': ['GET', 'HEAD'],
};

/** Routes with a parameter: the path's prefix (the parameter is what follows, never empty). */
const PREFIX_ROUTES: [string, string[]][] = [['/v1/models/', ['GET', 'HEAD']]];
const PROJECT_PREFIX_ROUTES: [string, string[]][] = [['/documents/', ['DELETE']]];

/** The methods a path allows, or undefined when no route has it. */
function allowedMethods(path: string, project: boolean): string[] | undefined {
  const exact = ROUTES[path] ?? (project ? PROJECT_ROUTES[path] : undefined);
  if (exact) return exact;
  const prefixed = [...PREFIX_ROUTES, ...(project ? PROJECT_PREFIX_ROUTES : [])];
  return prefixed.find(([prefix]) => path.startsWith(prefix) && path.length > prefix.length)?.[1];
}

export function createApp(deps: AppDeps): Hono {
  const { engine } = deps;
  const timeoutMs = deps.requestTimeoutMs ?? 300_000;
  const logError = deps.logError ?? ((e: unknown) => console.error(e));
  const app = new Hono();

  const onError = errorHandler(logError);
  app.onError(onError);
  const metrics = deps.metrics === true ? createMetrics(engine) : deps.metrics || undefined;
  app.use(
    '*',
    observe({
      ...(metrics ? { metrics } : {}),
      ...(deps.accessLog ? { accessLog: deps.accessLog } : {}),
      ...(deps.project ? { project: basename(deps.project.folder) } : {}),
    }),
  );
  if (deps.cors) app.use('*', corsFor(deps.cors));
  if (deps.loopbackHostOnly) app.use('*', requireLoopbackHost(LOOPBACK_HINT));
  if (deps.apiKey) app.use('*', requireApiKey(deps.apiKey));

  // The reply is returned, not thrown: Hono runs this handler inside the middleware chain
  // without catching, so a throw reached `observe` before onError had set the status, and
  // metrics and the access log counted the request as a 200.
  app.notFound((c) => {
    const allowed = allowedMethods(c.req.path, deps.project !== undefined);
    if (allowed) {
      return onError(
        new HttpError(
          405,
          'method_not_allowed',
          `${c.req.method} is not allowed on ${c.req.path}; use ${allowed.join(', ')}`,
          {
            headers: { Allow: allowed.join(', ') },
          },
        ),
        c,
      );
    }
    return onError(new HttpError(404, 'not_found', `no route ${c.req.method} ${c.req.path}`), c);
  });

  app.get('/health', async (c) => {
    const s = await engine.status();
    return c.json({
      status: 'ok',
      index: s.ready ? 'ready' : 'not_built',
      generation: s.generation,
      nodes: s.nodes,
      vectors: s.vectors,
    });
  });

  const run = <T>(c: Context, work: (signal: AbortSignal) => Promise<T>) =>
    withRequestSignal(c, work, timeoutMs);

  if (metrics) {
    app.get('/metrics', async (c) =>
      c.body(await metrics.scrape(), 200, { 'Content-Type': metrics.registry.contentType }),
    );
  }

  app.post('/answer', async (c) => {
    const body = await readJsonObject(c);
    const q = validateQuestion(body.question);
    if (streamFlag(body.stream)) {
      return streamAnswer(c, { engine, question: q, timeoutMs }, ANSWER_EVENTS, logError);
    }
    const r = await run(c, (signal) => engine.answer(q, signal));
    noteFacts(c, { retrievalTokens: () => r.retrievalTokens, answerTokens: () => r.responseTokens });
    return c.json({ answer: r.response, sources: r.sources ?? [], citations: r.citations ?? [] });
  });

  app.post('/retrieval', async (c) => {
    const body = await readJsonObject(c);
    const q = validateQuestion(body.question);
    refuseStream(body.stream, '/retrieval');
    const r = await run(c, (signal) => engine.retrieve(q, signal));
    noteFacts(c, { retrievalTokens: () => r.retrievalTokens });
    return c.body(retrievalReply(r), 200, { 'Content-Type': 'application/json' });
  });

  app.post('/answer_retrieval', async (c) => {
    const body = await readJsonObject(c);
    const q = validateQuestion(body.question);
    refuseStream(body.stream, '/answer_retrieval');
    const r = await run(c, (signal) => engine.answer(q, signal));
    noteFacts(c, { retrievalTokens: () => r.retrievalTokens, answerTokens: () => r.responseTokens });
    return c.json({
      answer: r.response,
      retrieval: r.retrievalInfo,
      sources: r.sources ?? [],
      citations: r.citations ?? [],
    });
  });

  if (deps.project) app.route('/', projectRoutes(deps.project, deps.cors));
  app.route('/v1', openAiRoutes({ engine, modelName: deps.modelName ?? 'noderag', timeoutMs, logError }));

  return app;
}
