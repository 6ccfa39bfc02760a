/**
 * An engine thread of `noderag search --workers N` (ts/server/engine-threads.ts): builds the
 * engine as the one-process server does (./search-engine.ts), then answers the main thread's
 * requests. A failure to start is sent to the main thread, which prints it once and exits
 * with its code.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createProviders, o200kTokenCounter } from '../llm/create-providers.js';
import { searchEngine } from '../server/engine-adapter.js';
import {
  type EngineThreadData,
  noteThreadCall,
  reportThreadFailure,
  serveEngineOnThread,
} from '../server/engine-threads.js';
import { countedProviders } from '../server/provider-metrics.js';
import { CliExit, EXIT } from './exit.js';
import { loadConfig, startEngine } from './search-engine.js';

export interface SearchThreadData extends EngineThreadData {
  folder: string;
  folderArgText: string;
  cacheSize: number;
  reload: boolean;
  /** Count the model calls (metrics or an access log). */
  countCalls: boolean;
  /** Count their tokens (metrics). */
  countCallTokens: boolean;
  /** Count each retrieval's tokens (an access log). */
  countRetrievalTokens: boolean;
}

const data = workerData as SearchThreadData;
const port = parentPort!;
try {
  const config = loadConfig(data.folder);
  const models = createProviders(config, { mode: 'search', tokenCounter: o200kTokenCounter });
  const providers = data.countCalls
    ? countedProviders(models, {
        names: { chat: models.chat.identity.provider, embedding: models.embedding.identity.provider },
        ...(data.countCallTokens ? { tokens: o200kTokenCounter } : {}),
        onCall: noteThreadCall,
      })
    : models;
  const first = data.index === 0;
  const search = await startEngine(config, {
    folderArgText: data.folderArgText,
    retrievalCacheSize: data.cacheSize,
    quiet: !first,
    reload: data.reload,
    logs: first,
    providers,
  });
  serveEngineOnThread(port, searchEngine(search), {
    close: () => search.close(),
    countTokens: data.countRetrievalTokens,
    countCalls: data.countCalls,
  });
} catch (e) {
  reportThreadFailure(
    port,
    e instanceof CliExit ? e.exitCode : EXIT.FAILURE,
    e instanceof Error ? e.message : String(e),
  );
}
