/**
 * POST /api/build: starts the one in-process build (202), or 409 while one runs here or in
 * another process (the project's build lock, taken before the reply).
 * GET /api/build/events: the build's output lines and its end as server-sent events
 * (ts/server/build-routes.ts, shared with the search server's GET /build/events).
 */
import { Hono } from 'hono';
import { BuildLockedError } from '../../indexing/errors.js';
import { acquireBuildLock, type BuildLock } from '../../indexing/lock.js';
import { buildEventStream } from '../../server/build-routes.js';
import { HttpError } from '../../server/http.js';
import type { UiContext } from '../ui-context.js';

export function buildRoutes(ctx: UiContext): Hono {
  const { job } = ctx;
  return new Hono()
    .post('/build', async (c) => {
      const running = (detail: string) =>
        new HttpError(409, 'build_running', `a build is already running${detail}; wait for it to end`);
      if (job.running) throw running('');
      // The lock first, as the search server's POST /build: a build held by another process
      // (a `noderag build` in a terminal) is a 409 now, not a 202 whose build then fails.
      let lock: BuildLock;
      try {
        lock = await acquireBuildLock(ctx.root);
      } catch (e) {
        if (e instanceof BuildLockedError) throw running(` (process ${e.pid} holds the build lock)`);
        throw e;
      }
      // A build changes the index: the next question opens an engine on the new one.
      const started = job.start(
        () => ctx.resetSearch(),
        (sinks) => ctx.runBuild(sinks, lock).finally(() => lock.release()),
      );
      if (!started) {
        await lock.release();
        throw running('');
      }
      return c.json({ ok: true, started: true }, 202);
    })
    .get('/build/events', (c) => buildEventStream(c, job));
}
