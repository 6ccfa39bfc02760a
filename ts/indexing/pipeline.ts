/**
 * The build run loop (docs/method.md §4.2):
 *
 *  1. config (first run: write the template, exit 3), build.lock
 *  2. finish or discard leftover staging
 *  3. INIT: committed-index check and discovery
 *  4. the state tree, then the confirmation (or --yes)
 *  5. start generation g + 1 when there is something new
 *  6. run `current_state`, commit (which advances the state), repeat to FINISHED; documents
 *     that arrived meanwhile start a follow-up cycle in the same run
 *  7. a stage error saves ERROR and exits 1; SIGINT/SIGTERM/SIGHUP stop new requests, give the
 *     ones in flight 10 s, save INTERRUPTED and exit 130 (a second signal exits at once).
 *
 * Every stage commit goes through StageCommit, so each stage is all-or-nothing and a re-run
 * resumes at the stage in state.json, its earlier model calls served by the response cache.
 */
import { renameSync, writeFileSync } from 'node:fs';
import type { NodeConfig as NodeConfigType } from '../config/node-config.js';
import { ensureConfig, firstRunProblem, NodeConfig } from '../config/node-config.js';
import { ConfigError, IndexFileError, InvalidArgumentError, NodeRagError } from '../errors.js';
import { readChecksums } from '../index-io/checksums.js';
import { discardFinishedGeneration, keepFinishedGeneration } from '../index-io/finished-generation.js';
import { GRAPH_SNAPSHOT_SOURCES, graphSnapshotCurrent } from '../index-io/graph-snapshot.js';
import { IndexData } from '../index-io/index-data.js';
import { parquetFooterOk } from '../index-io/parquet.js';
import { createProviders, type ModelProviders, o200kTokenCounter } from '../llm/create-providers.js';
import type { CacheLoadReport } from '../llm/response-cache.js';
import type { RetryPolicy } from '../llm/retry.js';
import { CACHE_FILES, INFO_FILES, INPUT_DIR, resolveInProject } from '../project/layout.js';
import {
  advanceState,
  type BuildState,
  describeEmbedding,
  embeddingChange,
  failState,
  isCycleUnfinished,
  rebuildHint,
  STAGES,
  type StageName,
  sameEmbedding,
  serializeState,
  startCycle,
  writeState,
} from '../project/state.js';
import { shellArg } from '../shell-arg.js';
import { addToReport, type BuildReport, emptyReport } from './build-report.js';
import { buildSettings, buildSettingsChange, readBuildSettings } from './build-settings.js';
import { type CommitStep, recoverStaging, StageCommit } from './commit.js';
import { readCycleSync } from './cycle-sync.js';
import { type DiscoveryPlan, type DocuType, discoverDocuments } from './discover.js';
import { BuildLockedError, NoDocumentsError } from './errors.js';
import { type DocumentHashes, readDocumentHashes, readIndices, serializeIndices } from './info-files.js';
import { type FileProbe, runInit } from './init.js';
import { acquireBuildLock, type BuildLock } from './lock.js';
import { BuildLog, formatSeconds, secretRedactor } from './log.js';
import { moveIndexAside, PREVIOUS_INDEX_DIR, recoverRebuild } from './rebuild.js';
import type { StageContext, StageResult, StageTable } from './stages/context.js';
import { probeIndexFile } from './stages/core.js';
import { configuredEmbedding } from './stages/embedding.js';
import { vectorIndexParamsChange } from './stages/hnsw.js';
import { dropHnswPrebuild, startHnswPrebuild } from './stages/hnsw-prebuild.js';
import { indexParams } from './stages/hnsw-vectors.js';
import { STAGE_RUNNERS } from './stages/index.js';
import { InterruptedError, StopSignal } from './stages/interrupt.js';
import { StageOutputs } from './stages/outputs.js';
import { Progress, type ProgressOutput, progressStyle } from './stages/progress.js';
import {
  BUILD_EXIT,
  changedDeletedNote,
  confirmBuild,
  count,
  renderStateTree,
  upToDateMessage,
} from './tree.js';
import { readUnindexable } from './unindexable.js';

