/**
 * Which worker of a `--workers N` server gets the next connection: the one with the fewest
 * open connections, ties taken in turn.
 *
 * node:cluster's own round robin hands a connection to whichever worker acknowledged its
 * last one first, so a burst of keep-alive connections can split unevenly (32/18 of 50
 * was seen), and the fuller worker's requests wait longer for the whole life of those
 * connections: the tail latency of the server is that of its fullest worker.
 */
export class LeastConnections<W> {
  readonly #open = new Map<W, number>();
  /** Where the search for a least-loaded worker starts: after the last one picked. */
  #start = 0;

  add(worker: W): void {
    if (!this.#open.has(worker)) this.#open.set(worker, 0);
  }

  remove(worker: W): void {
    this.#open.delete(worker);
  }

  /** The worker to take the next connection (counted as open), or undefined when none. */
  pick(): W | undefined {
    const workers = [...this.#open.keys()];
    let best: W | undefined;
    let bestOpen = Number.POSITIVE_INFINITY;
    let bestAt = 0;
    for (let i = 0; i < workers.length; i++) {
      const at = (this.#start + i) % workers.length;
      const open = this.#open.get(workers[at]!)!;
      if (open < bestOpen) {
        best = workers[at];
        bestOpen = open;
        bestAt = at;
      }
    }
    if (best === undefined) return undefined;
    this.#open.set(best, bestOpen + 1);
    this.#start = bestAt + 1;
    return best;
  }

  /** A connection of `worker` closed (or never reached it). */
  closed(worker: W): void {
    const open = this.#open.get(worker);
    if (open !== undefined && open > 0) this.#open.set(worker, open - 1);
  }

  /** Open connections per worker, in the order they were added. */
  counts(): number[] {
    return [...this.#open.values()];
  }
}
