/**
 * `noderag search -f <folder> [--port N] [--host H] [--workers N] [--cache-size N]
 * [--api-key KEY] [--insecure] [--cors ORIGIN]`: serves
 * the index over HTTP (docs/method.md §7.2) on config.url:config.port until SIGINT/SIGTERM, then
 * stops accepting and lets in-flight requests finish for up to 10 s (a second signal exits
 * at once). `--workers N` runs N processes on the port (search-cluster.ts); `--cache-size`
 * bounds the retrieval cache of repeated questions (0 disables it). Each process loads a new
 * index generation when a build finishes one (checked once a second in the background, and
 * on requests and /health at most as often; the swap is atomic, the old retrieval cache
 * dropped, one line printed);
 * `--no-reload` keeps the generation loaded at start.
 *
 * Refuses to start (exit 1) when the project was never built or its index is damaged, and
 * when the port is taken; a config problem or a bad flag is a usage error (exit 2). Started
 * while a first build is still running, it answers 503 until that build finishes and then
 * loads the index without a restart.
 *
 * `--api-key` (or NODERAG_API_KEY) makes every route but /health require
 * `Authorization: Bearer KEY` (ts/server/auth.ts). The OpenAI-compatible routes under /v1
 * serve the index as the model named after the project folder. A non-loopback `--host` without a key is
 * refused unless `--insecure` is given. The key is never printed.
 *
 * The project itself is served too (ts/server/project-routes.ts): GET/POST /documents and
 * DELETE /documents/{path} change input/ (uploads at most `--max-upload-bytes`), POST /build
 * runs an incremental build in this process (one per project: the build lock), and
 * GET /build/events streams it, relayed between workers. `--metrics` counts the model calls
 * of the searches (ts/server/provider-metrics.ts) and sums every worker's metrics.
 */
import cluster from 'node:cluster';
import { basename, resolve } from 'node:path';
import { defineCommand } from 'citty';
import { isHost, type NodeConfig } from '../config/index.js';
import { IndexNotBuiltError } from '../errors.js';
import { runBuild } from '../indexing/pipeline.js';
import { configuredEmbedding } from '../indexing/stages/embedding.js';
import { createProviders, o200kSearchTokenCounter } from '../llm/create-providers.js';
import { embeddingMismatchWarning, isSearchable } from '../project/state.js';
import { parseStateText, readStateText } from '../search/index-files.js';
import { NodeSearch, type SearchProviders } from '../search/node-search.js';
import { DEFAULT_RETRIEVAL_CACHE_SIZE } from '../search/retrieval-cache.js';
import { createApp } from '../server/app.js';
import { apiKeyProblem, corsOriginProblem } from '../server/auth.js';
import { searchEngine } from '../server/engine-adapter.js';
import { lineBatch } from '../server/line-batch.js';
import { createMetrics } from '../server/observe.js';
import { countedProviders } from '../server/provider-metrics.js';
import { isLoopback, ServerStartError, serveApp, serveHandedSockets } from '../server/serve.js';
import { DEFAULT_MAX_UPLOAD_BYTES } from '../server/upload.js';
import { folderArg, folderValue, parsePort, projectConfig } from './args.js';

export { parsePort };

import { shellArg } from '../shell-arg.js';
import { CliExit, EXIT, unusableIndexExit } from './exit.js';
import { SUB_COMMAND_METAS } from './metas.js';
import {
  acceptHandedSockets,
  isClusterWorker,
  onStopRequest,
  reportFailureAndExit,
  reportReady,
  reportStopping,
  runPrimary,
  workerBuildRelay,
  workerLogSink,
} from './search-cluster.js';

export function parseHost(raw: string | undefined, fallback: string): string {
  if (raw === undefined) return fallback;
  // An IPv6 address as URLs write it (the server prints http://[::1]:port) is taken too.
  const host = raw.trim().replace(/^\[(.*)\]$/, '$1');
  if (!isHost(host)) {
    throw new CliExit(
      EXIT.USAGE,
      `--host: expected a host name or IP address (e.g. 127.0.0.1, ::1, localhost), got "${raw}"`,
    );
  }
  return host;
}

export function parseCacheSize(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_RETRIEVAL_CACHE_SIZE;
  const n = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(n)) {
    throw new CliExit(EXIT.USAGE, `--cache-size: expected a non-negative integer (0 disables), got "${raw}"`);
  }
  return n;
}

export function parseWorkers(raw: string | undefined): number {
  if (raw === undefined) return 1;
  const n = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(n) || n < 1 || n > 256) {
    throw new CliExit(EXIT.USAGE, `--workers: expected an integer from 1 to 256, got "${raw}"`);
  }
  return n;
}

