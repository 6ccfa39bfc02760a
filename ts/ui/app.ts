/**
 * The web UI as a Hono app factory (no listening here; ts/cli/ui.ts serves it). The page and
 * its files are real files in ./public (routes/static.ts); everything else is a JSON API
 * under /api, one module per resource in ./routes (status, config, files, build, indices,
 * chat). Errors are `{"error": {"code", "message", "problems"?}}`, mapped and logged by the
 * handler the search API uses (ts/server/http.ts). Every /api request must name a loopback
 * Host, and requests that change state must come from the app's own page (./guards.ts);
 * with `apiKey`, every /api request also needs `Authorization: Bearer KEY` (the page and its
 * static files stay open, so the key can be typed in).
 *
 * The build, the search engine and the index statistics are injected (./deps.ts has the real
 * ones), so the routes are tested with `app.request()` without the native addon.
 */
import { Hono } from 'hono';
import { requireApiKey } from '../server/auth.js';
import { hostProblem } from '../server/host-guard.js';
import { errorHandler, HttpError } from '../server/http.js';
import { originProblem } from './guards.js';
import { buildRoutes } from './routes/build.js';
import { chatRoutes } from './routes/chat.js';
import { configRoutes } from './routes/config.js';
import { filesRoutes } from './routes/files.js';
import { indicesRoutes } from './routes/indices.js';
import { readPublicFiles, staticRoutes } from './routes/static.js';
import { statusRoutes } from './routes/status.js';
import { type UiDeps, uiContext } from './ui-context.js';

export {
  DEFAULT_MAX_UPLOAD_BYTES,
  type UiAnswer,
  type UiDeps,
  type UiSearch,
} from './ui-context.js';

export function createUiApp(deps: UiDeps): Hono {
  const ctx = uiContext(deps);
  const app = new Hono();
  app.onError(errorHandler(ctx.logError));
  app.notFound((c) => {
    throw new HttpError(404, 'not_found', `no route ${c.req.method} ${c.req.path}`);
  });

  app.use('/api/*', async (c, next) => {
    const wrongHost = hostProblem(c.req.header('host'));
    if (wrongHost) throw new HttpError(403, 'wrong_host', `refused: ${wrongHost}`);
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const problem = originProblem({
        host: c.req.header('host'),
        origin: c.req.header('origin'),
        secFetchSite: c.req.header('sec-fetch-site'),
      });
      if (problem) throw new HttpError(403, 'cross_origin', `refused: ${problem}`);
    }
    await next();
  });
  // With a key, every API route needs it (the page sends the one typed into its key field).
  if (deps.apiKey) app.use('/api/*', requireApiKey(deps.apiKey));

  app.route('/', staticRoutes(readPublicFiles()));
  for (const routes of [statusRoutes, configRoutes, filesRoutes, buildRoutes, indicesRoutes, chatRoutes]) {
    app.route('/api', routes(ctx));
  }
  return app;
}
