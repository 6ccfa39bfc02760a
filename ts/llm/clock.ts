/**
 * Time as the limiter, retries and timeouts see it. Injectable so tests can drive time
 * by hand instead of waiting for it.
 */
import { setTimeout as delay } from 'node:timers/promises';

export interface Clock {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `fn` after `ms` unless the returned function is called first. For the timers most
   * calls cancel (a request's timeout, the limiter's wake-up): a cancelled `sleep` costs an
   * AbortController, an abort event and a rejected promise with its error.
   */
  after(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  sleep: async (ms, signal) => {
    try {
      await delay(Math.max(0, ms), undefined, signal ? { signal } : undefined);
    } catch (e) {
      // The abort's own reason (e.g. the build's InterruptedError), as ManualClock gives it,
      // not the timer's generic AbortError.
      throw signal?.aborted && signal.reason !== undefined ? signal.reason : e;
    }
  },
  after: (ms, fn) => {
    const timer = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(timer);
  },
};
