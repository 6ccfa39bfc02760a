/**
 * The real dependencies of the web UI: the build pipeline run in this process, NodeSearch
 * for the chat, and the edge count read from the graph's parquet footer. Kept apart from
 * app.ts so the routes can be tested without the native addon.
 */

import { runBuild } from '../indexing/pipeline.js';
import { CACHE_FILES, resolveInProject } from '../project/layout.js';
import { NodeSearch } from '../search/node-search.js';
import { validateParquetFooter } from '../store/parquet.js';
import type { UiDeps } from './app.js';

/** `stop`: aborted when the UI stops; a running build then stops at its next safe point. */
export function realUiDeps(folder: string, stop?: AbortSignal): UiDeps {
  return {
    folder,
    runBuild: (sinks, lock) =>
      runBuild({
        folder,
        yes: true,
        handleSignals: false,
        stdout: sinks.stdout,
        stderr: sinks.stderr,
        ...(lock ? { lock } : {}),
        ...(stop ? { signal: stop } : {}),
      }),
    // With watch, like the search server: a build run outside the UI (a terminal) is picked
    // up without a save or a restart.
    openSearch: (config) => new NodeSearch(config, { watch: true }),
    countEdges: async (root) => {
      try {
        return (await validateParquetFooter(resolveInProject(root, CACHE_FILES.graphEdges))).numRows;
      } catch {
        return null;
      }
    },
  };
}