export interface BuildOptions {
  folder: string;
  yes?: boolean;
  allowFailures?: boolean;
  /**
   * Rebuild the index from scratch, keeping cache/response_cache (ts/indexing/rebuild.ts):
   * the previous index waits aside until the new one is searchable, and comes back if the
   * build fails, is interrupted or declined.
   */
  rebuild?: boolean;
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout?: NodeJS.WritableStream & ProgressOutput;
  stderr?: NodeJS.WritableStream;
  /**
   * Install SIGINT/SIGTERM/SIGHUP handlers for the build (default false; the `noderag build`
   * command sets it): the first signal stops the build at the next safe point, a second exits
   * the process (a hang-up before the stages cancels the build). Off by default so an
   * application that embeds the build keeps its own signals.
   */
  handleSignals?: boolean;
  /**
   * Stops the build at the next safe point when aborted, as a first SIGINT does (the run
   * ends with BUILD_EXIT.INTERRUPTED and resumes from its last commit next time): for an
   * application that runs builds and must stop (the web UI when it is stopped).
   */
  signal?: AbortSignal;
  /** Replace stage implementations (tests). */
  stages?: Partial<StageTable>;
  /** Observation points and settings for tests (nothing of this is read from the environment). */
  hooks?: BuildHooks;
  /**
   * info/build.lock already taken by the caller (the search server takes it before it answers
   * POST /build, so a build running elsewhere is its 409). The run releases it at its end;
   * a run that stops before its lock step (a config problem) does not, so the caller also
   * releases it (release is idempotent).
   */
  lock?: BuildLock;
  /**
   * Receives what the run changed (documents added, changed, deleted and renamed; chunks,
   * semantic units, entities and relationships removed) once the last cycle has committed.
   * Not called when the run fails, is interrupted, or had nothing to do.
   */
  onReport?: (report: BuildReport) => void;
}

export type { BuildReport } from './build-report.js';

/**
 * Test hooks of a build. tests/helpers/build-entry.ts uses the first two to kill its own
 * process (SIGKILL) at an exact point of a commit, and `retry` to exhaust the attempts
 * against a failing fake server in milliseconds.
 */
export interface BuildHooks {
  /** Called synchronously after each step of a stage's commit (docs/method.md §4.4). */
  afterCommitStep?: (stage: StageName, step: CommitStep, detail?: string) => void;
  /** Called after a stage's commit, once the state has advanced. */
  afterStage?: (stage: StageName) => void;
  /** The retry policy of the build's model calls (default BUILD_RETRY_POLICY). */
  retry?: RetryPolicy;
}

/**
 * What to do about an operating-system error (a full disk, a read-only folder), or null for
 * other errors. Such errors need no stack trace: the message names the call and the path.
 */
export function systemErrorHint(error: unknown): string | null {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== 'string' || !(error instanceof Error) || !('syscall' in error)) return null;
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return 'The disk is full: free some space, then run the build again.';
  if (code === 'EXDEV')
    return 'A file could not be moved between cache/ and info/: they must be on the same filesystem (move the project, or do not link one of them elsewhere), then run the build again.';
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS')
    return 'The project folder is not writable: fix its permissions, then run the build again.';
  return `A file operation failed (${code}); fix the cause, then run the build again.`;
}

/**
 * What opening the response cache found damaged, or null: records inside its files that
 * were skipped (their replies will be asked again), and more than a torn last record cut.
 */
function responseCacheDamage(r: CacheLoadReport): string | null {
  const parts: string[] = [];
  if (r.skippedLines > 0) parts.push(`${count(r.skippedLines, 'damaged reply line')} in llm.jsonl skipped`);
  if (r.skippedRecords > 0)
    parts.push(`${count(r.skippedRecords, 'damaged embedding record')} in embeddings.bin skipped`);
  // A torn last record (a process killed while writing one) is routine and not reported.
  if (r.damagedEmbeddingBytes > 0)
    parts.push(
      `the last ${r.damagedEmbeddingBytes} bytes of embeddings.bin could not be read (the file as it was is kept as embeddings.bin.damaged)`,
    );
  if (parts.length === 0) return null;
  return `response cache (cache/response_cache/): ${parts.join('; ')}; those model replies are requested again when needed`;
}

/**
 * An index that is up to date but whose search snapshot (cache/search_graph.bin) is missing,
 * damaged or stale gets it again, by a commit of the unchanged state (StageCommit derives a
 * missing or stale snapshot with it), instead of search reading the slower tables until some
 * input changes. True when it did.
 */
