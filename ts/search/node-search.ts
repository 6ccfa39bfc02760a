/**
 * NodeSearch, the in-process search engine (docs/method.md §6, §7.4).
 *
 *   const search = new NodeSearch(NodeConfig.fromMainFolder('./proj'));
 *   const { response, retrievalInfo } = await search.answer('Who founded the observatory?');
 *   search.close();
 *
 * The index is loaded once, in the background from the constructor on (`ready()` waits for
 * it). While no build has finished (or the index is damaged), every call re-reads
 * info/state.json and looks at the index files, and loads the index as soon as they
 * changed, so a server started before the first build needs no restart. A loaded engine
 * keeps its snapshot, unless made with `watch: true`: it then loads each new generation a
 * build commits and swaps it in (questions in flight finish on the old one), checked by a
 * timer as well as by the calls, so an idle server is current when the next question comes.
 *
 * Per question, the embedding and the decomposition run concurrently; the rest is a
 * synchronous retrieval on the immutable loaded index, taken in turns (one per turn of the
 * event loop, in the order the questions got there: turn-queue.ts). The engine holds no
 * per-question state, so any number of questions can be in flight at once. Provider calls
 * of all questions share the config's rate limiters.
 */
import type { NodeConfig } from '../config/node-config.js';
import { ClosedError, IndexNotBuiltError, InvalidArgumentError } from '../errors.js';
import { finishedGenerationFiles } from '../index-io/finished-generation.js';
import { createProviders, type ModelProviders, o200kSearchTokenCounter } from '../llm/create-providers.js';
import type { TokenCounter } from '../llm/token-cap.js';
import type { CallOptions } from '../llm/types.js';
import { isCycleUnfinished } from '../project/state.js';
import { type AnswerEvent, type AnswerOptions, type EngineStatus, RESULT_JSON } from './engine-types.js';
import { indexFingerprint, parseStateText, readStateText } from './index-files.js';
import { LoadedIndex } from './loaded-index.js';
import { validateHistory, validateQuestion } from './question.js';
import { answerResult, retrievalResult, type SearchAnswer, type SearchRetrieval } from './results.js';
import { RetrievalCache } from './retrieval-cache.js';
import {
  type Retrieval,
  type RetrievedItem,
  retrieve,
  type SearchParams,
  searchParamsFrom,
  vectorK,
} from './retrieve.js';
import {
  buildCitations,
  buildSources,
  type ChunkOf,
  citedContext,
  citedNumbers,
  type Source,
  sourcesJson,
} from './sources.js';
import { TurnQueue } from './turn-queue.js';

/**
 * The provider calls search makes (ModelProviders has them; tests may pass a stand-in, whose
 * `stream` is optional: without it a streamed answer comes in one piece).
 */
export type SearchProviders = Pick<ModelProviders, 'run' | 'embedQuery'> &
  Partial<Pick<ModelProviders, 'stream'>>;

export interface NodeSearchOptions {
  /** Providers to use instead of building them from the config. */
  providers?: SearchProviders;
  /** Token counter for the reported counts (default: the o200k_base counter of the Rust core). */
  tokenCounter?: TokenCounter;
  /**
   * How many recent questions' retrievals to keep (default 1000; 0 disables). A repeated
   * question is then answered without provider calls; `answer` still makes its chat call.
   */
  retrievalCacheSize?: number;
  /**
   * Follow new generations: when a build has finished a cycle since the index was loaded
   * (checked every `watchIntervalMs` in the background, and at most as often when a question
   * or `status()` comes in), the new index is loaded in the background and swapped in;
   * questions in flight finish on the old one, and the retrieval cache of the old one is
   * dropped. Default false.
   */
  watch?: boolean;
  /**
   * Milliseconds between two checks of state.json with `watch` (default 1000). 0: a check at
   * every question and `status()`, none in the background.
   */
  watchIntervalMs?: number;
  /**
   * Called after each swap with `watch` (the server logs one line), and when an engine that
   * waited for a build (none finished, or damaged files) loads one: `previous` is then 0.
   */
  onReload?: (info: { generation: number; previous: number; nodes: number; vectors: number }) => void;
  /**
   * Called when a finished build's index cannot be loaded with `watch` (damaged files): the
   * loaded generation keeps serving, and the same files are not tried again until they change.
   */
  onReloadError?: (error: unknown) => void;
}

