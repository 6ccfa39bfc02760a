/**
 * Stopping a build on SIGINT/SIGTERM (docs/method.md §4.2 step 7): on the first signal no new
 * model request starts and in-flight ones get up to 10 s to finish (so their replies reach
 * the response cache); then they are aborted. "No new request" includes the next attempt of
 * a call waiting out a retry backoff and a call waiting for a rate-limit permit: both end at
 * once (`noNewRequests`), so a stop takes as long as the requests really in flight. Stages
 * poll `stopping` between steps and before their commit; the run loop records INTERRUPTED
 * and exits 130.
 */
import { setMaxListeners } from 'node:events';
import { NodeRagError } from '../../errors.js';

const IN_FLIGHT_GRACE_MS = 10_000;

/** A stage stopped because the build was interrupted. */
export class InterruptedError extends NodeRagError {
  constructor(message = 'interrupted') {
    super('interrupted', message);
  }
}

export class StopSignal {
  #stopping = false;
  #reason = 'interrupted';
  readonly #abort = new AbortController();
  readonly #starts = new AbortController();
  #timer: NodeJS.Timeout | undefined;

  constructor() {
    // Every request in flight listens to these signals; hundreds at once is normal here.
    setMaxListeners(0, this.#abort.signal, this.#starts.signal);
  }

  /** True once a stop was requested: start nothing new. */
  get stopping(): boolean {
    return this.#stopping;
  }

  /** Aborted when the grace period for in-flight requests is over. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Aborted as soon as a stop is requested: nothing waiting to send a request sends it. */
  get noNewRequests(): AbortSignal {
    return this.#starts.signal;
  }

  /** The options of a model call made by a stage. */
  get callOptions(): { signal: AbortSignal; noNewRequests: AbortSignal } {
    return { signal: this.#abort.signal, noNewRequests: this.#starts.signal };
  }

  get reason(): string {
    return this.#reason;
  }

  /** Request a stop; in-flight work is aborted after `graceMs`. */
  stop(reason: string, graceMs = IN_FLIGHT_GRACE_MS): void {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#reason = reason;
    this.#starts.abort(new InterruptedError(reason));
    this.#timer = setTimeout(() => this.#abort.abort(new InterruptedError(reason)), graceMs);
    this.#timer.unref();
  }

  /** Throw InterruptedError when a stop was requested (call between steps). */
  check(): void {
    if (this.#stopping) throw new InterruptedError(this.#reason);
  }

  dispose(): void {
    if (this.#timer) clearTimeout(this.#timer);
  }
}