async function rederiveGraphSnapshot(root: string, state: BuildState): Promise<boolean> {
  if (state.current_state !== 'FINISHED') return false;
  const recorded = await readChecksums(root);
  const sources: Record<string, string> = {};
  for (const f of GRAPH_SNAPSHOT_SOURCES) {
    const sum = recorded.get(f);
    if (!sum) return false; // an index of an older version: its next commit writes it
    sources[f] = sum.sha256;
  }
  const path = resolveInProject(root, CACHE_FILES.searchGraph);
  if (await graphSnapshotCurrent(path, sources)) return false;
  const commit = await StageCommit.begin(root);
  await commit.put(INFO_FILES.state, serializeState(state));
  await commit.commit();
  // (Tables the snapshot cannot represent get none: search reads them, and this says nothing.)
  return graphSnapshotCurrent(path, sources);
}

/**
 * The report with only what left the index. A cycle records what its Document stage pruned,
 * and a later stage of the same cycle can extract the same ids again (an edited file's other
 * units, entities and relationships): those are still there and are no removals.
 */
async function netRemovals(root: string, dim: number, report: BuildReport): Promise<BuildReport> {
  const { removedChunks, removedUnits, removedEntities, removedRelationships } = report;
  if (removedChunks.length + removedUnits.length + removedEntities.length + removedRelationships.length === 0)
    return report;
  const index = new IndexData(root, dim);
  const [texts, units, entities, relationships] = await Promise.all([
    index.texts(),
    index.units(),
    index.entities(),
    index.relationships(),
  ]);
  const gone = (ids: string[], present: ReadonlyMap<string, unknown>) => [
    ...new Set(ids.filter((id) => !present.has(id))),
  ];
  return {
    ...report,
    removedChunks: gone(removedChunks, texts),
    removedUnits: gone(removedUnits, units),
    removedEntities: gone(removedEntities, entities),
    removedRelationships: gone(removedRelationships, relationships),
  };
}

/**
 * Removes the kept finished generation of a cycle that has finished. Not a reason to fail the
 * build whose index is complete (a file a reader still holds open on some systems): the
 * next build removes it.
 */
async function dropFinishedGeneration(root: string, log: BuildLog): Promise<void> {
  try {
    await discardFinishedGeneration(root);
  } catch (e) {
    log.warn(
      `could not remove cache/finished/ (the previous generation kept for search): ${errorMessage(e)}`,
    );
  }
}

/** One-line message of an error for the terminal and info.log. */
function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

const probe: FileProbe = async (absPath, relative) => {
  if (relative.endsWith('.parquet')) return parquetFooterOk(absPath);
  return probeIndexFile(absPath, relative);
};