export function parseMaxUploadBytes(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_MAX_UPLOAD_BYTES;
  const n = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(n) || n < 1) {
    throw new CliExit(EXIT.USAGE, `--max-upload-bytes: expected a positive integer (bytes), got "${raw}"`);
  }
  return n;
}

/** The variable `noderag search` (and the terminal client) read the API key from. */
export const API_KEY_ENV = 'NODERAG_API_KEY';

/** `--api-key`, else NODERAG_API_KEY, else none; a bad key is a usage error naming its origin. */
export function parseApiKey(
  raw: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const fromFlag = raw !== undefined;
  const key = fromFlag ? raw : env[API_KEY_ENV];
  if (key === undefined || (!fromFlag && key === '')) return undefined;
  const problem = apiKeyProblem(key);
  if (problem) throw new CliExit(EXIT.USAGE, `${fromFlag ? '--api-key' : API_KEY_ENV}: the key ${problem}`);
  return key;
}

export function parseCors(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const problem = corsOriginProblem(raw.trim());
  if (problem) throw new CliExit(EXIT.USAGE, `--cors: ${problem}, got "${raw}"`);
  return raw.trim().replace(/\/$/, '');
}

/** A non-loopback host needs a key, or --insecure to serve without one. */
export function checkExposure(host: string, apiKey: string | undefined, insecure: boolean): string | null {
  if (isLoopback(host) || apiKey !== undefined) return null;
  if (!insecure) {
    throw new CliExit(
      EXIT.USAGE,
      `Refusing to listen on ${host}, which is not a loopback address, without an API key: set ${API_KEY_ENV} (or --api-key), or pass --insecure to serve without authentication.`,
    );
  }
  return `Warning: listening on ${host}, which is not a loopback address, with --insecure: the server has no authentication, so anyone who can reach this address can query the index.`;
}

/**
 * Loads the engine. A project never built, or a finished index that cannot be loaded, is
 * a refusal; a first build still running is a warning (the server answers 503 meanwhile).
 */
/** The refusal for a project that was never built (no state.json); returns state.json's text. */
async function startEngine(
  config: NodeConfig,
  folderArgText: string,
  retrievalCacheSize: number,
  quiet: boolean,
  reload: boolean,
  providers: SearchProviders,
): Promise<NodeSearch> {
  const root = config.mainFolder;
  // null: never built. The server starts anyway and answers 503 until a build finishes
  // (`noderag build`, or POST /build on this server after POST /documents).
  const stateText = await readStateText(root);
  // Every worker follows new generations; the first one (or the only process) says so.
  const logs = !cluster.isWorker || cluster.worker?.id === 1;
  const search = new NodeSearch(config, {
    providers,
    retrievalCacheSize,
    watch: reload,
    onReload: (r) => {
      if (logs) {
        const replacing = r.previous > 0 ? `, replacing generation ${r.previous}` : '';
        console.log(
          `Index generation ${r.generation} loaded (${r.nodes} nodes, ${r.vectors} vectors)${replacing}.`,
        );
      }
    },
    onReloadError: (e) => {
      if (logs) {
        console.error(
          `The index a build finished could not be loaded (${e instanceof Error ? e.message : String(e)}); still serving the loaded generation.`,
        );
      }
    },
  });
  try {
    await search.ready();
    const state = stateText === null ? null : parseSafely(stateText);
    const mismatch = state && embeddingMismatchWarning(root, state, configuredEmbedding(config));
    if (mismatch && !quiet) console.error(`Warning: ${mismatch}`);
  } catch (e) {
    const state = stateText === null ? null : parseSafely(stateText);
    const waiting =
      e instanceof IndexNotBuiltError && (stateText === null || (state !== null && !isSearchable(state)));
    if (!waiting) {
      search.close();
      if (e instanceof IndexNotBuiltError)
        throw new CliExit(unusableIndexExit(e), `Cannot serve ${root}: ${e.message}`);
      throw e;
    }
    if (!quiet) {
      console.error(notBuiltWarning(root, folderArgText));
    }
  }
  return search;
}

function notBuiltWarning(root: string, folderArgText: string): string {
  return `Warning: the index of ${root} is not built yet; question routes answer 503 until the first build finishes (\`noderag build -f ${shellArg(folderArgText)}\`, or POST /build).`;
}

function parseSafely(text: string) {
  try {
    return parseStateText(text);
  } catch {
    return null;
  }
}

/**
 * SIGINT/SIGTERM handling, installed before anything is printed: without a listener a
 * signal kills the process outright, so a client that reacts to the "listening" line could
 * otherwise beat the handler. The first signal resolves `received`; a second one exits.
 */
