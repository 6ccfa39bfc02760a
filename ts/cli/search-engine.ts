/**
 * What `noderag search` runs its engine with, in the process or on each engine thread of
 * `--workers N` (./search-thread.ts): the config, read as a usage error when it is wrong, and
 * the NodeSearch that follows new generations.
 */
import { NodeConfig } from '../config/index.js';
import { ConfigError, IndexNotBuiltError } from '../errors.js';
import { isSearchable } from '../project/state.js';
import { parseStateText, readStateText } from '../search/index-files.js';
import { NodeSearch, type SearchProviders } from '../search/node-search.js';
import { shellArg } from '../shell-arg.js';
import { CliExit, EXIT } from './exit.js';

export function loadConfig(folder: string): NodeConfig {
  try {
    return NodeConfig.fromMainFolder(folder);
  } catch (e) {
    if (e instanceof ConfigError) throw new CliExit(EXIT.USAGE, e.message);
    throw e;
  }
}

/**
 * Loads the engine. A project never built, or a finished index that cannot be loaded, is
 * a refusal (CliExit); a first build still running is a warning (the server answers 503
 * meanwhile), printed unless `quiet`. `logs`: print a line when a new generation is loaded
 * (with --workers, only the first engine thread does).
 */
export async function startEngine(
  config: NodeConfig,
  o: {
    folderArgText: string;
    retrievalCacheSize: number;
    quiet: boolean;
    reload: boolean;
    logs: boolean;
    providers: SearchProviders;
  },
): Promise<NodeSearch> {
  const { folderArgText, retrievalCacheSize, quiet, reload, logs, providers } = o;
  const root = config.mainFolder;
  // null: never built. The server starts anyway and answers 503 until a build finishes
  // (`noderag build`, or POST /build on this server after POST /documents).
  const stateText = await readStateText(root);
  const search = new NodeSearch(config, {
    providers,
    retrievalCacheSize,
    watch: reload,
    onReload: (r) => {
      if (logs) {
        console.log(
          `Index generation ${r.generation} loaded (${r.nodes} nodes, ${r.vectors} vectors), replacing generation ${r.previous}.`,
        );
      }
    },
    onReloadError: (e) => {
      if (logs) {
        console.error(
          `The index a build finished could not be loaded (${e instanceof Error ? e.message : String(e)}); still serving the loaded generation.`,
        );
      }
    },
  });
  try {
    await search.ready();
  } catch (e) {
    const state = stateText === null ? null : parseSafely(stateText);
    const waiting =
      e instanceof IndexNotBuiltError && (stateText === null || (state !== null && !isSearchable(state)));
    if (!waiting) {
      search.close();
      if (e instanceof IndexNotBuiltError)
        throw new CliExit(EXIT.FAILURE, `Cannot serve ${root}: ${e.message}`);
      throw e;
    }
    if (!quiet) {
      console.error(notBuiltWarning(root, folderArgText));
    }
  }
  return search;
}

export function notBuiltWarning(root: string, folderArgText: string): string {
  return `Warning: the index of ${root} is not built yet; question routes answer 503 until the first build finishes (\`noderag build -f ${shellArg(folderArgText)}\`, or POST /build).`;
}

function parseSafely(text: string) {
  try {
    return parseStateText(text);
  } catch {
    return null;
  }
}
