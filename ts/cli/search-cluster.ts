/**
 * `noderag search --workers N`: N server processes share one port, so a server uses N cores
 * (retrieval is synchronous CPU work on each process's JS thread). Each worker loads its own
 * copy of the index: memory grows N-fold.
 *
 * The primary loads nothing. It forks the workers (same command line), waits until every
 * one is ready, then listens on the port itself and hands each connection (paused, over
 * IPC) to the worker with the fewest open connections (least-connections.ts); the workers
 * listen on nothing. It prints one banner, and on SIGINT/SIGTERM stops accepting, asks the
 * workers over IPC to stop gracefully and waits for them. A worker that fails to start sends its one-line message;
 * the primary prints it once, stops the others and exits with the worker's code. A worker
 * that dies after start is replaced. Access-log lines come to the primary, the one writer of
 * stdout (workerLogSink). With --metrics, a worker's scrape of GET /metrics asks
 * the primary, which sums every worker's registry (prom-client's AggregatorRegistry) and
 * answers it (ts/server/observe.ts).
 */
import cluster, { type Worker } from 'node:cluster';
import { createServer, type Socket } from 'node:net';
import { AggregatorRegistry, type PrometheusContentType } from 'prom-client';
import type { RelayedBuildEvent } from '../server/build-job.js';
import { SCRAPE_REPLY, SCRAPE_REQUEST } from '../server/observe.js';
import type { BuildRelay } from '../server/project-routes.js';
import {
  type HandedSocketServer,
  type ServeOptions,
  ServerStartError,
  whenListening,
} from '../server/serve.js';
import { CliExit, EXIT } from './exit.js';
import { LeastConnections } from './least-connections.js';

/** Messages between a worker and the primary. */
type WorkerMessage =
  | { type: 'noderag:ready'; what: string }
  | { type: 'noderag:failed'; exitCode: number; message: string };
const STOP = { type: 'noderag:stop' } as const;
/** Primary to worker, with a socket: serve this connection. */
const CONNECTION = 'noderag:connection';
/** Worker to primary: one of the connections handed to it closed. */
const CONNECTION_CLOSED = { type: 'noderag:connection-closed' } as const;
/** Worker to primary: it is stopping (draining); hand it no more connections. */
const STOPPING = { type: 'noderag:stopping' } as const;

export function isClusterWorker(): boolean {
  return cluster.isWorker;
}

const BUILD_EVENT = 'noderag:build-event';

/**
 * Worker side: build events go to the primary, which passes them to the other workers
 * (runPrimary), so each worker's GET /build/events shows a build another worker runs.
 */
export function workerBuildRelay(): BuildRelay {
  return {
    publish: (event) => process.send?.({ type: BUILD_EVENT, event }),
    subscribe: (listener) => {
      process.on('message', (m: { type?: unknown; event?: RelayedBuildEvent }) => {
        if (m?.type === BUILD_EVENT && m.event) listener(m.event);
      });
    },
  };
}

/** Worker to primary: access-log lines, which only the primary writes (see workerLogSink). */
const ACCESS_LOG = 'noderag:access-log';

/**
 * Worker side: where the access log's lines go. Workers writing to one stdout pipe can splice
 * each other's lines (under backpressure Node joins queued writes into one larger than the
 * pipe's atomic size), so they send them to the primary, the one writer. `drained` resolves
 * once everything sent so far has left the worker (the worker waits for it before it
 * disconnects: closing the channel would drop what is still queued).
 */
export function workerLogSink(): { write(text: string): void; drained(): Promise<void> } {
  let last: Promise<void> = Promise.resolve();
  return {
    write(text: string): void {
      if (!process.connected) {
        process.stdout.write(text);
        return;
      }
      last = new Promise((resolve) => process.send?.({ type: ACCESS_LOG, text }, () => resolve()));
    },
    // Also what was sent while it waited (a request that ended meanwhile).
    async drained(): Promise<void> {
      let seen: Promise<void>;
      do {
        seen = last;
        await seen;
      } while (seen !== last);
    },
  };
}

