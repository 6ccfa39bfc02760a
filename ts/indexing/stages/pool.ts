/**
 * Running many model calls concurrently while applying their results in input order
 * (docs/method.md §0 "input order"). A fixed pool of workers takes items in order; results land
 * in an array indexed by input position, so completion order never shows. The pool stops
 * taking new items as soon as a stop is requested or an item fails, waits for the items in
 * flight (their replies still reach the response cache), then reports.
 */
import { inFlightCap } from '../../llm/rate-limiter.js';
import { InterruptedError, type StopSignal } from './interrupt.js';

interface PoolOptions {
  /** Workers; at most this many items run at once. */
  concurrency: number;
  stop: StopSignal;
  /** Called after each item completes, with the number completed so far. */
  onProgress?: (done: number) => void;
}

/**
 * Runs `fn` over `items` and returns the results in input order. The first failure (in
 * input order among those that ran) is thrown once in-flight items have settled; an
 * interruption throws InterruptedError.
 */
export async function mapInOrder<T, R>(
  items: readonly T[],
  fn: (item: T, index: number) => Promise<R>,
  options: PoolOptions,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  const errors: { index: number; error: unknown }[] = [];
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && errors.length === 0 && !options.stop.stopping) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!, i);
      } catch (error) {
        errors.push({ index: i, error });
      }
      done++;
      options.onProgress?.(done);
    }
  };
  const workers = Math.max(1, Math.min(options.concurrency, items.length));
  await Promise.all(Array.from({ length: workers }, worker));
  if (options.stop.stopping) throw new InterruptedError(options.stop.reason);
  if (errors.length > 0) {
    errors.sort((a, b) => a.index - b.index);
    throw errors[0]!.error;
  }
  return results;
}

/**
 * Concurrency for a provider section: its in-flight cap (`max_in_flight`, else `rate_limit`
 * rounded down; the same number as its rate limiter), within sane bounds. More workers than
 * that would only wait in the limiter's queue.
 */
export function poolSize(rateLimit: number, local: boolean, maxInFlight: number | null = null): number {
  if (local) return 8;
  return Math.min(256, inFlightCap(rateLimit, maxInFlight));
}
