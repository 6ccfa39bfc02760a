/**
 * POST /api/build: starts the one in-process build (202), or 409 while one runs here or in
 * another process (the project's build lock, taken before the reply).
 * GET /api/build/events: the build's output lines and its end as server-sent events
 * (ts/server/build-routes.ts, shared with the search server's GET /build/events).
 */
import { Hono } from 'hono';
import { buildEventStream, startLockedBuild } from '../../server/build-routes.js';
import type { UiContext } from '../ui-context.js';

export function buildRoutes(ctx: UiContext): Hono {
  const { job } = ctx;
  return new Hono()
    .post('/build', async (c) => {
      // A build changes the index: the next question opens an engine on the new one.
      await startLockedBuild(ctx.root, job, ctx.runBuild, () => ctx.resetSearch());
      return c.json({ ok: true, started: true }, 202);
    })
    .get('/build/events', (c) => buildEventStream(c, job, ctx.closing));
}
