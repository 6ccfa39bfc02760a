/**
 * Builds over HTTP on the search server (issue 16 item 6):
 * POST /build starts an incremental build of the served project in this process (202), or
 * 409 while one runs, here or in any other process (another worker, a `noderag build`):
 * info/build.lock is taken before the reply, and a held lock is the 409. The server loads
 * the new generation when the build finishes it, as after any build (NodeSearch watch).
 * GET /build/events streams the build's output lines and its end as server-sent events
 * (`buildEventStream`, shared with the web UI); a client that connects late gets the
 * current build's events so far first; the stream ends after the build's `done` (with
 * `?follow=1` it goes on with later builds).
 */
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { NodeConfig } from '../config/node-config.js';
import { BuildLockedError } from '../indexing/errors.js';
import { acquireBuildLock, type BuildLock } from '../indexing/lock.js';
import { INPUT_DIR } from '../project/layout.js';
import type { BuildEvent } from './build-event.js';
import type { BuildJob, BuildSinks } from './build-job.js';
import { HttpError } from './http.js';
import { eventJson } from './stream.js';
import { requireInputFolder } from './upload.js';

/** A comment this often keeps proxies and browsers from timing the stream out. */
const KEEP_ALIVE_MS = 15_000;

/**
 * The job's events as server-sent events (`event:` the kind, `data:` the JSON), live: the
 * running build's (or, between builds, the last one's) from its start, ending after its
 * `done`; with no build yet, the next one's. With `?follow=1` the stream stays open and
 * goes on with every later build (the web UI follows them so). When `closing` aborts (the
 * server is stopping) the stream ends at once instead of holding the shutdown.
 */
export function buildEventStream(c: Context, job: BuildJob, closing?: AbortSignal): Response {
  // HEAD: the headers only. Hono answers HEAD with the GET handler and drops the body without
  // cancelling it, so a stream opened for it subscribed to the job until the server stopped.
  if (c.req.method === 'HEAD') {
    return c.body(null, 200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  }
  const follow = c.req.query('follow') === '1';
  // Every open stream listens for the server's stop: more than 10 is not a leak.
  if (closing) setMaxListeners(0, closing);
  return streamSSE(c, async (stream) => {
    const queue: BuildEvent[] = [...job.history];
    let wake: (() => void) | null = null;
    const unsubscribe = job.subscribe((e) => {
      queue.push(e);
      wake?.();
    });
    stream.onAbort(() => {
      unsubscribe();
      wake?.();
    });
    const onClosing = () => wake?.();
    closing?.addEventListener('abort', onClosing);
    try {
      for (;;) {
        let ended = false;
        while (queue.length > 0 && !ended) {
          const e = queue.shift()!;
          await stream.writeSSE({ event: e.kind, data: eventJson(e) });
          ended = e.kind === 'done' && !follow;
        }
        if (ended || stream.aborted || stream.closed || closing?.aborted) break;
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((r) => {
          wake = r;
          timer = setTimeout(r, KEEP_ALIVE_MS);
        });
        clearTimeout(timer);
        wake = null;
        if (queue.length === 0 && !stream.aborted && !closing?.aborted)
          await stream.write(': keep-alive\n\n');
      }
    } finally {
      unsubscribe();
      closing?.removeEventListener('abort', onClosing);
    }
  });
}

/** Runs one build of the project with the lock already taken (runBuild with `lock`). */
export type LockedBuildRunner = (sinks: BuildSinks, lock: BuildLock) => Promise<number>;

export interface BuildRouteDeps {
  /** Absolute project folder. */
  folder: string;
  job: BuildJob;
  runBuild: LockedBuildRunner;
  /** Aborted when the server stops: open event streams end. */
  closing?: AbortSignal;
}

function buildRunning(detail: string): HttpError {
  return new HttpError(409, 'build_running', `a build is already running${detail}; wait for it to end`);
}

/**
 * Starts `job` on the project in `folder` with its build lock taken first, so a build held
 * here or by another process (a `noderag build` in a terminal) is a 409 before the reply,
 * not a 202 whose build then fails. Shared by POST /build and the web UI's POST /api/build.
 */
export async function startLockedBuild(
  folder: string,
  job: BuildJob,
  runBuild: LockedBuildRunner,
  onEnd?: (exitCode: number) => Promise<void> | void,
): Promise<void> {
  if (job.running) throw buildRunning(' in this server');
  // A config the build would refuse is a 422 naming its problems now, not a 202 whose build
  // then ends at once with exit code 2 (ConfigError → 422 invalid_config, ./http.ts).
  NodeConfig.fromMainFolder(folder);
  // The same for a project without input/: a 409 now, not a 202 and a build that fails.
  await requireInputFolder(join(folder, INPUT_DIR), 'to build from');
  let lock: BuildLock;
  try {
    lock = await acquireBuildLock(folder);
  } catch (e) {
    if (e instanceof BuildLockedError) throw buildRunning(` (process ${e.pid} holds the build lock)`);
    throw e;
  }
  const started = job.start(onEnd, (sinks) => runBuild(sinks, lock).finally(() => lock.release()));
  if (!started) {
    await lock.release();
    throw buildRunning(' in this server');
  }
}

export function buildRoutes(deps: BuildRouteDeps): Hono {
  const { job } = deps;
  return new Hono()
    .post('/build', async (c) => {
      await startLockedBuild(deps.folder, job, deps.runBuild);
      return c.json({ started: true, events: '/build/events' }, 202);
    })
    .get('/build/events', (c) => buildEventStream(c, job, deps.closing));
}
