/**
 * The retrievals of recently asked questions, least recently used out first.
 *
 * A loaded index never changes (a running engine keeps its snapshot), so a retrieval is a
 * function of the question alone once the provider calls are done: a repeated question
 * (a user asking again, a UI re-rendering, a client retrying) is answered from memory and
 * pays no embedding or decomposition call. Only successful retrievals are kept; answers are
 * never cached (they are a fresh chat call each time).
 *
 * Entries are frozen so that no caller can change what the next caller of the same question
 * gets.
 */
import { InvalidArgumentError } from '../errors.js';
import type { Retrieval } from './retrieve.js';

/** Default capacity: ~20 KB per entry on HotpotQA-sized contexts, so about 20 MB. */
export const DEFAULT_RETRIEVAL_CACHE_SIZE = 1000;

export class RetrievalCache {
  readonly capacity: number;
  readonly #entries = new Map<string, Retrieval>();
  #hits = 0;
  #misses = 0;

  /** `capacity` 0 disables the cache. */
  constructor(capacity: number = DEFAULT_RETRIEVAL_CACHE_SIZE) {
    if (!Number.isSafeInteger(capacity) || capacity < 0) {
      throw new InvalidArgumentError(
        'invalid_argument',
        `retrievalCacheSize must be a non-negative integer, got ${capacity}`,
      );
    }
    this.capacity = capacity;
  }

  get(question: string): Retrieval | undefined {
    const hit = this.#entries.get(question);
    if (hit === undefined) {
      this.#misses++;
      return undefined;
    }
    this.#hits++;
    // Map keeps insertion order: re-inserting makes this the most recently used entry.
    this.#entries.delete(question);
    this.#entries.set(question, hit);
    return hit;
  }

  /** Stores `retrieval` (frozen) and returns it. */
  set(question: string, retrieval: Retrieval): Retrieval {
    if (this.capacity === 0) return retrieval;
    const frozen = freezeRetrieval(retrieval);
    this.#entries.delete(question);
    this.#entries.set(question, frozen);
    if (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
    return frozen;
  }

  get size(): number {
    return this.#entries.size;
  }

  stats(): { hits: number; misses: number; size: number; capacity: number } {
    return { hits: this.#hits, misses: this.#misses, size: this.size, capacity: this.capacity };
  }

  clear(): void {
    this.#entries.clear();
  }
}

function freezeRetrieval(r: Retrieval): Retrieval {
  for (const item of r.items) Object.freeze(item);
  Object.freeze(r.items);
  Object.freeze(r.nodes);
  Object.freeze(r.seeds.hits);
  Object.freeze(r.seeds.matches);
  Object.freeze(r.seeds);
  Object.freeze(r.timings);
  return Object.freeze(r);
}