/** Worker side: tell the primary this worker stops taking connections (it drains, then exits). */
export function reportStopping(): void {
  if (process.connected) process.send?.(STOPPING);
}

/** Worker side: tell the primary the server is ready for connections. */
export function reportReady(what: string): void {
  process.send?.({ type: 'noderag:ready', what } satisfies WorkerMessage);
}

/** Worker side: serve the connections the primary hands over (returns `server`). */
export function acceptHandedSockets(server: HandedSocketServer): HandedSocketServer {
  process.on('message', (m: { type?: unknown }, handle: unknown) => {
    if (m?.type !== CONNECTION || !handle) return;
    server.adopt(handle as Socket, () => {
      if (process.connected) process.send?.(CONNECTION_CLOSED);
    });
  });
  return server;
}

/**
 * Worker side: tell the primary why this worker cannot start (the primary prints it once),
 * then exit with its code. Never resolves.
 */
export function reportFailureAndExit(e: unknown): Promise<never> {
  const exitCode = e instanceof CliExit ? e.exitCode : EXIT.FAILURE;
  const message = e instanceof Error ? e.message : String(e);
  process.send?.({ type: 'noderag:failed', exitCode, message } satisfies WorkerMessage, () =>
    process.exit(exitCode),
  );
  return new Promise<never>(() => {});
}

/** Worker side: the primary's request to stop gracefully (once). */
export function onStopRequest(stop: () => void): () => void {
  const listener = (m: unknown) => {
    if ((m as { type?: unknown })?.type === STOP.type) stop();
  };
  process.on('message', listener);
  return () => process.off('message', listener);
}

export interface PrimaryOptions {
  workers: number;
  mainFolder: string;
  /** Where to listen; `settings` names the flags for a refusal. */
  listen: ServeOptions;
}