/** Runs `build` end to end and returns the exit code (docs/method.md §4.6). */
export async function runBuild(options: BuildOptions): Promise<number> {
  // A library caller's mistake, said as such (the CLI always passes a folder).
  if (typeof options?.folder !== 'string' || options.folder.trim() === '') {
    throw new InvalidArgumentError(
      'invalid_argument',
      `runBuild(options): options.folder must be the path of a project folder (a non-empty string), got ${options === null || typeof options !== 'object' ? String(options) : (JSON.stringify(options.folder) ?? 'undefined')}`,
    );
  }
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const stdin = options.stdin ?? process.stdin;
  const say = (s: string) => stdout.write(`${s}\n`);
  const complain = (s: string) => stderr.write(`${s}\n`);

  // Step 1: configuration (first run writes the template) and the lock.
  const notProject = firstRunProblem(options.folder);
  if (notProject) {
    complain(notProject);
    return BUILD_EXIT.USAGE;
  }
  const ensured = ensureConfig(options.folder);
  if (ensured.created) {
    say(ensured.message);
    return BUILD_EXIT.CONFIG_CREATED;
  }
  let config: NodeConfigType;
  try {
    config = NodeConfig.fromMainFolder(options.folder);
  } catch (error) {
    if (error instanceof ConfigError) {
      complain(error.message);
      return BUILD_EXIT.USAGE;
    }
    throw error;
  }
  const root = config.mainFolder;
  const log = new BuildLog(resolveInProject(root, INFO_FILES.log), {
    redact: secretRedactor(config.secrets()),
  });
  for (const w of config.warnings) {
    log.warn(w);
    complain(`warning: ${w}`);
  }

  let lock: BuildLock;
  try {
    lock = options.lock ?? (await acquireBuildLock(root));
  } catch (error) {
    if (error instanceof BuildLockedError) {
      complain(error.message);
      return BUILD_EXIT.USAGE;
    }
    // The lock is the first file a build writes: a read-only project or a full disk shows here.
    const hint = systemErrorHint(error);
    if (hint) {
      complain(
        `error: taking the build lock (${INFO_FILES.lock}) failed: ${(error as Error).message}. ${hint}`,
      );
      return BUILD_EXIT.STAGE_FAILED;
    }
    throw error;
  }

  let providers: ModelProviders | undefined;
  let asideForRebuild = false;
  /** Whether the stages were started (past the confirmation). */
  let started = false;
  // A closed terminal sends SIGHUP, whose default action ends the process at once: with the
  // lock held and, for a --rebuild, the index moved aside. Its end of input can come first and
  // end the question (which listens for the signal only while it waits), so the hang-up lands
  // in the cleanup. Held off for the whole command: before the stages it cancels the build,
  // during them BuildRun stops at the next safe point, as for SIGINT.
  let hungUp = false;
  const onHangUp = () => {
    if (!hungUp) log.warn('SIGHUP received (terminal closed)');
    hungUp = true;
  };
  if (options.handleSignals === true) process.on('SIGHUP', onHangUp);
  try {
    // Step 2: a rebuild and staging left by a crash.
    const undone = await recoverRebuild(root);
    if (undone !== 'none') log.info(`unfinished rebuild from scratch: previous index ${undone}`);
    if (undone === 'restored') {
      complain('An unfinished rebuild (build --rebuild) was undone: the previous index is back in place.');
    }
    // A rebuild moves cache/.staging aside with the rest of the index: a commit that cannot
    // be completed (its COMMIT.json damaged) is no reason to refuse the rebuild that replaces it.
    const recovery = await recoverStaging(root).catch((e: unknown) => {
      if (!(e instanceof IndexFileError)) throw e;
      return e;
    });
    if (recovery instanceof IndexFileError) {
      if (options.rebuild) log.info(`rebuild from scratch over an unfinished commit: ${recovery.message}`);
      else {
        log.error(recovery.message);
        complain(`error: ${recovery.message}`);
        return BUILD_EXIT.STAGE_FAILED;
      }
    } else if (recovery.outcome === 'rolled-forward') {
      log.info(`completed an interrupted commit (${recovery.files.join(', ')})`);
    } else if (recovery.outcome === 'rolled-back') {
      log.info(`discarded ${recovery.files.length} staged file(s) of an unfinished commit`);
    }

    if (options.rebuild) {
      asideForRebuild = await moveIndexAside(root);
      if (asideForRebuild) log.info(`rebuild from scratch: previous index moved to ${PREVIOUS_INDEX_DIR}`);
    }

    // Step 3: INIT.
    const docuType = config.config.docu_type as DocuType;
    let init: Awaited<ReturnType<typeof runInit>>;
    try {
      init = await runInit(root, { docuType, probe, followSymlinks: config.config.follow_symlinks });
    } catch (error) {
      if (error instanceof NoDocumentsError || error instanceof NodeRagError) {
        log.error(error.message);
        complain(`error: ${error.message}`);
        // No input/ is the project's layout, a usage error like a mistyped -f.
        return error.code === 'no_input_folder' ? BUILD_EXIT.USAGE : BUILD_EXIT.STAGE_FAILED;
      }
      throw error;
    }
    const state = init.state;
    // The previous generation kept for search while a cycle runs: not needed once it finished
    // (a build killed between its last commit and the removal left it). Nor once INIT
    // repaired damage: the set links the damaged files (a kill between keeping the set and
    // starting the cycle leaves one of the finished generation itself).
    if (!isCycleUnfinished(state) || init.repaired.length > 0) await dropFinishedGeneration(root, log);
    if (init.stateChanged) {
      await writeState(root, state);
      const files = init.repaired.map((r) => `${r.file} is ${r.reason}`).join('; ');
      const message = `vector index files unusable${files ? ` (${files})` : ''}: rebuilding them from the stored vectors`;
      log.warn(`${message} (state ${state.current_state})`);
      complain(`warning: ${message}`);
    }

    const wanted = configuredEmbedding(config);
    if (state.embedding && !sameEmbedding(state.embedding, wanted)) {
      const e = state.embedding;
      const message = `embeddings were made with ${describeEmbedding(e)}, the config asks for ${embeddingChange(e, wanted)}; changing the embedding model needs a ${rebuildHint(root).replace('rebuild from scratch with', 'rebuild from scratch:')}, or set embedding_config back`;
      log.error(message);
      complain(`error: ${message}`);
      return BUILD_EXIT.USAGE;
    }

    // A failing provider is retried for a while: say so on the terminal too (info.log has
    // every attempt), at most once every few seconds, above the running stage's progress line.
    const retryNotes = new RetryNotes((line) => complain(`warning: ${line}`));
    providers = createProviders(config, {
      mode: 'build',
      tokenCounter: o200kTokenCounter,
      retry: options.hooks?.retry,
      onRetry: (e) => {
        const message = `${e.section}: attempt ${e.attempt} failed (${e.error.message}); retrying in ${formatSeconds(e.delayMs)}`;
        log.warn(message);
        retryNotes.show(message);
      },
    });
    const cache = providers.cache
      ? { replies: providers.cache.replyCount, embeddings: providers.cache.embeddingCount }
      : null;
    const damage = providers.cache ? responseCacheDamage(providers.cache.loadReport) : null;
    if (damage) {
      log.warn(damage);
      complain(`warning: ${damage}`);
    }

    // Step 4: the state tree and the confirmation.
    stdout.write(renderStateTree({ root, state, plan: init.plan, cache }));
    if (asideForRebuild) {
      say(
        `Rebuild from scratch: the previous index waits in ${PREVIOUS_INDEX_DIR} until this build finishes (it comes back if the build fails or stops); cache/response_cache/ is kept.`,
      );
    }
    // Settings a sync applies only to what it indexes: said before the question.
    const settingsChange = asideForRebuild
      ? null
      : buildSettingsChange(await readBuildSettings(root), buildSettings(config, providers.chat.identity));
    if (settingsChange) {
      const message = `${settingsChange} since the indexed documents were indexed: ${
        init.outlook.hasWork
          ? 'this build applies it to the documents it indexes, the others keep theirs'
          : 'it applies to documents indexed from now on'
      }; \`noderag build -f ${shellArg(root)} --rebuild\` applies it to every document (cached model replies are reused)`;
      log.warn(message);
      complain(`warning: ${message}`);
    }
    const note = changedDeletedNote(init.plan.changed.length, init.plan.deleted.length);
    for (const u of init.plan.unreadable) log.warn(`skipped ${u.path}: ${u.reason}`);
    for (const e of init.plan.skipped) if (e.kind === 'outside') log.warn(`skipped ${e.path}: ${e.reason}`);
    const decision = await confirmBuild({
      hasWork: init.outlook.hasWork,
      yes: options.yes === true,
      input: stdin,
      output: stdout,
    });
    if (!decision.proceed) {
      if (decision.exitCode === BUILD_EXIT.OK) {
        say(upToDateMessage());
        if (await rederiveGraphSnapshot(root, state)) {
          log.info(`${CACHE_FILES.searchGraph} was missing or stale: derived again from the graph tables`);
        }
        const changed = await vectorIndexParamsChange(root, indexParams(config));
        if (changed) {
          const message = `config.space, m or ef differ from the vector index's (${changed}): they apply when the vector index is next built, at the next build that adds, changes or deletes a document, or now with \`noderag build -f ${shellArg(root)} --rebuild\` (cached model replies are reused)`;
          log.warn(message);
          complain(`warning: ${message}`);
        }
      } else {
        complain(decision.message);
        // INIT has already moved damaged vector-index files aside: not "nothing changed".
        if (init.repaired.length > 0) {
          complain(
            `(${init.repaired.map((r) => r.file).join(', ')} ${init.repaired.length === 1 ? 'was' : 'were'} found damaged and moved aside as *.damaged: the next build rebuilds ${init.repaired.length === 1 ? 'it' : 'them'} from the stored vectors.)`,
          );
        }
        // A declined build changed nothing: info.log says so, not what the sync would have done.
        log.info(`build not started (exit ${decision.exitCode}): ${decision.message.trim()}`);
      }
      return decision.exitCode;
    }
    if (hungUp) {
      log.info('build not started: the terminal was closed');
      return BUILD_EXIT.INTERRUPTED;
    }
    if (note) log.info(`sync: ${note}`);
    started = true;

    const run = new BuildRun({
      root,
      config,
      log,
      providers,
      stdout,
      stderr,
      allowFailures: options.allowFailures === true,
      stages: { ...STAGE_RUNNERS, ...options.stages },
      hooks: options.hooks ?? {},
      onReport: options.onReport,
      retryNotes,
      signal: options.signal,
    });
    return await run.execute(
      state,
      init.plan,
      init.hashes,
      init.outlook.startsCycle,
      options.handleSignals === true,
    );
  } finally {
    providers?.close();
    // The previous index is dropped if the new one is searchable, put back otherwise.
    if (asideForRebuild && (await recoverRebuild(root)) === 'restored') {
      if (started) {
        complain(
          'The previous index is back in place (the rebuild did not finish). Model replies received meanwhile are kept in cache/response_cache/: running `build --rebuild` again does not pay for them twice.',
        );
      } else {
        // Declined or interrupted at the question: nothing was rebuilt, nothing to explain.
        log.info('rebuild from scratch not started: the previous index is back in place');
      }
    }
    await lock.release();
    process.off('SIGHUP', onHangUp);
  }
}

