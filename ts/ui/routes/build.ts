/**
 * POST /api/build: starts the one in-process build (202), or 409 while one runs.
 * GET /api/build/events: the build's output lines and its end as server-sent events; a page
 * that connects late gets the current build's events so far first.
 */
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { HttpError } from '../../server/http.js';
import type { BuildEvent } from '../api-types.js';
import type { UiContext } from '../ui-context.js';

/** A comment this often keeps proxies and the browser from timing the stream out. */
const KEEP_ALIVE_MS = 15_000;

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
    .get('/build/events', (c) =>
      streamSSE(c, async (stream) => {
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
        try {
          for (;;) {
            while (queue.length > 0) {
              const e = queue.shift()!;
              await stream.writeSSE({ event: e.kind, data: JSON.stringify(e) });
            }
            if (stream.aborted || stream.closed) break;
            let timer: NodeJS.Timeout | undefined;
            await new Promise<void>((r) => {
              wake = r;
              timer = setTimeout(r, KEEP_ALIVE_MS);
            });
            clearTimeout(timer);
            wake = null;
            if (queue.length === 0 && !stream.aborted) await stream.write(': keep-alive\n\n');
          }
        } finally {
          unsubscribe();
        }
      }),
    );
}