export async function runPrimary(options: PrimaryOptions): Promise<void> {
  const { workers } = options;
  let stopping = false;
  let started = false;
  const live = new Set<Worker>();
  const pool = new LeastConnections<Worker>();
  /** Workers that said they are ready: only they listen for the stop request. */
  const ready = new Set<Worker>();
  /** The worker whose build (POST /build) the others mirror, until its `done`. */
  let builder: Worker | undefined;
  /**
   * Sockets sent to a worker whose IPC send has not completed: a worker that dies first
   * never takes them, and the primary's copy would stay open, the client waiting forever.
   */
  const handing = new Map<Worker, Set<Socket>>();
  let aggregator: AggregatorRegistry<PrometheusContentType> | undefined;
  const answerScrape = (w: Worker, m: { type?: unknown; id?: unknown }) => {
    if (m?.type !== SCRAPE_REQUEST) return;
    aggregator ??= new AggregatorRegistry();
    const reply = (r: { text: string } | { error: string }) => {
      if (w.isConnected()) w.send({ type: SCRAPE_REPLY, id: m.id, ...r });
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (e: unknown) => reply({ error: e instanceof Error ? e.message : String(e) }),
    );
  };

  const fork = (): Worker => {
    const w = cluster.fork();
    live.add(w);
    w.on('message', (m) => {
      if (m?.type === CONNECTION_CLOSED.type) return pool.closed(w);
      if (m?.type === ACCESS_LOG && typeof m.text === 'string') return void process.stdout.write(m.text);
      if (m?.type === STOPPING.type) return pool.remove(w);
      if (m?.type === 'noderag:ready') ready.add(w);
      if (m?.type === 'noderag:ready' && started) pool.add(w);
      answerScrape(w, m);
      if (m?.type === BUILD_EVENT) {
        const kind = (m as { event?: RelayedBuildEvent }).event?.kind;
        if (kind === 'start') builder = w;
        else if (kind === 'done' && builder === w) builder = undefined;
        for (const other of live) if (other !== w && other.isConnected()) other.send(m);
      }
    });
    w.on('disconnect', () => pool.remove(w));
    w.on('exit', (code, signal) => {
      live.delete(w);
      ready.delete(w);
      pool.remove(w);
      // Its build ended with it: the others would show it running (and refuse POST /build
      // with 409) until some other build ended.
      if (builder === w) {
        builder = undefined;
        const event: RelayedBuildEvent = {
          kind: 'done',
          exitCode: EXIT.FAILURE,
          message: `The build stopped: the search worker running it exited (${signal ?? `code ${code}`}); the next build resumes it.`,
        };
        for (const other of live) if (other.isConnected()) other.send({ type: BUILD_EVENT, event });
      }
      for (const socket of handing.get(w) ?? []) socket.destroy();
      handing.delete(w);
      if (stopping || !started) return;
      console.error(
        `Search worker ${w.process.pid} exited (${signal ?? `code ${code}`}); starting a replacement.`,
      );
      fork().once('message', (m: WorkerMessage) => {
        if (m.type === 'noderag:failed') console.error(`Replacement worker failed: ${m.message}`);
      });
    });
    return w;
  };

  const front = createServer({ pauseOnConnect: true }, (socket) => {
    const w = pool.pick();
    if (!w) return socket.destroy();
    const pending = handing.get(w) ?? new Set<Socket>();
    handing.set(w, pending);
    pending.add(socket);
    w.send({ type: CONNECTION }, socket, (e) => {
      pending.delete(socket);
      if (!e) return;
      socket.destroy();
      pool.closed(w);
    });
  });
  const stopAll = async (): Promise<void> => {
    stopping = true;
    front.close();
    const exits = [...live].map((w) => new Promise<void>((r) => w.once('exit', () => r())));
    // A worker still starting (a replacement forked just before the stop) has no listener
    // for the request yet, and Node drops an IPC message nothing listens to: it gets SIGTERM,
    // which its start-up handles (or, earlier still, ends it).
    for (const w of live) {
      if (ready.has(w) && w.isConnected()) w.send(STOP);
      else w.process.kill('SIGTERM');
    }
    await Promise.all(exits);
  };

  // Start: every worker must report ready; the first failure stops them all.
  const first = await new Promise<WorkerMessage>((resolve) => {
    let ready = 0;
    let firstReady: WorkerMessage | undefined;
    for (let i = 0; i < workers; i++) {
      const w = fork();
      w.on('message', (m: WorkerMessage) => {
        if (started) return;
        if (m.type === 'noderag:failed') resolve(m);
        else if (m.type === 'noderag:ready') {
          firstReady ??= m;
          if (++ready === workers) resolve(firstReady);
        }
      });
      w.once('exit', (code) => {
        if (!started && !stopping)
          resolve({ type: 'noderag:failed', exitCode: code || EXIT.FAILURE, message: '' });
      });
    }
  });
  if (first.type === 'noderag:failed') {
    await stopAll();
    throw new CliExit(first.exitCode, first.message || 'a search worker exited during start-up');
  }
  started = true;
  for (const w of live) pool.add(w);
  let url: string;
  try {
    front.listen(options.listen.port, options.listen.host);
    ({ url } = await whenListening(front, options.listen));
  } catch (e) {
    await stopAll();
    if (e instanceof ServerStartError)
      throw new CliExit(EXIT.FAILURE, `Cannot start the search server: ${e.message}`);
    throw e;
  }

  // Installed after start: until then a signal reaches the workers directly (same process
  // group) and the primary's default action ends it with them.
  let signalled = false;
  const received = new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) {
        console.error(`${signal} again: exiting now.`);
        for (const w of live) w.process.kill('SIGKILL');
        process.exit(EXIT.INTERRUPTED);
      }
      signalled = true;
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  console.log(
    `Search server for ${options.mainFolder} listening on ${url} with ${workers} workers (${first.what}). Stop it with Ctrl-C.`,
  );
  const signal = await received;
  console.error(`${signal}: stopping ${workers} workers; in-flight requests get up to 10 s to finish.`);
  await stopAll();
  console.error('Search server stopped.');
}