export interface QuestionOptions {
  /** Aborts the question's provider calls (the server passes client disconnects here). */
  signal?: AbortSignal;
}

/** Options of `answer`: those of any question, and earlier turns of a conversation. */
export interface AnswerQuestionOptions extends QuestionOptions, AnswerOptions {}

interface LoadFailure {
  /** state.json and the index files as they were when the load was attempted. */
  fingerprint: string;
  error: unknown;
}

/**
 * The fingerprint of the files of finished generation `generation`, or null when state.json
 * does not say that generation is finished (or the files moved while they were read). A
 * fingerprint read before a load may have caught the build that made the index still renaming
 * its files into place: recorded, it would make the next check load the same generation again
 * (seen under load: a watcher reporting generation 1 → 1). Once state.json says a generation
 * finished, its files stay as they are until a later build changes state.json first.
 */
async function settledFingerprint(root: string, generation: number): Promise<string | null> {
  const fingerprint = await indexFingerprint(root);
  const text = await readStateText(root).catch(() => null);
  if (text === null) return null;
  let finished: boolean;
  try {
    const state = parseStateText(text, root);
    finished = state.current_state === 'FINISHED' && state.generation === generation;
  } catch {
    return null;
  }
  return finished && (await indexFingerprint(root)) === fingerprint ? fingerprint : null;
}