function stopSignals(): { received: Promise<NodeJS.Signals>; dispose(): void } {
  let resolve!: (s: NodeJS.Signals) => void;
  const received = new Promise<NodeJS.Signals>((r) => {
    resolve = r;
  });
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      console.error(`${signal} again: exiting now.`);
      process.exit(EXIT.INTERRUPTED);
    }
    stopping = true;
    resolve(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    received,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

export default defineCommand({
  meta: SUB_COMMAND_METAS.search,
  args: {
    ...folderArg,
    port: { type: 'string', description: 'port to listen on (default: config.port)' },
    host: { type: 'string', description: 'address to listen on (default: config.url)' },
    workers: {
      type: 'string',
      description:
        'server processes sharing the port, one core each; each loads its own copy of the index (default 1)',
    },
    'cache-size': {
      type: 'string',
      description: `retrievals of recent questions kept in memory, so a repeated question makes no provider call (default ${DEFAULT_RETRIEVAL_CACHE_SIZE}; 0 disables)`,
    },
    'api-key': {
      type: 'string',
      description: `require "Authorization: Bearer KEY" on every route but /health (default: $${API_KEY_ENV}; prefer the variable, a flag shows in the process list)`,
    },
    insecure: {
      type: 'boolean',
      description: 'allow a non-loopback --host without an API key',
    },
    metrics: {
      type: 'boolean',
      description: 'serve Prometheus metrics on GET /metrics (summed over the workers)',
    },
    'access-log': { type: 'boolean', description: 'print one JSON access-log line per request on stdout' },
    'max-upload-bytes': {
      type: 'string',
      description: `largest upload to POST /documents, per file and per request (default ${DEFAULT_MAX_UPLOAD_BYTES})`,
    },
    cors: {
      type: 'string',
      description: 'allow this one origin (e.g. https://app.example.com) by CORS (default: none)',
    },
    reload: {
      type: 'boolean',
      default: true,
      description:
        'load each new index generation when a build finishes it (--no-reload: keep serving the one loaded at start)',
    },
  },
  async run({ args }) {
    const folderText = folderValue(args.folder);
    const config = projectConfig(resolve(folderText));
    const port = parsePort(args.port, config.config.port);
    const host = parseHost(args.host, config.config.url);
    const cacheSize = parseCacheSize(args['cache-size']);
    const workers = parseWorkers(args.workers);
    const apiKey = parseApiKey(args['api-key']);
    const cors = parseCors(args.cors);
    const maxUploadBytes = parseMaxUploadBytes(args['max-upload-bytes']);
    const exposure = checkExposure(host, apiKey, args.insecure === true);
    const worker = isClusterWorker();
    if (!worker) {
      for (const w of config.warnings) console.error(`Warning: ${w}`);
      if (exposure) console.error(exposure);
    }
    if (workers > 1 && !worker) {
      // (The workers say nothing: quiet.)
      if ((await readStateText(config.mainFolder)) === null)
        console.error(notBuiltWarning(config.mainFolder, folderText));
      await runPrimary({
        workers,
        mainFolder: config.mainFolder,
        listen: { host, port, settings: LISTEN_SETTINGS },
      });
      return;
    }

    const signals = stopSignals();
    let opened: OpenServer;
    try {
      opened = await openServer(config, {
        host,
        port,
        cacheSize,
        folderArgText: folderText,
        quiet: worker,
        reload: args.reload !== false,
        ...(apiKey ? { apiKey } : {}),
        ...(cors ? { cors } : {}),
        metrics: args.metrics === true,
        accessLog: args['access-log'] === true,
        maxUploadBytes,
      });
    } catch (e) {
      signals.dispose();
      if (worker) await reportFailureAndExit(e);
      throw e;
    }
    const { search, server, what, building } = opened;
    let signal: NodeJS.Signals | 'stop request';
    if (worker) {
      reportReady(what);
      let stopRequested!: () => void;
      const requested = new Promise<'stop request'>((r) => {
        stopRequested = () => r('stop request');
      });
      const dispose = onStopRequest(stopRequested);
      signal = await Promise.race([signals.received, requested]);
      dispose();
      // Before it stops taking connections: the primary hands new ones to the others.
      reportStopping();
    } else {
      console.log(
        `Search server for ${config.mainFolder} listening on ${server.url ?? ''} (${what}). Stop it with Ctrl-C.`,
      );
      signal = await signals.received;
      console.error(`${signal}: stopping; in-flight requests get up to 10 s to finish.`);
    }
    try {
      await server.close();
    } finally {
      search.close();
      signals.dispose();
    }
    // A build started by POST /build would keep the process alive until it ends: stop it
    // here, as a kill would; its state is saved and the next build resumes it.
    const interrupted = building();
    if (interrupted && !worker) {
      console.error('The build started over HTTP stops here; the next build resumes it.');
    }
    if (worker) process.disconnect?.();
    else console.error('Search server stopped.');
    if (interrupted) process.exit(EXIT.OK);
  },
});

/** How often a worker sends its access-log lines to the primary (a line waits at most this long). */
const WORKER_LOG_MS = 20;

/** Where the listening address comes from, for a refusal. */
const LISTEN_SETTINGS = { port: '--port or config.port', host: '--host or config.url' };

interface OpenServer {
  search: NodeSearch;
  /** A cluster worker listens on nothing (no url): the primary hands it connections. */
  server: { url?: string; close(): Promise<void> };
  /** "index generation 3: 120 nodes, 40 vectors", or that it is not built yet. */
  what: string;
  /** Whether a build started by POST /build is running in this process. */
  building: () => boolean;
}

/** Loads the engine and listens; every refusal is a CliExit. */
async function openServer(
  config: NodeConfig,
  o: {
    host: string;
    port: number;
    cacheSize: number;
    folderArgText: string;
    quiet: boolean;
    reload: boolean;
    apiKey?: string;
    cors?: string;
    metrics: boolean;
    accessLog: boolean;
    maxUploadBytes: number;
  },
): Promise<OpenServer> {
  // The gauges read the engine's status only when scraped, after it exists.
  let search: NodeSearch | undefined;
  let running = 0;
  // Aborted on stop: open GET /build/events streams end instead of holding the shutdown.
  const closing = new AbortController();
  const metrics = o.metrics ? createMetrics({ status: () => search!.status() }) : undefined;
  // Access-log lines go out once per turn of the loop (line-batch.ts), and at the latest on
  // exit; a worker's through the primary (workerLogSink).
  const logSink = o.accessLog && isClusterWorker() ? workerLogSink() : undefined;
  const accessLines = o.accessLog
    ? lineBatch(logSink ?? process.stdout, logSink ? { everyMs: WORKER_LOG_MS } : {})
    : undefined;
  if (accessLines) process.once('exit', accessLines.flush);
  const models = createProviders(config, { mode: 'search', tokenCounter: o200kSearchTokenCounter });
  // Counted for the metrics and the access log's cache_hit (ts/server/provider-metrics.ts).
  const providers =
    metrics || o.accessLog
      ? countedProviders(models, {
          names: { chat: models.chat.identity.provider, embedding: models.embedding.identity.provider },
          tokens: o200kSearchTokenCounter,
          ...(metrics ? { metrics } : {}),
        })
      : models;
  search = await startEngine(config, o.folderArgText, o.cacheSize, o.quiet, o.reload, providers);
  let server: OpenServer['server'];
  try {
    const app = createApp({
      engine: searchEngine(search),
      modelName: basename(config.mainFolder),
      ...(o.apiKey ? { apiKey: o.apiKey } : { loopbackHostOnly: isLoopback(o.host) }),
      ...(o.cors ? { cors: o.cors } : {}),
      ...(metrics ? { metrics } : {}),
      project: {
        folder: config.mainFolder,
        ...(isClusterWorker() ? { relay: workerBuildRelay() } : {}),
        maxUploadBytes: o.maxUploadBytes,
        closing: closing.signal,
        // POST /build: the build runs in this process; the watch loads its generation.
        runBuild: (sinks, lock) => {
          running++;
          return runBuild({
            folder: config.mainFolder,
            yes: true,
            handleSignals: false,
            stdout: sinks.stdout,
            stderr: sinks.stderr,
            lock,
          }).finally(() => running--);
        },
      },
      ...(accessLines ? { accessLog: (line: object) => accessLines.add(JSON.stringify(line)) } : {}),
    });
    const listening: OpenServer['server'] = isClusterWorker()
      ? acceptHandedSockets(serveHandedSockets(app))
      : await serveApp(app, { host: o.host, port: o.port, settings: LISTEN_SETTINGS });
    server = {
      ...(listening.url ? { url: listening.url } : {}),
      close: async () => {
        closing.abort();
        try {
          await listening.close();
        } finally {
          // Lines of requests that end while a worker's lines are sent are sent too; a
          // worker exits when it disconnects, so a request still running then has no line.
          accessLines?.flush();
          await logSink?.drained();
          accessLines?.flush();
          await logSink?.drained();
        }
      },
    };
  } catch (e) {
    search.close();
    if (e instanceof ServerStartError)
      throw new CliExit(EXIT.FAILURE, `Cannot start the search server: ${e.message}`);
    throw e;
  }
  const s = await search.status();
  const what =
    (s.ready
      ? `index generation ${s.generation}: ${s.nodes} nodes, ${s.vectors} vectors`
      : 'index not built yet') + (o.apiKey ? '; API key required' : '');
  return { search, server, what, building: () => running > 0 };
}
