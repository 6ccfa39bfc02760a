/**
 * Retries with exponential backoff (docs/method.md §0): delay 1 s × 2ⁿ with ±20 % jitter, capped
 * at 60 s; a provider's Retry-After wins. Only ProviderError with `retryable` is retried;
 * anything else (and an abort) passes straight through.
 */
import { ProviderError } from '../errors.js';
import { type Clock, systemClock } from './clock.js';
import { throwIfAborted } from './provider-errors.js';

export interface RetryPolicy {
  /** Total attempts, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Relative jitter: 0.2 = ±20 %. */
  jitter: number;
  /** Whole-call deadline (all attempts and waits), or undefined for none. */
  deadlineMs?: number;
  /** Upper bound on an honoured Retry-After, so a broken header cannot stall a build for days. */
  maxRetryAfterMs: number;
}

/** Build time: 6 attempts. */
export const BUILD_RETRY_POLICY: Readonly<RetryPolicy> = {
  maxAttempts: 6,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  jitter: 0.2,
  maxRetryAfterMs: 600_000,
};

/** Search time: 3 attempts within a 60 s deadline per call. */
export const SEARCH_RETRY_POLICY: Readonly<RetryPolicy> = {
  maxAttempts: 3,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  jitter: 0.2,
  deadlineMs: 60_000,
  maxRetryAfterMs: 60_000,
};

export interface RetryEvent {
  /** The attempt that failed, from 1. */
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  error: ProviderError;
}

export interface RetryOptions {
  clock?: Clock;
  /** Uniform in [0, 1); injectable for reproducible tests. */
  random?: () => number;
  signal?: AbortSignal;
  onRetry?: (event: RetryEvent) => void;
}

/** Backoff before retry number `n` (0 = after the first failure), without Retry-After. */
export function backoffDelay(policy: RetryPolicy, n: number, random: () => number = Math.random): number {
  const base = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** n);
  const factor = 1 + policy.jitter * (2 * random() - 1);
  return Math.min(policy.maxDelayMs, Math.max(0, base * factor));
}

function gaveUp(e: ProviderError, why: string): ProviderError {
  return new ProviderError(
    `${e.message} (${why})`,
    {
      provider: e.provider,
      status: e.status,
      retryable: e.retryable,
      code: e.code,
      retryAfterMs: e.retryAfterMs,
    },
    { cause: e },
  );
}

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable error, or the attempts or the
 * deadline run out. `attempt` receives the remaining deadline (ms) so it can shorten its
 * own timeout.
 */
export async function withRetry<T>(
  attempt: (info: { attempt: number; remainingMs: number | undefined }) => Promise<T>,
  policy: RetryPolicy,
  options: RetryOptions = {},
): Promise<T> {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const started = clock.now();
  const remaining = () =>
    policy.deadlineMs === undefined ? undefined : policy.deadlineMs - (clock.now() - started);
  for (let n = 0; ; n++) {
    throwIfAborted(options.signal);
    try {
      return await attempt({ attempt: n + 1, remainingMs: remaining() });
    } catch (e) {
      throwIfAborted(options.signal);
      if (!(e instanceof ProviderError) || !e.retryable) throw e;
      if (n + 1 >= policy.maxAttempts) {
        throw policy.maxAttempts > 1 ? gaveUp(e, `gave up after ${policy.maxAttempts} attempts`) : e;
      }
      const delayMs =
        e.retryAfterMs !== undefined
          ? Math.min(e.retryAfterMs, policy.maxRetryAfterMs)
          : backoffDelay(policy, n, random);
      const left = remaining();
      if (left !== undefined && delayMs >= left) {
        throw gaveUp(
          e,
          `gave up after ${n + 1} attempt${n === 0 ? '' : 's'}: the ${Math.round((policy.deadlineMs ?? 0) / 1000)} s deadline would pass`,
        );
      }
      options.onRetry?.({ attempt: n + 1, maxAttempts: policy.maxAttempts, delayMs, error: e });
      await clock.sleep(delayMs, options.signal);
    }
  }
}
