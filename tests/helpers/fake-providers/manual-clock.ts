/**
 * A Clock driven by the test: `now()` stands still until `advance(ms)` moves it, firing due
 * sleeps in time order and letting the promises they release run in between.
 */
import type { Clock } from '../../../ts/llm/clock.js';

interface Sleeper {
  at: number;
  seq: number;
  resolve: () => void;
}

export class ManualClock implements Clock {
  #now = 0;
  #seq = 0;
  #sleepers: Sleeper[] = [];

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const s: Sleeper = { at: this.#now + Math.max(0, ms), seq: this.#seq++, resolve };
      this.#sleepers.push(s);
      signal?.addEventListener(
        'abort',
        () => {
          this.#sleepers = this.#sleepers.filter((x) => x !== s);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  after(ms: number, fn: () => void): () => void {
    const ctl = new AbortController();
    this.sleep(ms, ctl.signal).then(fn, () => {});
    return () => ctl.abort();
  }

  /** Pending sleeps (for assertions). */
  get pending(): number {
    return this.#sleepers.length;
  }

  /** Moves time forward by `ms`, waking sleepers in order and settling promises after each. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await settle();
    for (;;) {
      this.#sleepers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.#sleepers[0];
      if (!next || next.at > target) break;
      this.#sleepers.shift();
      this.#now = next.at;
      next.resolve();
      await settle();
    }
    this.#now = target;
    await settle();
  }
}

/** Lets queued promise callbacks run (several turns, for chains of awaits). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
  await new Promise((r) => setImmediate(r));
}