interface BuildRunOptions {
  root: string;
  config: NodeConfigType;
  log: BuildLog;
  providers: ModelProviders;
  stdout: NodeJS.WritableStream & ProgressOutput;
  stderr: NodeJS.WritableStream;
  allowFailures: boolean;
  stages: StageTable;
  hooks: BuildHooks;
  onReport?: (report: BuildReport) => void;
  /** Where provider retries are shown while a stage runs. */
  retryNotes?: RetryNotes;
  signal?: AbortSignal;
}

/**
 * Provider retries as terminal lines: the first of a burst, then at most one every
 * `intervalMs` (a refused endpoint fails every request of a stage). While a stage runs they
 * go through its progress (which clears its live line first).
 */
export class RetryNotes {
  #last = Number.NEGATIVE_INFINITY;
  #sink: (line: string) => void;
  readonly #fallback: (line: string) => void;

  constructor(
    sink: (line: string) => void,
    private readonly intervalMs = 5000,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.#sink = sink;
    this.#fallback = sink;
  }

  /** Routes the notes to `sink` until `restore()`. */
  route(sink: (line: string) => void): void {
    this.#sink = sink;
  }

  restore(): void {
    this.#sink = this.#fallback;
  }

  show(line: string): void {
    const t = this.now();
    if (t - this.#last < this.intervalMs) return;
    this.#last = t;
    this.#sink(line);
  }
}

/** Steps 5–7 for one confirmed run. */
class BuildRun {
  readonly #o: BuildRunOptions;
  readonly #stop = new StopSignal();
  readonly #progress: Progress;
  readonly #index: IndexData;
  #state!: BuildState;
  #signals = 0;

