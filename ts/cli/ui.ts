/**
 * `noderag ui -f <folder> [--port N] [--api-key KEY]`: the local web UI (configure, upload, build with live
 * progress, inspect the indices, ask questions) on 127.0.0.1. An existing folder without
 * Node_config.yaml gets the commented template first, so the page opens on a valid config;
 * a folder that does not exist (a mistyped -f) is refused, never created.
 * Port 0 picks a free port. Stops on SIGINT/SIGTERM. With `--api-key` (or NODERAG_API_KEY,
 * as `noderag search`) every /api route needs the key, which the page asks for.
 */
import { resolve } from 'node:path';
import { defineCommand } from 'citty';
import { ensureConfig, projectFolderProblem } from '../config/index.js';
import { ServerStartError, serveApp } from '../server/serve.js';
import { createUiApp } from '../ui/app.js';
import { realUiDeps } from '../ui/deps.js';
import { folderArg, folderValue, parsePort } from './args.js';
import { CliExit, EXIT } from './exit.js';
import { SUB_COMMAND_METAS } from './metas.js';
import { API_KEY_ENV, parseApiKey } from './search.js';

export const DEFAULT_UI_PORT = 8501;

export default defineCommand({
  meta: SUB_COMMAND_METAS.ui,
  args: {
    ...folderArg,
    port: {
      type: 'string',
      description: `port on 127.0.0.1 (default ${DEFAULT_UI_PORT}; 0 = any free port)`,
    },
    'api-key': {
      type: 'string',
      description: `require "Authorization: Bearer KEY" on the API; the page asks for it (default: $${API_KEY_ENV})`,
    },
  },
  async run({ args }) {
    const folder = resolve(folderValue(args.folder));
    const port = parsePort(args.port, DEFAULT_UI_PORT, true);
    const apiKey = parseApiKey(args['api-key']);
    // The UI writes the template into an existing folder (it is how a project starts there),
    // but never creates a folder a mistyped -f names.
    const notFolder = projectFolderProblem(folder);
    if (notFolder) throw new CliExit(EXIT.USAGE, notFolder);
    const ensured = ensureConfig(folder);
    if (ensured.created) console.log(`Created ${ensured.configPath} from the template; edit it in the UI.`);
    // Aborted on stop: the page's open build-event stream ends instead of holding the shutdown.
    const closing = new AbortController();
    const deps = realUiDeps(folder, closing.signal);
    // The build the page started, if one runs: on stop it ends at its next safe point, and
    // the UI says it is waiting for it (it went on silently, for as long as it took).
    let building: Promise<number> | null = null;
    const app = createUiApp({
      ...deps,
      runBuild: (sinks, lock) => {
        const run = deps.runBuild(sinks, lock);
        building = run;
        void run.finally(() => {
          if (building === run) building = null;
        });
        return run;
      },
      ...(apiKey ? { apiKey } : {}),
      closing: closing.signal,
    });
    let server: Awaited<ReturnType<typeof serveApp>>;
    try {
      server = await serveApp(app, {
        host: '127.0.0.1',
        port,
        graceMs: 1000,
        settings: { port: '--port', host: 'the address' },
      });
    } catch (e) {
      if (e instanceof ServerStartError) throw new CliExit(EXIT.FAILURE, `Cannot start the UI: ${e.message}`);
      throw e;
    }
    const keyNote = apiKey ? '; API key required' : '';
    // The handlers are in place before the address is printed: whoever reads it may stop the
    // UI at once (a Ctrl-C a moment earlier ended the process without the messages).
    const stopped = new Promise<void>((done) => {
      const stop = (signal: NodeJS.Signals) => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        console.error(`${signal}: stopping the UI; requests in flight get up to 1 s to finish.`);
        closing.abort();
        const build = building;
        if (build)
          console.error('The running build stops at its next safe point (it resumes at the next build).');
        server
          .close()
          .then(() => build?.catch(() => undefined))
          .then(() => console.error('UI stopped.'))
          .finally(done);
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    console.log(`noderag UI for ${folder}: ${server.url}/ (Ctrl-C to stop${keyNote})`);
    await stopped;
  },
});
