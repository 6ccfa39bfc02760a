/**
 * POST /api/build: starts the one in-process build (202), or 409 while one runs.
 * GET /api/build/events: the build's output lines and its end as server-sent events
 * (ts/server/build-routes.ts, shared with the search server's GET /build/events).
 */
import { Hono } from 'hono';
import { buildEventStream } from '../../server/build-routes.js';
import { HttpError } from '../../server/http.js';
import type { UiContext } from '../ui-context.js';

export function buildRoutes(ctx: UiContext): Hono {
  const { job } = ctx;
  return new Hono()
    .post('/build', (c) => {
      // A build changes the index: the next question opens an engine on the new one.
      const started = job.start(() => ctx.resetSearch());
      if (!started)
        throw new HttpError(409, 'build_running', 'a build is already running; wait for it to end');
      return c.json({ ok: true, started: true }, 202);
    })
    .get('/build/events', (c) => buildEventStream(c, job));
}
