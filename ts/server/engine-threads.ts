/**
 * `noderag search --workers N`: one process, the HTTP server on its main thread and N search
 * engines on worker threads, each request handed to the engine thread with the fewest
 * requests in hand.
 *
 * Why threads and not N server processes (node:cluster, which this replaced): a process
 * serves the connections it was given for their whole life, so when the kernel ran the load
 * generator (or anything else) on one worker's core, that worker's connections waited
 * longer for seconds at a time, and each worker interleaved HTTP work with retrieval. Here
 * every request can go to either engine, and an engine thread does only retrieval, which
 * keeps its caches warm: on the HotpotQA index at 50 connections the same load test served
 * about 12 % more requests per second at a lower p99, with 8 % less CPU per request
 * (bench/RESULTS.md "server").
 *
 * Main side: `ThreadPoolEngine`, a SearchEngine for the app (./app.ts). Thread side:
 * `serveEngineOnThread`, called by the thread's entry module with the engine it built. The
 * messages:
 * - to a thread: a request `{ id, op, question?, options? }`, `{ abort: id }`, `{ close }`;
 * - from a thread: `{ ready }` or `{ failed, exitCode, message }` once at start, then per
 *   request `{ id, ok, value | error, calls }`, and `{ id, delta }` before the end of a stream.
 *
 * A retrieval's context and sources travel as the UTF-8 of their JSON (transferred, not
 * copied), which is what the server writes: it parses them only when asked (answers, logs).
 * Errors keep their class and code (the HTTP status is chosen by class: ./http.ts statusFor).
 * The model calls a request made on a thread come back with its reply and are recorded on the
 * main thread, inside the request (metrics, the access log's cache_hit).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { type MessagePort, Worker } from 'node:worker_threads';
import {
  ClosedError,
  ConfigError,
  IndexFileError,
  IndexNotBuiltError,
  InternalError,
  InvalidArgumentError,
  InvalidQuestionError,
  NodeRagError,
  ProviderError,
} from '../errors.js';
import { o200kTokenCounter } from '../llm/create-providers.js';
import {
  type AnswerEvent,
  type AnswerOptions,
  type AnswerResult,
  type EngineStatus,
  RESULT_JSON,
  type ResultJson,
  type RetrievalResult,
  type Source,
} from '../search/engine-types.js';
import type { SearchEngine } from './engine.js';
import { clientClosed, type FieldProblem, HttpError } from './http.js';
import type { ProviderCall } from './provider-metrics.js';

type Op = 'status' | 'retrieve' | 'answer' | 'stream';

interface RequestMessage {
  id: number;
  op: Op;
  question?: string;
  options?: AnswerOptions;
}

type ToThread = RequestMessage | { abort: number } | { close: true };

/** An error as it crosses threads: its class name and the fields the server reads. */
interface SentError {
  name: string;
  message: string;
  stack?: string;
  code?: string;
  problems?: unknown[];
  provider?: string;
  status?: number;
  retryable?: boolean;
  retryAfterMs?: number;
  headers?: Record<string, string>;
}

/** A retrieval as it crosses threads (see the module comment). */
interface SentRetrieval {
  info: Uint8Array;
  sources: Uint8Array;
  /** Counted on the thread when the server logs or measures tokens, else on demand here. */
  tokens?: number;
}

type FromThread =
  | { ready: true }
  | { failed: true; exitCode: number; message: string }
  | { id: number; ok: true; value: unknown; calls: ProviderCall[] }
  | { id: number; ok: false; error: SentError; calls: ProviderCall[] }
  | { id: number; delta: string };

/** What the thread's entry module receives as `workerData`, beside its own settings. */
export interface EngineThreadData {
  /** 0 for the first thread: the one that prints (reloads, warnings). */
  index: number;
}

/** Raised by `ThreadPoolEngine.start` when an engine thread cannot start (its own message). */
export class EngineThreadStartError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------- main thread

interface Pending {
  settle(m: FromThread): void;
  /** The thread stopped before answering. */
  lost(e: Error): void;
}

interface EngineThread {
  worker: Worker;
  pending: Map<number, Pending>;
  ready: boolean;
  /** Resolves when the thread has ended. */
  exited: Promise<void>;
}

