import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../ts/errors.js';
import { parseRetryAfter } from '../../ts/llm/provider-errors.js';
import { RateLimiter } from '../../ts/llm/rate-limiter.js';
import { BUILD_RETRY_POLICY, backoffDelay, SEARCH_RETRY_POLICY, withRetry } from '../../ts/llm/retry.js';
import { ManualClock, settle } from '../helpers/fake-providers/manual-clock.js';

/** Starts `n` tasks that each take a permit, record when they got it and hold it `holdMs`. */
function startTasks(limiter: RateLimiter, clock: ManualClock, n: number, holdMs: number) {
  const starts: number[] = [];
  const done = Array.from({ length: n }, () =>
    limiter.run(async () => {
      starts.push(clock.now());
      await clock.sleep(holdMs);
    }),
  );
  return { starts, done: Promise.all(done) };
}

/** Most starts inside any half-open window [t, t + w). */
function maxInWindow(starts: number[], w: number): number {
  let best = 0;
  for (let i = 0; i < starts.length; i++) {
    const t = starts[i] as number;
    best = Math.max(best, starts.filter((s) => s >= t && s < t + w).length);
  }
  return best;
}

describe('RateLimiter', () => {
  it('paces starts one per 1/rate s, so no one-second window holds more than `rate`', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter(10, clock);
    const { starts, done } = startTasks(limiter, clock, 35, 50);
    await clock.advance(5000);
    await done;
    expect(starts).toHaveLength(35);
    expect(starts.slice(0, 4)).toEqual([0, 100, 200, 300]);
    expect(maxInWindow(starts, 1000)).toBe(10);
    expect(starts.at(-1)).toBe(3400);
  });

  it('restarts the pacing grid after an idle spell (no burst credit)', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter(4, clock);
    const first = startTasks(limiter, clock, 2, 0);
    await clock.advance(10_000);
    await first.done;
    const second = startTasks(limiter, clock, 3, 0);
    await clock.advance(2000);
    await second.done;
    expect(first.starts).toEqual([0, 250]);
    expect(second.starts).toEqual([10_000, 10_250, 10_500]);
  });

  it('caps requests in flight at `rate` even when the window has room', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter(4, clock);
    let peak = 0;
    const tasks = Array.from({ length: 12 }, () =>
      limiter.run(async () => {
        peak = Math.max(peak, limiter.inFlight);
        await clock.sleep(3000); // longer than the window: in-flight is the binding limit
      }),
    );
    await clock.advance(1000);
    expect(limiter.inFlight).toBe(4);
    expect(limiter.waiting).toBe(8);
    await clock.advance(1000);
    expect(limiter.inFlight).toBe(4); // the window has room, but none finished
    expect(limiter.waiting).toBe(8);
    await clock.advance(8000);
    await Promise.all(tasks);
    expect(peak).toBe(4);
  });

  it('handles fractional rates with the same average', () => {
    expect(new RateLimiter(2.5).permits).toBe(2);
    expect(new RateLimiter(2.5).windowMs).toBeCloseTo(800);
    expect(new RateLimiter(2.5).intervalMs).toBeCloseTo(400);
    expect(new RateLimiter(0.5).permits).toBe(1);
    expect(new RateLimiter(0.5).windowMs).toBeCloseTo(2000);
    expect(() => new RateLimiter(0)).toThrow(RangeError);
  });

  it('serves waiters first come, first served', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter(1, clock);
    const order: number[] = [];
    const all = [0, 1, 2].map((i) => limiter.run(async () => void order.push(i)));
    await clock.advance(3000);
    await Promise.all(all);
    expect(order).toEqual([0, 1, 2]);
  });

  it('an aborted waiter leaves the queue and rejects with the abort reason', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter(1, clock);
    const first = limiter.run(() => clock.sleep(100));
    const ctl = new AbortController();
    const second = limiter.run(async () => 'ran', ctl.signal);
    await settle();
    expect(limiter.waiting).toBe(1);
    ctl.abort(new Error('stop'));
    await expect(second).rejects.toThrow('stop');
    expect(limiter.waiting).toBe(0);
    await clock.advance(100);
    await first;
  });
});

function retryable(status = 503, retryAfterMs?: number) {
  return new ProviderError(`provider openai returned HTTP ${status}`, {
    provider: 'openai',
    status,
    retryable: true,
    retryAfterMs,
  });
}

