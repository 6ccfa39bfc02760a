/**
 * The per-section rate limit of docs/method.md §3.10: at most `rate_limit` requests started in any
 * one-second window and at most `max_in_flight` (default `rate_limit`) in flight, shared by every
 * caller holding the same limiter (all stages of a build, all requests of a server).
 *
 * Three rules decide when the next request may start:
 *
 * 1. Pacing: while requests are waiting, starts follow a grid of one per 1/rate s. A start
 *    that comes late (timer granularity, a busy event loop) keeps the grid and the next
 *    ones catch up, so the average rate does not drift down; a request that finds nobody
 *    waiting restarts the grid at its own arrival (an idle spell earns no burst).
 * 2. A hard cap: a sliding-window log of the last `permits` starts, so no window of
 *    `permits / rate` seconds ever holds more than `permits` starts, whatever the timers do.
 * 3. In flight: at most `maxInFlight` requests between start and release. By default that is
 *    `permits`; `max_in_flight` in the config sets it on its own, for servers that answer one
 *    or two requests at a time (Ollama, llama.cpp) or that take long over each.
 *
 * A request's timeout (CachedProvider) starts only once it leaves this queue, so time spent
 * waiting here never counts against `request_timeout`.
 *
 * Why pacing rather than a bucket that lets `rate` requests go at once: measured at the
 * server (bench/providers.ts), synchronised waves of `rate` requests exactly one second
 * apart arrive with different network delays, and a provider counting per second then sees
 * up to twice the limit in one second. Paced starts arrive as a steady stream.
 *
 * Fractional rates keep the same average: rate 2.5 = one start per 0.4 s, at most 2 per
 * 0.8 s; rate 0.5 = one per 2 s. Waiters are served first come, first served; an aborted
 * waiter leaves the queue at once.
 */
import { type Clock, systemClock } from './clock.js';
import { abortReason } from './provider-errors.js';

export type Release = () => void;

/** What CachedProvider needs from a limiter (benchmarks plug in other designs). */
export interface Limiter {
  run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
}

interface Waiter {
  resolve: (release: Release) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/**
 * The most requests in flight for a section: `max_in_flight` when set, else `rate_limit`
 * rounded down (at least 1). The build's worker pools use the same number.
 */
export function inFlightCap(rate: number, maxInFlight?: number | null): number {
  if (maxInFlight !== undefined && maxInFlight !== null) {
    if (!Number.isInteger(maxInFlight) || maxInFlight < 1)
      throw new RangeError(`maxInFlight must be an integer ≥ 1 or null, got ${maxInFlight}`);
    return maxInFlight;
  }
  return Math.max(1, Math.floor(rate));
}

export class RateLimiter implements Limiter {
  /** Starts allowed per window. */
  readonly permits: number;
  /** The cap on requests in flight (`permits` unless set on its own). */
  readonly maxInFlight: number;
  /** Window length in ms: `permits / rate` seconds. */
  readonly windowMs: number;
  /** Pacing interval in ms: 1 / rate seconds. */
  readonly intervalMs: number;
  readonly #clock: Clock;
  /** Start times of the last `permits` requests, oldest first. */
  readonly #starts: number[] = [];
  readonly #queue: Waiter[] = [];
  #inFlight = 0;
  /** Earliest start allowed by the pacing grid. */
  #nextSlot = Number.NEGATIVE_INFINITY;
  /** Cancels the pending wake-up, if any. */
  #timer: (() => void) | undefined;

  readonly #onStart: ((at: number) => void) | undefined;

  /**
   * `onStart` is told the clock time of every start (metrics, benchmarks); `maxInFlight`
   * null or absent = `permits`.
   */
  constructor(
    rate: number,
    clock: Clock = systemClock,
    onStart?: (at: number) => void,
    maxInFlight?: number | null,
  ) {
    if (!(rate > 0) || !Number.isFinite(rate))
      throw new RangeError(`rate must be a positive number, got ${rate}`);
    this.permits = Math.max(1, Math.floor(rate));
    this.maxInFlight = inFlightCap(rate, maxInFlight);
    this.windowMs = (this.permits / rate) * 1000;
    this.intervalMs = 1000 / rate;
    this.#clock = clock;
    this.#onStart = onStart;
  }

  get inFlight(): number {
    return this.#inFlight;
  }
  get waiting(): number {
    return this.#queue.length;
  }

  /** Waits for a start slot and an in-flight slot; call the returned function when done. */
  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          const i = this.#queue.indexOf(waiter);
          if (i >= 0) this.#queue.splice(i, 1);
          reject(abortReason(signal));
          this.#pump();
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      // Nobody waiting and the grid in the past: an idle spell, restart the grid now.
      if (this.#queue.length === 0) this.#nextSlot = Math.max(this.#nextSlot, this.#clock.now());
      this.#queue.push(waiter);
      this.#pump();
    });
  }

  /** Runs `fn` inside one permit. */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      if (this.#inFlight >= this.maxInFlight) return; // a release pumps again
      const now = this.#clock.now();
      while (this.#starts.length > 0 && now - (this.#starts[0] as number) >= this.windowMs)
        this.#starts.shift();
      if (this.#starts.length >= this.permits) {
        this.#wakeAt((this.#starts[0] as number) + this.windowMs - now);
        return;
      }
      if (now < this.#nextSlot) {
        this.#wakeAt(this.#nextSlot - now);
        return;
      }
      // Stay on the grid even when late: the next starts catch up (the cap above still holds).
      this.#nextSlot += this.intervalMs;
      const waiter = this.#queue.shift() as Waiter;
      if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
      this.#starts.push(now);
      this.#inFlight++;
      this.#onStart?.(now);
      let released = false;
      waiter.resolve(() => {
        if (released) return;
        released = true;
        this.#inFlight--;
        this.#pump();
      });
    }
    this.#cancelTimer();
  }

  #wakeAt(delayMs: number): void {
    if (this.#timer) return; // already waiting for the oldest start to leave the window
    this.#timer = this.#clock.after(Math.max(0.5, delayMs), () => {
      this.#timer = undefined;
      this.#pump();
    });
  }

  /** Nobody is waiting any more. */
  #cancelTimer(): void {
    this.#timer?.();
    this.#timer = undefined;
  }
}
