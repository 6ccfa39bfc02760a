/**
 * One retrieval per event-loop turn, in the order the questions came in.
 *
 * A retrieval is synchronous CPU work (about half a millisecond). Run straight from the
 * socket's read callback, every request the event loop finds readable in one poll is
 * retrieved back to back before the loop polls again; a request that arrives just after
 * that poll waits for the whole batch, and then, being behind the re-armed sockets in the
 * kernel's ready list, for its place at the end of the next one. Under load that is two
 * batches for a few unlucky requests and one for the rest: the p99 at twice the median.
 * Taking the retrievals from a FIFO, one per turn of the loop (a setImmediate each), lets
 * the loop poll between two of them, so a request joins the queue within one retrieval of
 * arriving and waits only for those that came before it.
 */
/** Callers gone from the front of the queue before they are dropped from its array. */
const COMPACT_AFTER = 1024;

export class TurnQueue {
  #waiting: (() => void)[] = [];
  /** Index in #waiting of the next caller; those before it have had their turn. */
  #head = 0;
  #scheduled = false;

  /** Resolves in a turn of its own, after every earlier caller's turn. */
  turn(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(this.#next);
      }
    });
  }

  /** Callers waiting for their turn. */
  get waiting(): number {
    return this.#waiting.length - this.#head;
  }

  readonly #next = (): void => {
    const resolve = this.#waiting[this.#head++]!;
    if (this.#head === this.#waiting.length) {
      this.#waiting = [];
      this.#head = 0;
      this.#scheduled = false;
    } else {
      // A server under constant load may never drain the queue: the callers already gone
      // are dropped from the front once they are most of it, so it stays the size of the load.
      if (this.#head >= COMPACT_AFTER && this.#head * 2 >= this.#waiting.length) {
        this.#waiting.splice(0, this.#head);
        this.#head = 0;
      }
      setImmediate(this.#next);
    }
    // The caller's continuation (its retrieval) runs in this callback's microtasks.
    resolve();
  };
}