  constructor(options: BuildRunOptions) {
    this.#o = options;
    const c = options.config.config;
    this.#progress = new Progress(
      options.stdout,
      progressStyle(options.stdout, { useRich: c.use_rich, useTqdm: c.use_tqdm }),
    );
    this.#index = new IndexData(options.root, c.dim);
  }

  #say(s: string): void {
    this.#o.stdout.write(`${s}\n`);
  }

  #complain(s: string): void {
    this.#o.stderr.write(`${s}\n`);
  }

  /** SIGINT/SIGTERM/SIGHUP: first stops new work; the second writes INTERRUPTED and exits at once. */
  #onSignal = (signal: NodeJS.Signals): void => {
    this.#signals++;
    if (this.#signals === 1) {
      this.#o.log.warn(`${signal} received: stopping (up to 10 s for requests in flight)`);
      this.#complain(
        `\n${signal}: stopping after the requests in flight (up to 10 s); press Ctrl-C again to quit at once.`,
      );
      this.#stop.stop(`interrupted by ${signal}`);
      return;
    }
    this.#o.log.warn(`${signal} received again: exiting at once`);
    try {
      // Synchronous, atomic: the process ends right after.
      const path = resolveInProject(this.#o.root, INFO_FILES.state);
      const tmp = `${path}.${process.pid}.tmp`;
      writeFileSync(tmp, serializeState(failState(this.#state, 'INTERRUPTED', `interrupted by ${signal}`)));
      renameSync(tmp, path);
    } catch {
      // Nothing more to do: the next run resumes from the last committed state anyway.
    }
    process.exit(BUILD_EXIT.INTERRUPTED);
  };

  async execute(
    initial: BuildState,
    initialPlan: DiscoveryPlan,
    initialHashes: DocumentHashes,
    startsCycle: boolean,
    handleSignals: boolean,
  ): Promise<number> {
    const { root, log } = this.#o;
    this.#state = initial;
    if (handleSignals) {
      process.on('SIGINT', this.#onSignal);
      process.on('SIGTERM', this.#onSignal);
      process.on('SIGHUP', this.#onSignal);
    }
    const { signal } = this.#o;
    const onAbort = () => {
      this.#o.log.warn('stop requested by the application: stopping (up to 10 s for requests in flight)');
      this.#stop.stop('stopped by the application');
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    const started = performance.now();
    const attempted = new Set<string>();
    const report = emptyReport();
    let plan = initialPlan;
    let hashes = initialHashes;
    try {
      if (startsCycle) await this.#startCycle();
      for (;;) {
        while (this.#state.current_state !== 'FINISHED') {
          const result = await this.#runStage(plan, hashes);
          for (const p of result.attempted) attempted.add(p);
        }
        await dropFinishedGeneration(this.#o.root, this.#o.log);
        // The cycle's changes, as its Document stage committed them (in this run or in the
        // interrupted one this run resumed).
        const sync = await readCycleSync(root, this.#state.generation);
        if (sync) addToReport(report, sync);
        // Documents that appeared while the cycle's set was fixed: a follow-up cycle.
        hashes = await readDocumentHashes(root);
        plan = await discoverDocuments(
          resolveInProject(root, INPUT_DIR),
          this.#o.config.config.docu_type as DocuType,
          hashes,
          { followSymlinks: this.#o.config.config.follow_symlinks, unindexable: await readUnindexable(root) },
        );
        const fresh = plan.cycle.filter((p) => !attempted.has(p));
        // Files deleted meanwhile are removed by the follow-up cycle too.
        if ((fresh.length === 0 && plan.deleted.length === 0) || this.#stop.stopping) break;
        this.#say(
          `Follow-up cycle: ${count(fresh.length, 'queued document')}${plan.deleted.length > 0 ? ` and ${count(plan.deleted.length, 'deleted document')}` : ''} found since generation ${this.#state.generation} started; syncing them in generation ${this.#state.generation + 1}.`,
        );
        log.info(
          `follow-up cycle for queued documents: ${[...fresh, ...plan.deleted.map((p) => `${p} (deleted)`)].join(', ')}`,
        );
        await this.#startCycle();
      }
      const seconds = formatSeconds(performance.now() - started);
      log.info(`Build finished in ${seconds} (generation ${this.#state.generation})`);
      this.#say(`Build finished in ${seconds} (generation ${this.#state.generation}).`);
      if (this.#o.onReport) this.#o.onReport(await netRemovals(root, this.#o.config.config.dim, report));
      return BUILD_EXIT.OK;
    } catch (error) {
      const interrupted = error instanceof InterruptedError || this.#stop.stopping;
      const stage = this.#state.current_state;
      // Saving the failure may fail for the same reason as the stage (a full disk): the
      // first error is printed before anything else is written, and every write after it
      // is guarded, so the user always learns what went wrong.
      if (interrupted) {
        const reason = this.#stop.stopping ? this.#stop.reason : errorMessage(error);
        this.#state = failState(this.#state, 'INTERRUPTED', reason);
        const notSaved = await this.#saveFailureState();
        this.#tryLog(() =>
          log.warn(`${stage} interrupted; ${notSaved ? `state not saved: ${notSaved}` : 'state saved'}`),
        );
        this.#complain(
          notSaved
            ? `${stage} interrupted; the state could not be saved (${notSaved}). Run the build again: it resumes from the last committed stage.`
            : `${stage} interrupted; state saved. Run the build again to resume.`,
        );
        return BUILD_EXIT.INTERRUPTED;
      }
      const message = errorMessage(error);
      this.#complain(`error: ${stage} failed: ${message}`);
      const hint = systemErrorHint(error);
      if (hint) this.#complain(hint);
      else if (!(error instanceof NodeRagError) && error instanceof Error && error.stack)
        this.#complain(error.stack);
      this.#state = failState(this.#state, 'ERROR', message);
      const notSaved = await this.#saveFailureState();
      this.#tryLog(() => log.error(`${stage} failed: ${message}`));
      this.#complain(
        notSaved
          ? `The failure could not be recorded in info/state.json either (${notSaved}). Nothing committed is lost: once that is fixed, run the build again; it resumes from the last committed stage.`
          : 'State saved; run the build again to resume.',
      );
      return BUILD_EXIT.STAGE_FAILED;
    } finally {
      await dropHnswPrebuild(this.#o.root);
      this.#stop.dispose();
      signal?.removeEventListener('abort', onAbort);
      if (handleSignals) {
        process.off('SIGINT', this.#onSignal);
        process.off('SIGTERM', this.#onSignal);
        process.off('SIGHUP', this.#onSignal);
      }
    }
  }

  /** Writes the failed state; returns null, or why it could not be written. */
  async #saveFailureState(): Promise<string | null> {
    try {
      await writeState(this.#o.root, this.#state);
      return null;
    } catch (error) {
      return errorMessage(error);
    }
  }

  /** info.log sits on the same disk: a failure path must not die on its own log line. */
  #tryLog(write: () => void): void {
    try {
      write();
    } catch {
      // Already reported on the terminal.
    }
  }

  async #startCycle(): Promise<void> {
    // Search keeps serving this generation whole until the cycle finishes.
    const finished = this.#state.last_finished_generation;
    const notKept = finished >= 1 ? await keepFinishedGeneration(this.#o.root, finished) : null;
    if (notKept !== null) {
      this.#o.log.warn(
        `could not keep generation ${finished} in cache/finished/ for search (${notKept}): a search started before this cycle finishes reads its stages' commits as they land`,
      );
    }
    this.#state = startCycle(this.#state);
    await writeState(this.#o.root, this.#state);
    this.#o.log.info(
      `generation ${this.#state.generation} started${this.#state.is_incremental ? ' (incremental)' : ''}`,
    );
  }

  /** Runs `current_state` and commits it; returns the paths the Document pipeline attempted. */
  async #runStage(plan: DiscoveryPlan, hashes: DocumentHashes): Promise<{ attempted: string[] }> {
    const { root, log, config } = this.#o;
    this.#stop.check();
    const name = this.#state.current_state as StageName;
    const { hooks } = this.#o;
    const commit = await StageCommit.begin(root, {
      afterStep: (step, detail) => hooks.afterCommitStep?.(name, step, detail),
    });
    const progress = this.#progress.stage(name, STAGES.indexOf(name) + 1, STAGES.length);
    this.#o.retryNotes?.route((line) => progress.note(`warning: ${line}`));
    const endLog = log.stage(`${name} (generation ${this.#state.generation})`);
    const ctx: StageContext = {
      root,
      config,
      state: this.#state,
      g: this.#state.generation,
      counters: await readIndices(root),
      index: this.#index,
      providers: this.#o.providers,
      log,
      progress,
      stop: this.#stop,
      out: new StageOutputs(commit),
      plan,
      hashes,
      allowFailures: this.#o.allowFailures,
    };
    let result: StageResult;
    let next: BuildState;
    try {
      result = await this.#o.stages[name](ctx);
      // A stop requested during the stage: nothing is committed, the stage re-runs later.
      this.#stop.check();
      next = advanceState(this.#state);
      if (result.embedding) next = { ...next, embedding: result.embedding };
      await ctx.out.file(INFO_FILES.indices, serializeIndices(ctx.counters));
      await ctx.out.file(INFO_FILES.state, serializeState(next));
      // The search-graph snapshot is derived once per cycle, by its last commit (a sync
      // would otherwise derive it from the whole graph at each of its eight commits).
      await commit.commit({ deferGraphSnapshot: next.current_state !== 'FINISHED' });
    } catch (error) {
      progress.abandon();
      this.#o.retryNotes?.restore();
      await commit.discard().catch(() => undefined);
      throw error;
    }
    this.#o.retryNotes?.restore();
    this.#state = next;
    const ms = endLog(result.counts);
    progress.finish(formatSeconds(ms), result.summary);
    for (const s of result.skipped ?? []) log.warn(`skipped ${s.path}: ${s.reason}`);
    hooks.afterStage?.(name);
    // A first build's vector index starts now, while the Summary stage waits for the model
    // (ts/indexing/stages/hnsw-prebuild.ts); the HNSW stage takes it over.
    if (name === 'Embedding pipeline') startHnswPrebuild(root, config, this.#index);
    return { attempted: result.attempted ?? [] };
  }
}