export class NodeSearch {
  readonly config: NodeConfig;
  readonly #params: SearchParams;
  readonly #providers: SearchProviders;
  readonly #ownProviders: ModelProviders | undefined;
  readonly #tokens: TokenCounter;
  readonly #cache: RetrievalCache;
  #index: LoadedIndex | null = null;
  #loading: Promise<LoadedIndex> | null = null;
  #failure: LoadFailure | null = null;
  #closed = false;
  readonly #watch: {
    intervalMs: number;
    onReload?: NodeSearchOptions['onReload'];
    onReloadError?: NodeSearchOptions['onReloadError'];
  } | null;
  /** The index files a reload failed on (not tried again while they stay as they are). */
  #reloadFailedOn: string | null = null;
  /** state.json and the index files when the current index was loaded (`watch`). */
  #loadedFingerprint: string | null = null;
  #lastCheck = 0;
  #reloading: Promise<void> | null = null;
  /** With `watch`: the check that runs between questions too (unref'd; cleared by close). */
  #watchTimer: ReturnType<typeof setInterval> | null = null;
  /** Questions using each index; a swapped-out index is closed when its count drops to 0. */
  readonly #users = new Map<LoadedIndex, number>();
  readonly #retired = new Set<LoadedIndex>();

  constructor(config: NodeConfig, options: NodeSearchOptions = {}) {
    // A library caller's mistake said as such, not as a TypeError from deep inside.
    if (typeof config?.config !== 'object' || typeof config?.mainFolder !== 'string') {
      throw new InvalidArgumentError(
        'invalid_argument',
        `new NodeSearch(config): config must be a NodeConfig (NodeConfig.fromMainFolder(dir)), got ${config === null ? 'null' : typeof config}`,
      );
    }
    const interval = options.watchIntervalMs;
    if (
      interval !== undefined &&
      !(typeof interval === 'number' && interval >= 0 && Number.isFinite(interval))
    ) {
      throw new InvalidArgumentError(
        'invalid_argument',
        `watchIntervalMs must be a non-negative number of milliseconds, got ${String(interval)}`,
      );
    }
    this.config = config;
    this.#params = searchParamsFrom(config.config);
    this.#tokens = options.tokenCounter ?? o200kSearchTokenCounter;
    this.#cache = new RetrievalCache(options.retrievalCacheSize);
    this.#watch = options.watch
      ? {
          intervalMs: options.watchIntervalMs ?? 1000,
          onReload: options.onReload,
          onReloadError: options.onReloadError,
        }
      : null;
    if (options.providers) {
      this.#providers = options.providers;
    } else {
      this.#ownProviders = createProviders(config, { mode: 'search', tokenCounter: this.#tokens });
      this.#providers = this.#ownProviders;
    }
    this.#startLoad();
    // Between questions too: a build's new generation is loaded before the next question
    // comes (a check is a few stat calls). A timer never keeps the process alive.
    if (this.#watch && this.#watch.intervalMs > 0) {
      // The check a question makes: a reload, or the first load once a build has finished.
      this.#watchTimer = setInterval(() => this.#current().catch(() => undefined), this.#watch.intervalMs);
      this.#watchTimer.unref();
    }
  }

  /** With `watch`: `onReload` for an index now serving, after generation `previous` (0: none). */
  #reportLoad(index: LoadedIndex, previous: number): void {
    if (!this.#watch) return;
    const info = {
      generation: index.generation,
      previous,
      nodes: index.nodeCount,
      vectors: index.activeVectors,
    };
    callBack('onReload', () => this.#watch!.onReload?.(info));
  }

  /** Alias of the constructor, for symmetry with `NodeConfig.fromMainFolder`. */
  static create(config: NodeConfig, options: NodeSearchOptions = {}): NodeSearch {
    return new NodeSearch(config, options);
  }

  /** Resolves once the index is loaded; rejects with IndexNotBuiltError while it is not built. */
  async ready(): Promise<void> {
    await this.#current();
  }

  /** Whether the index is loaded, and its size. Never throws for a missing index. */
  async status(): Promise<EngineStatus> {
    try {
      const index = await this.#current();
      return {
        ready: true,
        generation: index.generation,
        nodes: index.nodeCount,
        vectors: index.activeVectors,
      };
    } catch (e) {
      if (e instanceof IndexNotBuiltError) return { ready: false, generation: 0, nodes: 0, vectors: 0 };
      throw e;
    }
  }

  /** The retrieval alone: the context string, its token count and its items. */
  async search(question: string, options: QuestionOptions = {}): Promise<SearchRetrieval> {
    const { retrieval: r, chunkOf, index } = await this.#retrieve(question, options);
    const { sources, sourcesJson: json } = this.#sourcesOf(r, chunkOf, index);
    // The context string is made only if read (the server replies with its bytes).
    const result = retrievalResult(() => r.context, r.items, this.#count, sources, this.#contextTokens(r));
    // The server's reply, serialised from pieces kept per node (engine-types.ts RESULT_JSON).
    result[RESULT_JSON] = { retrievalInfo: r.contextJson, sources: json };
    return result;
  }

  /**
   * The sources of a retrieval and their JSON. Kept with a cached retrieval (frozen, like it)
   * while the cache holds it: a repeated question then costs no sources to rebuild and
   * serialise, which was a sixth of a cached request.
   */
  #sourcesOf(r: Retrieval, chunkOf: ChunkOf, index: LoadedIndex): KeptSources {
    const kept = this.#keptSources.get(r);
    if (kept) return kept;
    const sources = buildSources(r.items, [], chunkOf);
    const made = { sources, sourcesJson: Buffer.from(sourcesJson(sources, index.quoted), 'utf8') };
    // With the cache on, every retrieval is the cache's (frozen) entry and may come again.
    if (this.#cache.capacity > 0) {
      for (const source of sources) {
        Object.freeze(source.chunks);
        Object.freeze(source.items);
        Object.freeze(source.cited);
        Object.freeze(source);
      }
      Object.freeze(sources);
      this.#keptSources.set(r, made);
    }
    return made;
  }

  /**
   * Retrieval, then the answer (prompt ANS: the context with its items numbered `[n]`, then
   * the question; `history` turns go before it). The result also holds the context's `items`
   * (as `search` gives them), the structured form of `retrievalInfo`, their `sources` (input
   * files) and the `citations` the answer makes.
   */
  async answer(question: string, options: AnswerQuestionOptions = {}): Promise<SearchAnswer> {
    validateHistory(options.history);
    const { retrieval: r, chunkOf } = await this.#retrieve(question, options);
    const response = await this.#whileOpen(
      this.#providers.run('answer', answerInput(r, question, options), this.#callOf(options)),
    );
    return this.#answerResult(response, r, chunkOf);
  }

  /**
   * `answer` as it is written: the answer's text deltas as the model streams them (OpenAI,
   * Gemini; `local` in word pieces), then one `done` event with the same result `answer`
   * gives. Errors of the retrieval and of the model before its first delta are thrown by the
   * first step of the loop; leaving the loop early (or aborting `signal`) cancels the model's
   * request.
   *
   *   for await (const e of search.answerStream('Who founded the observatory?')) {
   *     if (e.type === 'delta') process.stdout.write(e.text);
   *     else console.log(e.result.sources);
   *   }
   */
  async *answerStream(
    question: string,
    options: AnswerQuestionOptions = {},
  ): AsyncGenerator<AnswerEvent<SearchAnswer>, void, undefined> {
    validateHistory(options.history);
    const { retrieval: r, chunkOf } = await this.#retrieve(question, options);
    const input = answerInput(r, question, options);
    const call = this.#callOf(options);
    // Stand-in providers without streaming answer in one piece.
    const deltas = this.#providers.stream
      ? this.#providers.stream('answer', input, call)
      : [await this.#whileOpen(this.#providers.run('answer', input, call))];
    let text = '';
    try {
      for await (const delta of deltas) {
        if (this.#closed) throw closedError();
        text += delta;
        yield { type: 'delta', text: delta };
      }
    } catch (e) {
      throw this.#closed ? closedError() : e;
    }
    if (this.#closed) throw closedError();
    yield { type: 'done', result: this.#answerResult(text.trim(), r, chunkOf) };
  }

  #answerResult(response: string, r: Retrieval, chunkOf: ChunkOf): SearchAnswer {
    const cited = citedNumbers(response, r.items.length);
    return answerResult(
      response,
      r.context,
      r.items,
      this.#count,
      {
        sources: buildSources(r.items, cited, chunkOf),
        citations: buildCitations(r.items, cited, chunkOf),
      },
      this.#contextTokens(r),
    );
  }

  /**
   * The context's token count without counting its string: with the built-in counter, the sum
   * of the index's per-node counts (context.ts contextTokens); another counter counts the string.
   */
  #contextTokens(r: Retrieval): (() => number) | undefined {
    return this.#tokens === o200kSearchTokenCounter ? () => r.tokens : undefined;
  }

  /**
   * Frees the native memory. Later calls throw ClosedError, and so do the calls in flight:
   * their model requests are cancelled (those given a `signal` of their own finish their
   * request, then fail). Idempotent.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#watchTimer) clearInterval(this.#watchTimer);
    this.#closing.abort(closedError());
    this.#index?.close();
    this.#index = null;
    for (const old of this.#retired) old.close();
    this.#retired.clear();
    this.#cache.clear();
    this.#ownProviders?.close();
  }

  /** Aborted by close(): the signal of the model calls of questions without one of their own. */
  readonly #closing = new AbortController();

  /**
   * A question's call options: its own signal, else the engine's, which close() aborts. (Both
   * at once would need an AbortSignal.any per question, on the server's hot path; a question
   * with its own signal fails at close once its model call returns.)
   */
  #callOf(options: QuestionOptions): CallOptions {
    return { signal: options.signal ?? this.#closing.signal };
  }

  /** `work`'s value; ClosedError instead of its result or failure once the engine is closed. */
  async #whileOpen<T>(work: Promise<T>): Promise<T> {
    let value: T;
    try {
      value = await work;
    } catch (e) {
      throw this.#closed ? closedError() : e;
    }
    if (this.#closed) throw closedError();
    return value;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Hits and misses of the retrieval cache since the engine started. */
  cacheStats(): { hits: number; misses: number; size: number; capacity: number } {
    return this.#cache.stats();
  }

  async #retrieve(
    question: string,
    options: QuestionOptions,
  ): Promise<{ retrieval: Retrieval; chunkOf: ChunkOf; index: LoadedIndex }> {
    const q = validateQuestion(question);
    const index = await this.#current();
    this.#users.set(index, (this.#users.get(index) ?? 0) + 1);
    try {
      return { ...(await this.#retrieveOn(index, q, options)), index };
    } finally {
      const left = (this.#users.get(index) ?? 1) - 1;
      if (left > 0) this.#users.set(index, left);
      else {
        this.#users.delete(index);
        if (this.#retired.delete(index)) index.close();
      }
    }
  }

  async #retrieveOn(
    index: LoadedIndex,
    q: string,
    options: QuestionOptions,
  ): Promise<{ retrieval: Retrieval; chunkOf: ChunkOf }> {
    const cached = this.#cache.get(q);
    if (cached) return { retrieval: cached, chunkOf: chunkOfItems(index, cached) };
    const call = this.#callOf(options);
    // §6.2 step 2: both calls at once; either failing fails the question.
    const needsVector = vectorK(index, this.#params) > 0;
    const [embedding, decomposition] = await this.#whileOpen(
      Promise.all([
        needsVector ? this.#providers.embedQuery(q, call) : Promise.resolve(null),
        this.#providers.run('query', { question: q }, call),
      ]),
    );
    // The retrieval is synchronous CPU work: first come, first served, one per turn of the
    // event loop, so a busy server keeps reading requests between two (turn-queue.ts).
    await this.#turns.turn();
    options.signal?.throwIfAborted();
    if (this.#closed) throw closedError();
    const vector = embedding;
    const made = retrieve(index, { vector, elements: decomposition.elements }, this.#params);
    // A question asked before a reload finishes on the index it started on, but its retrieval
    // is not kept: the cache holds the current index's only (it was cleared at the swap, and
    // an old retrieval's node numbers mean other nodes in the new index).
    const retrieval = index === this.#index ? this.#cache.set(q, made) : made;
    return { retrieval, chunkOf: chunkOfItems(index, retrieval) };
  }

  readonly #turns = new TurnQueue();
  /** Sources of the cached retrievals, gone with them (WeakMap). */
  readonly #keptSources = new WeakMap<Retrieval, KeptSources>();

  readonly #count = (text: string): number => (text === '' ? 0 : this.#tokens.countTokens(text));

  /** The loaded index; while none is, re-checks state.json and loads when a build has finished. */
  async #current(): Promise<LoadedIndex> {
    if (this.#closed) throw closedError();
    if (this.#index) {
      if (this.#watch) this.#maybeReload();
      return this.#index;
    }
    if (this.#loading) return this.#loading;
    const fingerprint = await indexFingerprint(this.config.mainFolder);
    if (this.#index) return this.#index;
    if (this.#loading) return this.#loading;
    if (this.#failure && this.#failure.fingerprint === fingerprint) throw this.#failure.error;
    return this.#startLoad();
  }

  /** With `watch`: resolves when a reload in progress has ended (at once when none is). */
  async reloaded(): Promise<void> {
    await this.#reloading;
  }

  /**
   * With `watch`, at most once per interval: when a build has finished a cycle since the
   * index was loaded (state FINISHED, files changed; or a later cycle running with that
   * generation kept whole), load the new one in the background and swap it in. A cycle
   * still running is not loaded: the loaded generation stays whole.
   */
  #maybeReload(): void {
    const now = performance.now();
    if (this.#reloading || now - this.#lastCheck < this.#watch!.intervalMs) return;
    this.#lastCheck = now;
    const root = this.config.mainFolder;
    let attempted: string | null = null;
    const reload = (async () => {
      const fingerprint = await indexFingerprint(root);
      if (fingerprint === this.#loadedFingerprint || this.#closed) return;
      if (fingerprint === this.#reloadFailedOn) return;
      const stateText = await readStateText(root);
      if (stateText === null) return;
      const state = parseStateText(stateText, root);
      if (state.current_state !== 'FINISHED') {
        // A cycle running after one this engine never saw finished (a follow-up cycle starts
        // right after the one before): that one is kept whole in cache/finished/, and an
        // engine started now serves it, so this one does too.
        const loaded = this.#index?.generation ?? 0;
        if (!isCycleUnfinished(state) || state.last_finished_generation <= loaded) return;
        if ((await finishedGenerationFiles(root, state.last_finished_generation)) === null) return;
      }
      // The files as the finished build left them: a fingerprint read before the build
      // finished would make the next check load the same generation again.
      const finished = await indexFingerprint(root);
      if (finished === this.#loadedFingerprint) return;
      attempted = finished;
      const next = await LoadedIndex.load(root, {
        dim: this.config.config.dim,
        unbalanceAdjust: this.config.config.unbalance_adjust,
      });
      if (this.#closed) {
        next.close();
        return;
      }
      const old = this.#index;
      this.#index = next;
      this.#loadedFingerprint = finished;
      this.#cache.clear();
      if (old) {
        if (this.#users.has(old)) this.#retired.add(old);
        else old.close();
      }
      this.#reportLoad(next, old?.generation ?? 0);
    })()
      .catch((error: unknown) => {
        // The old index keeps serving. Files that failed to load are not read again (a whole
        // index, every interval) until a build changes them; a failure before the load
        // (reading state.json) is tried again at the next check.
        if (attempted === null || this.#closed) return;
        this.#reloadFailedOn = attempted;
        callBack('onReloadError', () => this.#watch!.onReloadError?.(error));
      })
      .finally(() => {
        this.#reloading = null;
      });
    this.#reloading = reload;
  }

  #startLoad(): Promise<LoadedIndex> {
    const root = this.config.mainFolder;
    const loading = (async () => {
      const fingerprint = await indexFingerprint(root);
      let index: LoadedIndex;
      let settled: string | null = null;
      try {
        index = await LoadedIndex.load(root, {
          dim: this.config.config.dim,
          unbalanceAdjust: this.config.config.unbalance_adjust,
        });
        // Read while this load is still the one in progress: a check made meanwhile waits
        // for it rather than comparing the files with no index and loading them again.
        settled = await settledFingerprint(root, index.generation).catch(() => null);
      } catch (error) {
        // A missing or damaged index stays so until state.json changes; anything else
        // (out of file handles, …) is tried again on the next call.
        this.#failure = error instanceof IndexNotBuiltError ? { fingerprint, error } : null;
        throw error;
      } finally {
        this.#loading = null;
      }
      if (this.#closed) {
        index.close();
        throw closedError();
      }
      // An engine that waited for a build (none had finished, or its files were damaged)
      // says so with `watch`, as it says a swap: from no generation (previous 0).
      const waited = this.#failure !== null;
      this.#failure = null;
      this.#index = index;
      this.#loadedFingerprint = settled ?? fingerprint;
      if (waited) this.#reportLoad(index, 0);
      return index;
    })();
    // Nobody may be waiting yet (the constructor starts the load): keep a failure from
    // becoming an unhandled rejection; callers see it through #current().
    loading.catch(() => {});
    this.#loading = loading;
    return loading;
  }
}

/**
 * The chunk id of each item of `r`: the retrieval knows the node of every item (`r.nodes`), so
 * no item is looked up by its id (that lookup was a measurable share of a question).
 */
function chunkOfItems(index: LoadedIndex, r: Retrieval): ChunkOf {
  return (item: RetrievedItem, position?: number): string | null => {
    const node =
      position !== undefined && r.items[position] === item ? r.nodes[position] : index.indexOf(item.id);
    const chunk = node === undefined ? -1 : index.chunkOf[node]!;
    return chunk >= 0 ? index.idOf(chunk) : null;
  };
}

/** A retrieval's sources and their JSON bytes (the /retrieval reply's "sources"). */
interface KeptSources {
  sources: Source[];
  sourcesJson: Buffer;
}

/** The ANS task's input: the context with its items numbered, the question, earlier turns. */
function answerInput(
  r: Retrieval,
  question: string,
  options: AnswerOptions,
): { context: string; question: string; history?: AnswerOptions['history'] } {
  const input: { context: string; question: string; history?: AnswerOptions['history'] } = {
    context: citedContext(r.items),
    question,
  };
  if (options.history && options.history.length > 0) input.history = options.history;
  return input;
}

function closedError(): ClosedError {
  return new ClosedError('closed', 'this NodeSearch is closed');
}

/**
 * Runs an application's callback. What it throws is its own bug, not a failed load (an
 * onReload that threw was reported to onReloadError, and one from onReloadError ended the
 * process as an unhandled rejection): it is shown as a process warning.
 */
function callBack(name: string, run: () => void): void {
  try {
    run();
  } catch (e) {
    process.emitWarning(`NodeSearch ${name} callback threw: ${e instanceof Error ? e.message : String(e)}`);
  }
}
