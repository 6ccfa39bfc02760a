/**
 * The routes that change the served project (issue 16 item 6): documents (./documents.ts)
 * and builds (./build-routes.ts), mounted by `createApp` when `AppDeps.project` is given.
 *
 * A browser page on another site can send a multipart POST or a bodiless POST without a CORS
 * preflight, so without an API key it could upload into input/ or start a build on a server
 * bound to 127.0.0.1. Browsers name the page's origin on such requests: a state-changing
 * request whose `Origin` is not the `--cors` origin is refused (403). Clients that are not
 * browsers send no Origin and are not affected; a DNS-rebound name shows as its own origin.
 */

import { join } from 'node:path';
import { Hono, type MiddlewareHandler } from 'hono';
import { INPUT_DIR } from '../project/layout.js';
import { BuildJob, type RelayedBuildEvent } from './build-job.js';
import { buildRoutes, type LockedBuildRunner } from './build-routes.js';
import { documentRoutes } from './documents.js';
import { HttpError } from './http.js';
import { DEFAULT_MAX_UPLOAD_BYTES, removeStaleUploads } from './upload.js';

export interface ProjectDeps {
  /** Absolute project folder. */
  folder: string;
  /** Runs one build of `folder` with its lock taken (runBuild with `lock`). */
  runBuild: LockedBuildRunner;
  /** Largest accepted upload, per file and per request (default 20 MiB). */
  maxUploadBytes?: number;
  /**
   * With several processes on one port (`--workers`), the build events of each go to the
   * others, so GET /build/events shows a build whichever process runs it.
   */
  relay?: BuildRelay;
  /** Aborted when the server stops: open GET /build/events streams end at once. */
  closing?: AbortSignal;
}

export interface BuildRelay {
  publish(e: RelayedBuildEvent): void;
  subscribe(listener: (e: RelayedBuildEvent) => void): void;
}

export function projectRoutes(deps: ProjectDeps, corsOrigin?: string): Hono {
  removeStaleUploads(join(deps.folder, INPUT_DIR));
  const app = new Hono();
  const sameSite: MiddlewareHandler = async (c, next) => {
    const origin = c.req.header('origin');
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD' && origin !== undefined && origin !== corsOrigin) {
      throw new HttpError(
        403,
        'cross_origin',
        `refused: a page on ${origin} may not change this server's documents or start a build (allow one origin with --cors)`,
      );
    }
    await next();
  };
  // Only these paths: a '*' middleware here would run for every route of the app it joins.
  for (const path of ['/documents', '/documents/*', '/build']) app.use(path, sameSite);
  const { relay } = deps;
  const job = new BuildJob(undefined, relay ? { publish: (e) => relay.publish(e) } : {});
  relay?.subscribe((e) => job.mirror(e));
  app.route(
    '/',
    documentRoutes({
      folder: deps.folder,
      maxUploadBytes: deps.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES,
      building: () => job.running,
    }),
  );
  app.route(
    '/',
    buildRoutes({
      folder: deps.folder,
      job,
      runBuild: deps.runBuild,
      ...(deps.closing ? { closing: deps.closing } : {}),
    }),
  );
  return app;
}
