/**
 * The provider the pipeline and the search engine use. It composes, outermost first:
 *
 *   response cache → retry (backoff, Retry-After) → rate limiter → per-request timeout → adapter
 *
 * Retries sit outside the limiter on purpose: every attempt takes its own permit, so retried
 * requests count against `rate_limit` like any other, and a request waiting out its backoff
 * holds no in-flight slot that others could use.
 *
 * Only validated replies are cached; an invalid or failed reply is never stored. Embeddings
 * are cached per input text, so a changed batch size still hits. Counters feed the build's
 * progress lines and info.log.
 */
import { ProviderError } from '../errors.js';
import { cacheKey } from './cache-key.js';
import { type Clock, systemClock } from './clock.js';
import {
  abortReason,
  type ErrorContext,
  invalidReplyError,
  throwIfAborted,
  timeoutError,
} from './provider-errors.js';
import type { Limiter } from './rate-limiter.js';
import type { ResponseCache } from './response-cache.js';
import { type RetryEvent, type RetryOptions, type RetryPolicy, withRetry } from './retry.js';
import { validateText } from './task-schemas.js';
import { capTokens, EMBEDDING_INPUT_TOKEN_CAP, type TokenCounter } from './token-cap.js';
import type {
  CallOptions,
  ChatRequest,
  EachRequest,
  EmbeddingBatch,
  JsonSchemaSpec,
  Provider,
  ProviderIdentity,
  Validator,
} from './types.js';

export interface ProviderStats {
  /** Requests sent to the provider, retries and repairs excluded. */
  calls: number;
  /** Requests sent, retries and repairs included. */
  requests: number;
  retries: number;
  /** Chat and structured replies served from the cache. */
  cacheHits: number;
  /** Embedding inputs served from the cache. */
  embeddingCacheHits: number;
  /** Embedding inputs sent to the provider. */
  embeddedTexts: number;
}

export interface CachedProviderOptions {
  adapter: Provider;
  /** For messages: `model_config` or `embedding_config`. */
  section: 'model_config' | 'embedding_config';
  retry: RetryPolicy;
  /** Shared by every caller of this config section; none = unlimited (the local provider). */
  limiter?: Limiter;
  /** None = not cached (search time, the local provider). */
  cache?: ResponseCache;
  timeouts: { chatMs: number; embedMs: number };
  /** Counts embedding inputs for the 8,000-token cap. */
  tokenCounter: TokenCounter;
  /** Every vector must have this length (config.dim). */
  expectedDim?: number;
  clock?: Clock;
  random?: () => number;
  onRetry?: (event: RetryEvent & { section: string }) => void;
  /** Keys to keep out of messages. */
  secrets?: readonly string[];
}

/** The signal of a call nobody can abort. */
const NEVER_ABORTED = new AbortController().signal;

/** Marks our own timeout, to tell it apart from the caller's abort. */
class AttemptTimeout extends Error {}

/** One request's signal and its clean-up (CachedProvider.#scope). */
interface AttemptScope {
  signal: AbortSignal;
  /** The error to report for what the request threw: the caller's abort reason first. */
  error: (e: unknown) => unknown;
  /** Stops the timer and the abort listener. */
  end: () => void;
  /** Aborts the request. */
  cancel: () => void;
}

/**
 * The two signals of a call: `signal` aborts everything, `starts` (the caller's `signal` or
 * `noNewRequests`) stops what has not been sent yet: a wait for a permit, a backoff, a next
 * request.
 */
interface CallSignals {
  signal: AbortSignal | undefined;
  starts: AbortSignal | undefined;
}

function callSignals({ signal, noNewRequests }: CallOptions): CallSignals {
  if (noNewRequests === undefined || noNewRequests === signal) return { signal, starts: signal };
  if (signal === undefined) return { signal, starts: noNewRequests };
  // Combined only when a call gets past the cache: a build makes most of its calls from the
  // cache on a resume, and Node keeps every AbortSignal.any source alive until both end.
  let starts: AbortSignal | undefined;
  return {
    signal,
    get starts() {
      starts ??= AbortSignal.any([signal, noNewRequests]);
      return starts;
    },
  };
}

/** A streamed reply whose first delta has arrived (CachedProvider.#openStream). */
interface OpenStream {
  first: IteratorResult<string, undefined>;
  next: () => Promise<IteratorResult<string, undefined>>;
  error: (e: unknown) => unknown;
  /** Frees the permit, timer and listener; cancels the request unless it `finished`. */
  end: (finished: boolean) => void;
}

