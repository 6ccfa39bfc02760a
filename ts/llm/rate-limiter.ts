/**
 * The per-section rate limit of method.md §3.10: at most `rate_limit` requests started in any
 * one-second window and at most `rate_limit` in flight, shared by every caller holding the
 * same limiter (all stages of a build, all requests of a server).
 *
 * A token bucket whose tokens each come back exactly one window after they were taken (a
 * sliding-window log): unlike a refilling bucket, a full bucket plus its refill can never
 * put 2 × rate requests into one second. Fractional rates keep the same average: rate 2.5
 * allows 2 starts per 0.8 s, rate 0.5 one start per 2 s. Waiters are served first come,
 * first served; an aborted waiter leaves the queue at once.
 */
import { type Clock, systemClock } from './clock.js';
import { abortReason } from './provider-errors.js';

export type Release = () => void;

interface Waiter {
  resolve: (release: Release) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

export class RateLimiter {
  /** Starts allowed per window, and the cap on requests in flight. */
  readonly permits: number;
  /** Window length in ms: `permits / rate` seconds. */
  readonly windowMs: number;
  readonly #clock: Clock;
  /** Start times of the last `permits` requests, oldest first. */
  readonly #starts: number[] = [];
  readonly #queue: Waiter[] = [];
  #inFlight = 0;
  #timer: AbortController | undefined;

  constructor(rate: number, clock: Clock = systemClock) {
    if (!(rate > 0) || !Number.isFinite(rate))
      throw new RangeError(`rate must be a positive number, got ${rate}`);
    this.permits = Math.max(1, Math.floor(rate));
    this.windowMs = (this.permits / rate) * 1000;
    this.#clock = clock;
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
      if (this.#inFlight >= this.permits) return; // a release pumps again
      const now = this.#clock.now();
      while (this.#starts.length > 0 && now - (this.#starts[0] as number) >= this.windowMs)
        this.#starts.shift();
      if (this.#starts.length >= this.permits) {
        this.#wakeAt((this.#starts[0] as number) + this.windowMs - now);
        return;
      }
      const waiter = this.#queue.shift() as Waiter;
      if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
      this.#starts.push(now);
      this.#inFlight++;
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
    const ctl = new AbortController();
    this.#timer = ctl;
    this.#clock.sleep(Math.max(1, Math.ceil(delayMs)), ctl.signal).then(
      () => {
        if (this.#timer === ctl) this.#timer = undefined;
        this.#pump();
      },
      () => {
        // cancelled: nobody is waiting any more
      },
    );
  }

  #cancelTimer(): void {
    if (this.#timer) {
      this.#timer.abort();
      this.#timer = undefined;
    }
  }
}