describe('withRetry', () => {
  it('backs off 1 s × 2ⁿ with ±20 % jitter, capped at 60 s', () => {
    const p = BUILD_RETRY_POLICY;
    expect(backoffDelay(p, 0, () => 0.5)).toBe(1000);
    expect(backoffDelay(p, 3, () => 0.5)).toBe(8000);
    expect(backoffDelay(p, 0, () => 0)).toBeCloseTo(800);
    expect(backoffDelay(p, 0, () => 0.999999)).toBeCloseTo(1200, 0);
    expect(backoffDelay(p, 10, () => 0.999999)).toBe(60_000);
  });

  it('recovers after retryable failures, waiting the backoff between attempts', async () => {
    const clock = new ManualClock();
    const attempts: number[] = [];
    const result = withRetry(
      async () => {
        attempts.push(clock.now());
        if (attempts.length < 3) throw retryable();
        return 'ok';
      },
      BUILD_RETRY_POLICY,
      { clock, random: () => 0.5 },
    );
    await clock.advance(10_000);
    await expect(result).resolves.toBe('ok');
    expect(attempts).toEqual([0, 1000, 3000]);
  });

  it('Retry-After wins over the backoff', async () => {
    const clock = new ManualClock();
    const attempts: number[] = [];
    const result = withRetry(
      async () => {
        attempts.push(clock.now());
        if (attempts.length === 1) throw retryable(429, 7000);
        return 'ok';
      },
      BUILD_RETRY_POLICY,
      { clock, random: () => 0.5 },
    );
    await clock.advance(8000);
    await result;
    expect(attempts).toEqual([0, 7000]);
  });

  it('gives up after maxAttempts with a clear message', async () => {
    const clock = new ManualClock();
    let n = 0;
    const events: number[] = [];
    const result = withRetry(
      async () => {
        n++;
        throw retryable(503);
      },
      BUILD_RETRY_POLICY,
      { clock, random: () => 0.5, onRetry: (e) => events.push(e.delayMs) },
    );
    const settled = result.catch((e: unknown) => e);
    await clock.advance(200_000);
    const err = (await settled) as ProviderError;
    expect(err).toBeInstanceOf(ProviderError);
    expect(n).toBe(6);
    expect(events).toEqual([1000, 2000, 4000, 8000, 16000]);
    expect(err.message).toBe('provider openai returned HTTP 503 (gave up after 6 attempts)');
    expect(err.status).toBe(503);
  });

  it('does not retry non-retryable errors or foreign errors', async () => {
    let n = 0;
    const auth = new ProviderError('authentication failed', {
      provider: 'openai',
      status: 401,
      retryable: false,
    });
    await expect(
      withRetry(async () => {
        n++;
        throw auth;
      }, BUILD_RETRY_POLICY),
    ).rejects.toBe(auth);
    expect(n).toBe(1);
    await expect(
      withRetry(async () => {
        throw new TypeError('bug');
      }, BUILD_RETRY_POLICY),
    ).rejects.toThrow(TypeError);
  });

  it('search policy: 3 attempts, and stops early when the 60 s deadline would pass', async () => {
    const clock = new ManualClock();
    let n = 0;
    const result = withRetry(
      async ({ remainingMs }) => {
        n++;
        expect(remainingMs).toBeLessThanOrEqual(60_000);
        throw retryable(429, 45_000);
      },
      SEARCH_RETRY_POLICY,
      { clock },
    ).catch((e: unknown) => e as ProviderError);
    await clock.advance(120_000);
    const err = await result;
    // Waits 45 s once; a second 45 s wait would pass the deadline.
    expect(n).toBe(2);
    expect(err.message).toMatch(/gave up after 2 attempts: the 60 s deadline would pass/);
  });

  it('an abort during the backoff rejects with the abort reason', async () => {
    const clock = new ManualClock();
    const ctl = new AbortController();
    const result = withRetry(
      async () => {
        throw retryable();
      },
      BUILD_RETRY_POLICY,
      { clock, signal: ctl.signal },
    ).catch((e: unknown) => e);
    await settle();
    ctl.abort(new Error('cancelled'));
    expect(((await result) as Error).message).toBe('cancelled');
  });
});

describe('parseRetryAfter', () => {
  const h = (o: Record<string, string>) => new Headers(o);
  it('reads seconds, HTTP dates and retry-after-ms', () => {
    expect(parseRetryAfter(h({ 'retry-after': '3' }))).toBe(3000);
    expect(parseRetryAfter(h({ 'retry-after': '0.5' }))).toBe(500);
    expect(parseRetryAfter(h({ 'retry-after-ms': '250', 'retry-after': '3' }))).toBe(250);
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter(h({ 'retry-after': 'Wed, 01 Jan 2025 00:00:10 GMT' }), now)).toBe(10_000);
    expect(parseRetryAfter(h({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(parseRetryAfter(h({}))).toBeUndefined();
  });
});