export class CachedProvider implements Provider {
  readonly identity: ProviderIdentity;
  readonly section: 'model_config' | 'embedding_config';
  readonly #o: CachedProviderOptions;
  readonly #clock: Clock;
  readonly #ctx: ErrorContext;
  readonly #stats: ProviderStats = {
    calls: 0,
    requests: 0,
    retries: 0,
    cacheHits: 0,
    embeddingCacheHits: 0,
    embeddedTexts: 0,
  };

  constructor(options: CachedProviderOptions) {
    this.#o = options;
    this.identity = options.adapter.identity;
    this.section = options.section;
    this.#clock = options.clock ?? systemClock;
    this.#ctx = {
      provider: this.identity.provider,
      section: options.section,
      model: this.identity.model,
      baseUrl: this.identity.baseUrl,
      secrets: options.secrets ?? [],
    };
  }

  /** A snapshot of the counters. */
  stats(): ProviderStats {
    return { ...this.#stats };
  }

  get cached(): boolean {
    return this.#o.cache !== undefined && this.identity.provider !== 'local';
  }

  async chat(request: ChatRequest, options: CallOptions = {}): Promise<string> {
    return this.#cachedCall(
      'chat',
      { messages: request.messages },
      textFromCache,
      callSignals(options),
      async (signal) => {
        const v = validateText(await this.#o.adapter.chat(request, { signal }));
        if (!v.ok) throw invalidReplyError(this.#ctx, `${request.task} reply`, v.error);
        return v.value;
      },
    );
  }

  /**
   * The reply as it is generated (Provider.chatStream), under the same cache, limiter, timeout
   * and retries as `chat`, with one difference: retries happen only before the first delta.
   * Once text has reached the caller, a failure ends the stream with the error. A cached reply
   * comes as one delta; a complete reply is validated and cached like `chat`'s (its trimmed
   * text). Leading whitespace is not sent; the limiter's permit is held until the stream ends.
   */
  async *chatStream(
    request: ChatRequest,
    options: CallOptions = {},
  ): AsyncGenerator<string, void, undefined> {
    const { key, hit } = this.#lookup('chat', { messages: request.messages }, textFromCache);
    if (hit !== undefined) {
      yield hit;
      return;
    }
    const signals = callSignals(options);
    throwIfAborted(signals.starts);
    this.#stats.calls++;
    const open = await this.#openStream(request, signals);
    let text = '';
    let finished = false;
    try {
      for (let r = open.first; !r.done; r = await open.next()) {
        text += r.value;
        yield r.value;
      }
      finished = true;
    } catch (e) {
      throw open.error(e);
    } finally {
      open.end(finished);
    }
    const v = validateText(text);
    if (!v.ok) throw invalidReplyError(this.#ctx, `${request.task} reply`, v.error);
    this.#store(key, 'chat', v.value);
  }

  async structured<T>(
    request: ChatRequest,
    schema: JsonSchemaSpec,
    validate: Validator<T>,
    options: CallOptions = {},
  ): Promise<T> {
    const signals = callSignals(options);
    return this.#cachedCall(
      'structured',
      { messages: request.messages, schema },
      (cached) => {
        // Validated when stored; validating again returns the normalised shape.
        const v = validate(cached);
        return v.ok ? v.value : undefined;
      },
      signals,
      // The reply and its repair are two requests: a permit and a timeout each (a slow model
      // that needs a repair would otherwise fail request_timeout on replies that arrive in
      // time, and two starts would share one rate-limit slot). An invalid reply after the
      // repair still fails the attempt, retried as a whole.
      // `noNewRequests`: an adapter that would ask again in another form (a server that
      // rejects json_schema) does not once the caller stopped.
      (signal, eachRequest) =>
        this.#o.adapter.structured(request, schema, validate, {
          signal,
          eachRequest,
          noNewRequests: signals.starts,
        }),
      'each-request',
    );
  }

  async embed(texts: readonly string[], options: CallOptions = {}): Promise<EmbeddingBatch> {
    const signals = callSignals(options);
    // `starts`, without combining the signals for a batch the cache may answer whole.
    throwIfAborted(options.signal);
    throwIfAborted(options.noNewRequests);
    const inputs = texts.map((t) => capTokens(t, EMBEDDING_INPUT_TOKEN_CAP, this.#o.tokenCounter));
    const cache = this.cached ? this.#o.cache : undefined;
    const found: Array<Float32Array | undefined> = new Array(inputs.length);
    const keys = cache ? inputs.map((t) => cacheKey(this.identity, 'embedding', t)) : [];
    // Distinct inputs not in the cache, each sent once.
    const missing = new Map<string, number[]>();
    for (let i = 0; i < inputs.length; i++) {
      const hit = cache ? cache.getEmbedding(keys[i] as Buffer) : undefined;
      // A vector of another length than config.dim is a reply from before a change of model
      // behind the same name (the key holds no dim for a model it does not know): asked again.
      const expectedDim = this.#o.expectedDim;
      if (hit && (expectedDim === undefined || hit.length === expectedDim)) {
        found[i] = hit;
        this.#stats.embeddingCacheHits++;
        continue;
      }
      const t = inputs[i] as string;
      const list = missing.get(t);
      if (list) list.push(i);
      else missing.set(t, [i]);
    }
    if (missing.size === 0) return packRows(found, this.#o.expectedDim ?? 0);
    const sendTexts = [...missing.keys()];
    this.#stats.calls++;
    // Checked inside the retried call: an invalid reply (a wrong count, a non-finite value)
    // is retried like any other; a wrong dimension is not retryable and fails at once.
    const batch = await this.#withPolicy('embed', signals, async (signal) => {
      const reply = await this.#o.adapter.embed(sendTexts, { signal, noNewRequests: signals.starts });
      this.#checkVectors(reply, sendTexts.length);
      return reply;
    });
    this.#stats.embeddedTexts += sendTexts.length;
    const { dim } = batch;
    const rows = sendTexts.map((_, j) => batch.vectors.subarray(j * dim, (j + 1) * dim));
    // One record per distinct text (the key is a function of the text), read from the batch.
    cache?.putEmbeddings(sendTexts.map((t, j) => ({ key: keys[missing.get(t)![0]!]!, vector: rows[j]! })));
    // Every input distinct and none cached: the reply is the result as it is, in input order.
    if (sendTexts.length === inputs.length) return batch;
    sendTexts.forEach((t, j) => {
      for (const i of missing.get(t)!) found[i] = rows[j];
    });
    return packRows(found, dim);
  }

  #checkVectors(batch: EmbeddingBatch, count: number): void {
    const { provider, model } = this.identity;
    const expected = this.#o.expectedDim;
    if (expected !== undefined && batch.dim !== expected) {
      throw new ProviderError(
        `embedding model ${provider}/${model} returned vectors of length ${batch.dim}, but config.dim is ${expected}; set config.dim to ${batch.dim} or choose another model`,
        { provider, retryable: false },
      );
    }
    if (batch.vectors.length !== count * batch.dim) {
      throw invalidReplyError(
        this.#ctx,
        'embedding reply',
        `expected ${count} vectors of length ${batch.dim}, got ${batch.vectors.length} values`,
      );
    }
    for (let i = 0; i < batch.vectors.length; i++) {
      if (!Number.isFinite(batch.vectors[i])) {
        throw invalidReplyError(
          this.#ctx,
          'embedding reply',
          `vector ${Math.floor(i / batch.dim)} has a non-finite value`,
        );
      }
    }
  }

  async #cachedCall<T>(
    kind: 'chat' | 'structured',
    cacheRequest: unknown,
    fromCache: (cached: unknown) => T | undefined,
    signals: CallSignals,
    call: (signal: AbortSignal, eachRequest: EachRequest) => Promise<T>,
    policy: 'whole' | 'each-request' = 'whole',
  ): Promise<T> {
    const { key, hit } = this.#lookup(kind, cacheRequest, fromCache);
    if (hit !== undefined) return hit;
    throwIfAborted(signals.starts);
    this.#stats.calls++;
    const value =
      policy === 'whole'
        ? await this.#withPolicy('chat', signals, (s) => call(s, (send) => send(s)))
        : await this.#withPolicyEachRequest(signals, call);
    this.#store(key, kind, value);
    return value;
  }

  /** The cache key of a reply (none when not cached) and the usable cached value, if any. */
  #lookup<T>(
    kind: 'chat' | 'structured',
    cacheRequest: unknown,
    fromCache: (cached: unknown) => T | undefined,
  ): { key: Buffer | undefined; hit: T | undefined } {
    const cache = this.cached ? this.#o.cache : undefined;
    const key = cache ? cacheKey(this.identity, kind, cacheRequest) : undefined;
    if (!cache || !key || !cache.hasReply(key)) return { key, hit: undefined };
    const hit = fromCache(cache.getReply(key));
    if (hit !== undefined) this.#stats.cacheHits++;
    return { key, hit };
  }

  #store(key: Buffer | undefined, kind: 'chat' | 'structured', value: unknown): void {
    if (!key) return;
    this.#o.cache?.putReply(
      key,
      { provider: this.identity.provider, model: this.identity.model, kind },
      value,
    );
  }

  /** Retry around (limiter → timeout → call). */
  #withPolicy<T>(
    kind: 'chat' | 'embed',
    { signal, starts }: CallSignals,
    call: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    // The local provider answers in process, deterministically and at once: a retry would
    // get the same reply and a timer could never fire before it, so it gets neither (the
    // timer, controller and listener per call were a measurable share of a search request).
    if (this.identity.provider === 'local') {
      throwIfAborted(starts);
      this.#stats.requests++;
      return call(signal ?? NEVER_ABORTED);
    }
    const timeoutMs = kind === 'embed' ? this.#o.timeouts.embedMs : this.#o.timeouts.chatMs;
    return withRetry(
      async ({ remainingMs }) => {
        const run = () =>
          this.#attempt(call, Math.min(timeoutMs, remainingMs ?? Number.POSITIVE_INFINITY), {
            signal,
            starts,
          });
        return this.#o.limiter ? this.#o.limiter.run(run, starts) : run();
      },
      this.#o.retry,
      this.#retryOptions(starts),
    );
  }

  /**
   * `#withPolicy` for a call of several requests: the retry around the whole call, the
   * limiter permit and the timeout around each request it sends (`eachRequest`).
   */
  #withPolicyEachRequest<T>(
    signals: CallSignals,
    call: (signal: AbortSignal, eachRequest: EachRequest) => Promise<T>,
  ): Promise<T> {
    const { signal, starts } = signals;
    if (this.identity.provider === 'local') {
      throwIfAborted(starts);
      this.#stats.requests++;
      const s = signal ?? NEVER_ABORTED;
      return call(s, (send) => send(s));
    }
    const timeoutMs = this.#o.timeouts.chatMs;
    return withRetry(
      async ({ remainingMs }) => {
        // The policy's deadline as a time: each request (a reply, then its repair) gets what
        // is left of it when it is sent, not what was left when the attempt began.
        const deadline =
          remainingMs === undefined ? Number.POSITIVE_INFINITY : this.#clock.now() + remainingMs;
        const eachRequest: EachRequest = (send) => {
          const run = () =>
            this.#attempt(send, Math.max(0, Math.min(timeoutMs, deadline - this.#clock.now())), signals);
          return this.#o.limiter ? this.#o.limiter.run(run, starts) : run();
        };
        return call(signal ?? NEVER_ABORTED, eachRequest);
      },
      this.#o.retry,
      this.#retryOptions(starts),
    );
  }

  /** `starts` ends a backoff: no next attempt once the caller wants no new request. */
  #retryOptions(signal: AbortSignal | undefined): RetryOptions {
    return {
      clock: this.#clock,
      random: this.#o.random,
      signal,
      onRetry: (e) => {
        this.#stats.retries++;
        this.#o.onRetry?.({ ...e, section: this.section });
      },
    };
  }

  /**
   * Opens a streamed chat reply and reads up to its first non-empty delta, with the policy of
   * `#withPolicy`: the first delta is the attempt's success, so a failure before it (an empty
   * reply too) is retried, one after it is not. The returned stream holds its limiter permit,
   * timeout and abort listener until `end`.
   */
  async #openStream(request: ChatRequest, { signal, starts }: CallSignals): Promise<OpenStream> {
    if (this.identity.provider === 'local') return this.#startStream(request, signal, undefined, () => {});
    const limiter = this.#o.limiter;
    return withRetry(
      async ({ remainingMs }) => {
        const timeoutMs = Math.min(this.#o.timeouts.chatMs, remainingMs ?? Number.POSITIVE_INFINITY);
        const release = limiter ? await holdPermit(limiter, starts) : () => {};
        if (starts?.aborted) {
          release();
          throw abortReason(starts);
        }
        return this.#startStream(request, signal, timeoutMs, release);
      },
      this.#o.retry,
      this.#retryOptions(starts),
    );
  }

  async #startStream(
    request: ChatRequest,
    outer: AbortSignal | undefined,
    timeoutMs: number | undefined,
    release: () => void,
  ): Promise<OpenStream> {
    let scope: AttemptScope;
    try {
      scope = this.#scope(outer, timeoutMs);
    } catch (e) {
      release();
      throw e;
    }
    const it = this.#o.adapter.chatStream(request, { signal: scope.signal })[Symbol.asyncIterator]();
    let started = false;
    const next = async (): Promise<IteratorResult<string, undefined>> => {
      for (;;) {
        const r = await it.next();
        if (r.done) {
          // The openai SDK ends a stream quietly when its signal aborts: not a whole reply.
          if (scope.signal.aborted) throw abortReason(scope.signal);
          return { done: true, value: undefined };
        }
        const text = started ? r.value : r.value.trimStart();
        if (text === '') continue;
        started = true;
        return { done: false, value: text };
      }
    };
    const end = (finished: boolean) => {
      scope.end();
      release();
      if (!finished) {
        // Left early or failed: cancel the adapter's request.
        scope.cancel();
        it.return?.().catch(() => {});
      }
    };
    try {
      const first = await next();
      if (first.done) {
        throw invalidReplyError(this.#ctx, `${request.task} reply`, 'expected a non-empty text reply');
      }
      return { first, next, error: scope.error, end };
    } catch (e) {
      end(false);
      throw scope.error(e);
    }
  }

  /**
   * One request's signal: aborted by the caller's signal or at `timeoutMs` (none = no timer);
   * `error` turns what the request threw into the caller's abort reason or a timeout error.
   */
  #scope(outer: AbortSignal | undefined, timeoutMs: number | undefined): AttemptScope {
    throwIfAborted(outer);
    this.#stats.requests++;
    const ctl = new AbortController();
    const onOuter = () => ctl.abort(outer?.reason);
    outer?.addEventListener('abort', onOuter, { once: true });
    const cancelTimer =
      timeoutMs === undefined
        ? undefined
        : this.#clock.after(timeoutMs, () => ctl.abort(new AttemptTimeout()));
    return {
      signal: ctl.signal,
      error: (e) => {
        if (outer?.aborted) return abortReason(outer);
        if (ctl.signal.aborted && ctl.signal.reason instanceof AttemptTimeout)
          return timeoutError(
            this.#ctx,
            timeoutMs ?? 0,
            this.section === 'embedding_config' ? this.#o.timeouts.embedMs : this.#o.timeouts.chatMs,
          );
        return e;
      },
      end: () => {
        cancelTimer?.();
        outer?.removeEventListener('abort', onOuter);
      },
      cancel: () => ctl.abort(new DOMException('the stream was left early', 'AbortError')),
    };
  }

  /**
   * One request with its own timeout; the caller's abort wins over our timeout. Not sent when
   * `starts` is aborted (its permit may have come after the caller stopped wanting it).
   */
  async #attempt<T>(
    call: (signal: AbortSignal) => Promise<T>,
    timeoutMs: number,
    { signal: outer, starts }: CallSignals,
  ) {
    throwIfAborted(starts);
    const scope = this.#scope(outer, timeoutMs);
    try {
      return await call(scope.signal);
    } catch (e) {
      throw scope.error(e);
    } finally {
      scope.end();
    }
  }
}

/** Vectors of one length, one per input, as one row-major buffer. */
function packRows(rows: ReadonlyArray<Float32Array | undefined>, fallbackDim: number): EmbeddingBatch {
  const dim = rows[0]?.length ?? fallbackDim;
  const out = new Float32Array(rows.length * dim);
  rows.forEach((v, i) => {
    out.set(v as Float32Array, i * dim);
  });
  return { vectors: out, dim };
}

/** A cached chat reply: a non-empty string. */
function textFromCache(cached: unknown): string | undefined {
  return typeof cached === 'string' && cached.trim() !== '' ? cached : undefined;
}

/**
 * Takes a limiter permit and holds it until the returned release is called (the limiter runs
 * functions; a stream's request outlives the function that opens it).
 */
function holdPermit(limiter: Limiter, signal: AbortSignal | undefined): Promise<() => void> {
  return new Promise((resolve, reject) => {
    limiter.run(() => new Promise<void>((done) => resolve(done)), signal).catch(reject);
  });
}