export interface ThreadPoolOptions<D> {
  /** The entry module each thread runs (it calls `serveEngineOnThread`). */
  entry: URL;
  threads: number;
  /** Given to each thread as `workerData`, with its `index`. */
  data: D;
  /** Records a model call a request made (metrics, access log); called inside the request. */
  onCall?: (call: ProviderCall) => void;
  /** Told when a thread stopped after start and is replaced (default: console.error). */
  log?: (line: string) => void;
  /**
   * Send a question to the same thread each time (its retrieval cache has it), unless that
   * thread has AFFINITY_SLACK more requests in hand than the least busy one. For engines
   * with a retrieval cache; without one every request goes to the least busy thread.
   */
  affinity?: boolean;
}

/** How much busier than the least busy thread a question's own thread may be (see affinity). */
const AFFINITY_SLACK = 4;

export class ThreadPoolEngine<D extends object = object> implements SearchEngine {
  readonly #options: ThreadPoolOptions<D>;
  readonly #threads: EngineThread[] = [];
  #nextId = 1;
  /** Where the search for the least busy thread starts: after the last one picked. */
  #start = 0;
  #closing = false;

  private constructor(options: ThreadPoolOptions<D>) {
    this.#options = options;
  }

  /** Starts every thread; rejects with the first thread's failure (and stops the others). */
  static async start<D extends object>(options: ThreadPoolOptions<D>): Promise<ThreadPoolEngine<D>> {
    const pool = new ThreadPoolEngine(options);
    const starts = Array.from({ length: options.threads }, (_, i) => pool.#spawn(i));
    const failures = await Promise.all(
      starts.map((s) =>
        s.then(
          () => null,
          (e: unknown) => e,
        ),
      ),
    );
    const failed = failures.find((f) => f !== null);
    if (failed !== undefined) {
      await pool.close();
      throw failed;
    }
    return pool;
  }

  get threadCount(): number {
    return this.#threads.length;
  }

  /** Starts thread `index` (or its replacement); resolves once its engine is ready. */
  #spawn(index: number): Promise<void> {
    const { entry } = this.#options;
    const workerData = { ...this.#options.data, index } satisfies EngineThreadData;
    const worker = entry.pathname.endsWith('.ts')
      ? new Worker(sourceBootstrap(entry), { eval: true, workerData })
      : new Worker(entry, { workerData });
    const thread: EngineThread = {
      worker,
      pending: new Map(),
      ready: false,
      exited: new Promise<void>((r) => worker.once('exit', () => r())),
    };
    this.#threads[index] = thread;
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (m: FromThread) => {
        if ('ready' in m) {
          thread.ready = true;
          resolve();
        } else if ('failed' in m) {
          reject(new EngineThreadStartError(m.message, m.exitCode));
        } else {
          const p = thread.pending.get(m.id);
          if (p && !('delta' in m)) thread.pending.delete(m.id);
          p?.settle(m);
        }
      });
      worker.on('error', (e) => {
        if (!thread.ready) reject(e);
        else (this.#options.log ?? console.error)(`A search thread failed: ${e.stack ?? e.message}`);
      });
      worker.on('exit', (code) => {
        const wasReady = thread.ready;
        thread.ready = false;
        const lost = new InternalError('internal_error', `the search thread stopped (exit code ${code})`);
        for (const p of thread.pending.values()) p.lost(lost);
        thread.pending.clear();
        if (!wasReady) {
          reject(
            new EngineThreadStartError(`a search thread stopped during start-up (exit code ${code})`, 1),
          );
          return;
        }
        if (this.#closing || this.#threads[index] !== thread) return;
        (this.#options.log ?? console.error)(
          `Search thread ${index + 1} stopped (exit code ${code}); starting a replacement.`,
        );
        this.#spawn(index).catch((e: unknown) =>
          (this.#options.log ?? console.error)(
            `The replacement search thread failed to start: ${e instanceof Error ? e.message : String(e)}`,
          ),
        );
      });
    });
  }

  /**
   * The ready thread with the fewest requests in hand (ties in turn); with `affinity`, the
   * question's own thread unless it is much busier (see ThreadPoolOptions.affinity).
   */
  #pick(question?: string): EngineThread {
    let best: EngineThread | undefined;
    const n = this.#threads.length;
    let bestAt = 0;
    for (let i = 0; i < n; i++) {
      const at = (this.#start + i) % n;
      const t = this.#threads[at]!;
      if (t.ready && (!best || t.pending.size < best.pending.size)) {
        best = t;
        bestAt = at;
      }
    }
    if (!best) {
      throw new InternalError(
        'internal_error',
        this.#closing ? 'the server is stopping' : 'no search thread is running',
      );
    }
    this.#start = bestAt + 1;
    if (this.#options.affinity && question !== undefined) {
      const own = this.#threads[hashOf(question) % n]!;
      if (own.ready && own.pending.size <= best.pending.size + AFFINITY_SLACK) return own;
    }
    return best;
  }

  /**
   * Sends a request and resolves with its value. The signal aborts it at once here (its
   * reason is the rejection) and on the thread. The model calls it made are recorded after
   * the await, in the caller's async context: the request's (an event of the thread has none).
   */
  async #ask(
    op: Op,
    signal: AbortSignal | undefined,
    fields: Omit<RequestMessage, 'id' | 'op'>,
  ): Promise<unknown> {
    const m = await this.#send(op, signal, fields);
    this.#replay(m.calls);
    if (!m.ok) throw reviveError(m.error);
    return m.value;
  }

  #send(
    op: Op,
    signal: AbortSignal | undefined,
    fields: Omit<RequestMessage, 'id' | 'op'>,
  ): Promise<Extract<FromThread, { ok: boolean }>> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const thread = this.#pick(fields.question);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        thread.pending.delete(id);
        thread.worker.postMessage({ abort: id } satisfies ToThread);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      thread.pending.set(id, {
        settle: (m) => {
          signal?.removeEventListener('abort', onAbort);
          if ('ok' in m) resolve(m);
        },
        lost: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
      thread.worker.postMessage({ id, op, ...fields } satisfies ToThread);
    });
  }

  #replay(calls: readonly ProviderCall[]): void {
    const onCall = this.#options.onCall;
    if (onCall) for (const c of calls) onCall(c);
  }

  async status(): Promise<EngineStatus> {
    return (await this.#ask('status', undefined, {})) as EngineStatus;
  }

  async retrieve(question: string, signal: AbortSignal): Promise<RetrievalResult> {
    const sent = (await this.#ask('retrieve', signal, { question })) as SentRetrieval | RetrievalResult;
    return 'info' in sent ? new ThreadRetrieval(sent) : sent;
  }

  async answer(question: string, signal: AbortSignal, options?: AnswerOptions): Promise<AnswerResult> {
    return (await this.#ask('answer', signal, { question, ...(options ? { options } : {}) })) as AnswerResult;
  }

  async *answerStream(
    question: string,
    signal: AbortSignal,
    options?: AnswerOptions,
  ): AsyncIterable<AnswerEvent> {
    if (signal.aborted) throw signal.reason;
    const thread = this.#pick(question);
    const id = this.#nextId++;
    // Messages as they come, and the step waiting for the next one.
    const queue: (FromThread | { lost: Error } | { aborted: unknown })[] = [];
    let wake: (() => void) | null = null;
    const push = (m: (typeof queue)[number]) => {
      queue.push(m);
      wake?.();
    };
    const onAbort = () => push({ aborted: signal.reason });
    signal.addEventListener('abort', onAbort, { once: true });
    thread.pending.set(id, { settle: push, lost: (e) => push({ lost: e }) });
    thread.worker.postMessage({
      id,
      op: 'stream',
      question,
      ...(options ? { options } : {}),
    } satisfies ToThread);
    let ended = false;
    try {
      for (;;) {
        if (queue.length === 0) await new Promise<void>((r) => (wake = r));
        wake = null;
        const m = queue.shift()!;
        if ('aborted' in m) throw m.aborted;
        if ('lost' in m) throw m.lost;
        if ('delta' in m) {
          yield { type: 'delta', text: m.delta };
          continue;
        }
        if (!('ok' in m)) continue;
        ended = true;
        this.#replay(m.calls);
        if (!m.ok) throw reviveError(m.error);
        yield { type: 'done', result: m.value as AnswerResult };
        return;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      thread.pending.delete(id);
      // A consumer that stopped early (client gone, deadline): the thread stops too.
      if (!ended) thread.worker.postMessage({ abort: id } satisfies ToThread);
    }
  }

  /** Asks every thread to close its engine, then waits for them (terminated after `graceMs`). */
  async close(graceMs = 5000): Promise<void> {
    this.#closing = true;
    await Promise.all(
      this.#threads.map(async (t) => {
        if (!t) return;
        t.worker.postMessage({ close: true } satisfies ToThread);
        const timer = setTimeout(() => void t.worker.terminate(), graceMs);
        await t.exited;
        clearTimeout(timer);
      }),
    );
  }
}

/**
 * A thread running a TypeScript entry (the CLI run from its sources with tsx, as the tests
 * do): Node 20 does not hand the process's module loader on to worker threads, so the
 * thread registers tsx itself before importing the entry.
 */
function sourceBootstrap(entry: URL): string {
  const tsx = import.meta.resolve('tsx/esm/api');
  return `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`;
}

/** FNV-1a of the UTF-16 code units: a question's thread under `affinity`. */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A retrieval made on a thread: its JSON bytes as sent, parsed only when read. */
class ThreadRetrieval implements RetrievalResult {
  readonly #sent: SentRetrieval;
  #text: string | undefined;
  #sources: readonly Source[] | undefined;
  readonly [RESULT_JSON]: ResultJson;

  constructor(sent: SentRetrieval) {
    this.#sent = sent;
    this[RESULT_JSON] = { retrievalInfo: [sent.info], sources: sent.sources };
  }

  get retrievalInfo(): string {
    this.#text ??= JSON.parse(Buffer.from(this.#sent.info).toString('utf8')) as string;
    return this.#text;
  }

  get sources(): readonly Source[] {
    this.#sources ??= JSON.parse(Buffer.from(this.#sent.sources).toString('utf8')) as Source[];
    return this.#sources;
  }

  get retrievalTokens(): number {
    this.#sent.tokens ??= o200kTokenCounter.countTokens(this.retrievalInfo);
    return this.#sent.tokens;
  }
}

const ERROR_CLASSES: Record<string, new (code: string, message: string) => NodeRagError> = {
  NodeRagError,
  IndexFileError,
  InvalidQuestionError,
  InvalidArgumentError,
  ClosedError,
  InternalError,
};

function sendError(e: unknown): SentError {
  if (!(e instanceof Error)) return { name: 'Error', message: String(e) };
  const f = e as Error & Partial<Omit<SentError, 'name' | 'message' | 'stack'>>;
  const sent: SentError = { name: e.name, message: e.message };
  if (e.stack !== undefined) sent.stack = e.stack;
  for (const key of [
    'code',
    'problems',
    'provider',
    'status',
    'retryable',
    'retryAfterMs',
    'headers',
  ] as const) {
    if (f[key] !== undefined) (sent as unknown as Record<string, unknown>)[key] = f[key];
  }
  return sent;
}

/** The error of the same class and fields as the one the thread raised. */
function reviveError(s: SentError): Error {
  let e: Error;
  if (s.name === 'ConfigError') e = new ConfigError(s.message, (s.problems ?? []) as string[]);
  else if (s.name === 'IndexNotBuiltError') e = new IndexNotBuiltError(s.message);
  else if (s.name === 'ProviderError') {
    e = new ProviderError(s.message, {
      provider: s.provider ?? 'unknown',
      retryable: s.retryable ?? false,
      ...(s.status !== undefined ? { status: s.status } : {}),
      ...(s.code !== undefined ? { code: s.code } : {}),
      ...(s.retryAfterMs !== undefined ? { retryAfterMs: s.retryAfterMs } : {}),
    });
  } else if (s.name === 'HttpError' && s.status !== undefined && s.code !== undefined) {
    e = new HttpError(s.status, s.code, s.message, {
      ...(s.headers ? { headers: s.headers } : {}),
      ...(s.problems ? { problems: s.problems as FieldProblem[] } : {}),
    });
  } else if (ERROR_CLASSES[s.name] && s.code !== undefined) e = new ERROR_CLASSES[s.name]!(s.code, s.message);
  else {
    e = new Error(s.message);
    e.name = s.name;
  }
  if (s.stack !== undefined) e.stack = s.stack;
  return e;
}

// ---------------------------------------------------------------- engine thread

/** The model calls of the request being handled on this thread. */
const THREAD_CALLS = new AsyncLocalStorage<ProviderCall[]>();

/** For the counted providers of an engine thread: the call joins its request's reply. */
export function noteThreadCall(call: ProviderCall): void {
  THREAD_CALLS.getStore()?.push(call);
}

/** Tells the main thread this thread cannot start; it prints `message` and exits with `exitCode`. */
export function reportThreadFailure(port: MessagePort, exitCode: number, message: string): void {
  port.postMessage({ failed: true, exitCode, message } satisfies FromThread);
}

/**
 * Answers the main thread's requests with `engine` until asked to close (then `close` runs
 * and the thread ends). `countTokens`: count each retrieval's tokens here (the server logs or
 * measures them on every request); `countCalls`: the engine's providers report their calls with
 * `noteThreadCall`.
 */
export function serveEngineOnThread(
  port: MessagePort,
  engine: SearchEngine,
  o: { close: () => void | Promise<void>; countTokens: boolean; countCalls: boolean },
): void {
  const running = new Map<number, AbortController>();
  const reply = (m: FromThread, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

  const handle = async (r: RequestMessage): Promise<void> => {
    const controller = new AbortController();
    running.set(r.id, controller);
    const calls: ProviderCall[] = [];
    const signal = controller.signal;
    try {
      // (AsyncLocalStorage only when calls are counted: it slows every promise of the thread.)
      const inRequest = (work: () => Promise<void>) =>
        o.countCalls ? THREAD_CALLS.run(calls, work) : work();
      await inRequest(async () => {
        try {
          const q = r.question ?? '';
          if (r.op === 'status') reply({ id: r.id, ok: true, value: await engine.status(), calls });
          else if (r.op === 'answer')
            reply({ id: r.id, ok: true, value: await engine.answer(q, signal, r.options), calls });
          else if (r.op === 'retrieve') {
            const { value, transfer } = sendRetrieval(await engine.retrieve(q, signal), o.countTokens);
            reply({ id: r.id, ok: true, value, calls }, transfer);
          } else {
            let done: AnswerResult | undefined;
            const events = engine.answerStream
              ? engine.answerStream(q, signal, r.options)
              : wholeAnswer(engine, q, signal, r.options);
            for await (const ev of events) {
              if (signal.aborted) break;
              if (ev.type === 'delta') reply({ id: r.id, delta: ev.text });
              else done = ev.result;
            }
            if (!signal.aborted) reply({ id: r.id, ok: true, value: done, calls });
          }
        } catch (e) {
          if (!signal.aborted) reply({ id: r.id, ok: false, error: sendError(e), calls });
        }
      });
    } finally {
      running.delete(r.id);
    }
  };

  port.on('message', (m: ToThread) => {
    if ('close' in m) {
      for (const c of running.values()) c.abort(new ClosedError('closed', 'the server is stopping'));
      void Promise.resolve(o.close()).finally(() => port.close());
    } else if ('abort' in m) running.get(m.abort)?.abort(clientClosed());
    else void handle(m);
  });
  port.postMessage({ ready: true } satisfies FromThread);
}

/** An engine without `answerStream`: the whole answer as its one result. */
async function* wholeAnswer(
  engine: SearchEngine,
  q: string,
  signal: AbortSignal,
  options?: AnswerOptions,
): AsyncIterable<AnswerEvent> {
  yield { type: 'done', result: await engine.answer(q, signal, options) };
}

/** A retrieval's JSON bytes in buffers of their own (so transferring them moves nothing else). */
function sendRetrieval(
  r: RetrievalResult,
  countTokens: boolean,
): { value: SentRetrieval | RetrievalResult; transfer: ArrayBuffer[] } {
  const json = r[RESULT_JSON];
  if (!json) {
    return {
      value: { retrievalInfo: r.retrievalInfo, retrievalTokens: r.retrievalTokens, sources: r.sources ?? [] },
      transfer: [],
    };
  }
  let size = 0;
  for (const piece of json.retrievalInfo) size += piece.byteLength;
  const info = new Uint8Array(size);
  let at = 0;
  for (const piece of json.retrievalInfo) {
    info.set(piece, at);
    at += piece.byteLength;
  }
  const sources = new Uint8Array(json.sources);
  const value: SentRetrieval = { info, sources };
  if (countTokens) value.tokens = r.retrievalTokens;
  return { value, transfer: [info.buffer, sources.buffer] };
}
