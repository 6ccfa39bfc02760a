/**
 * What the UI's route modules (./routes/) share: the project folder, the one build job, the
 * search engine opened on first question (closed after a config save or a build), and the
 * config as saved. `createUiApp` (./app.ts) makes one per app.
 */
import { join } from 'node:path';
import { ensureConfig, NodeConfig } from '../config/index.js';
import type { BuildLock } from '../indexing/lock.js';
import { INPUT_DIR } from '../project/layout.js';
import type { AnswerResult } from '../search/engine-types.js';
import type { RetrievedItem } from '../search/retrieve.js';
import { BuildJob, type BuildSinks } from '../server/build-job.js';
import { DEFAULT_MAX_UPLOAD_BYTES, removeStaleUploads } from '../server/upload.js';

export { DEFAULT_MAX_UPLOAD_BYTES };

/** An answer with the items of its context (NodeSearch.answer gives them). */
export interface UiAnswer extends AnswerResult {
  items: readonly Pick<RetrievedItem, 'type' | 'text' | 'document'>[];
}

/** What the chat needs from a search engine (NodeSearch fits). */
export interface UiSearch {
  answer(question: string, options?: { signal?: AbortSignal }): Promise<UiAnswer>;
  close(): void;
}

export interface UiDeps {
  /** Absolute project folder. */
  folder: string;
  /**
   * Runs one build of `folder` writing its output to the sinks; resolves to its exit code.
   * `lock`: the build lock, already taken by POST /api/build (runBuild's `lock` option).
   */
  runBuild: (sinks: BuildSinks, lock?: BuildLock) => Promise<number>;
  /** A search engine for the current config (re-created after a save or a build). */
  openSearch: (config: NodeConfig) => UiSearch;
  /** Edge count of the built graph, or null when unknown. */
  countEdges: (folder: string) => Promise<number | null>;
  /** Largest accepted upload, per file and per request (default 20 MiB). */
  maxUploadBytes?: number;
  logError?: (e: unknown) => void;
  /** With a key, every /api route needs `Authorization: Bearer KEY` (ts/server/auth.ts). */
  apiKey?: string;
  /** Aborted when the UI server stops: the page's open build-event stream ends at once. */
  closing?: AbortSignal;
}

export interface UiContext {
  readonly root: string;
  readonly inputDir: string;
  readonly maxUploadBytes: number;
  readonly job: BuildJob;
  /** The build runner of the deps (POST /api/build gives it the lock it took). */
  readonly runBuild: UiDeps['runBuild'];
  readonly countEdges: (folder: string) => Promise<number | null>;
  readonly logError: (e: unknown) => void;
  /** Aborted when the UI server stops (UiDeps.closing). */
  readonly closing: AbortSignal | undefined;
  /** The config as saved; a ConfigError (422) names its problems. */
  loadConfig(requireApiKeys?: boolean): NodeConfig;
  /**
   * Runs `work` with the search engine, opened on first use with the saved config (API keys
   * required). The engine stays open until `work` settles, even if it is reset meanwhile.
   */
  withSearch<T>(work: (search: UiSearch) => Promise<T>): Promise<T>;
  /**
   * The next question opens an engine on the new config or index. The current one closes
   * once its questions in flight have settled (closed under them, they failed with a 500).
   */
  resetSearch(): void;
}

export function uiContext(deps: UiDeps): UiContext {
  const root = deps.folder;
  ensureConfig(root);
  const inputDir = join(root, INPUT_DIR);
  removeStaleUploads(inputDir);
  let engine: UiSearch | null = null;
  /** Questions in flight on each engine, current or retired. */
  const users = new Map<UiSearch, number>();
  const retired = new Set<UiSearch>();
  const release = (e: UiSearch) => {
    const left = (users.get(e) ?? 1) - 1;
    if (left > 0) {
      users.set(e, left);
      return;
    }
    users.delete(e);
    if (retired.delete(e)) e.close();
  };
  const loadConfig = (requireApiKeys = false) => NodeConfig.fromMainFolder(root, { requireApiKeys });
  return {
    root,
    inputDir,
    maxUploadBytes: deps.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES,
    // Every build starts through POST /api/build, which passes the run with its lock.
    job: new BuildJob(),
    runBuild: deps.runBuild,
    countEdges: deps.countEdges,
    logError: deps.logError ?? ((e: unknown) => console.error(e)),
    closing: deps.closing,
    loadConfig,
    withSearch: async (work) => {
      engine ??= deps.openSearch(loadConfig(true));
      const used = engine;
      users.set(used, (users.get(used) ?? 0) + 1);
      try {
        return await work(used);
      } finally {
        release(used);
      }
    },
    resetSearch: () => {
      if (engine && users.has(engine)) retired.add(engine);
      else engine?.close();
      engine = null;
    },
  };
}
