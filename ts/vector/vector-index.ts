/**
 * The vector index (docs/method.md §3.9): an HNSW graph built by crates/noderag_hnsw
 * (parallel, deterministic construction: the same vectors give the same file on any number
 * of threads), behind the native `HnswIndex` class (bindings/src/hnsw.rs). Vectors go in as one flat
 * Float32Array (rows × dim); results come back as parallel typed arrays, best first,
 * ordered by (distance, label).
 *
 * Sync or async by cost: searches, small `add`s, `retire` and `layer0Edges` are sync;
 * `build`, `addBatch`, `save` and `load` run off the main thread.
 */
import { InvalidArgumentError } from '../errors.js';
import { callNative, callNativeAsync, type NativeAddon, native } from '../native.js';

type NativeHnswIndex = InstanceType<NativeAddon['HnswIndex']>;

/** `l2`: squared Euclidean distance. `cosine`: 1 − cos (vectors normalised at insert and query). */
export type VectorSpace = 'l2' | 'cosine';

export interface VectorIndexParams {
  space: VectorSpace;
  dim: number;
  /** Links per node on the upper layers, 2..=256; layer 0 keeps up to 2·m. */
  m: number;
  efConstruction: number;
}

/** Top-k hits, best first: `labels[i]` is at `distances[i]`. */
export interface VectorSearchResult {
  labels: Uint32Array;
  distances: Float32Array;
}

/** Directed layer-0 links `src[i] → dst[i]`, sorted by `src` (the similarity edges). */
export interface LayerZeroEdges {
  src: Uint32Array;
  dst: Uint32Array;
}

/** What an index file says about itself (read without loading the index). */
export interface VectorIndexFileInfo extends VectorIndexParams {
  count: number;
  library: string;
  libraryVersion: string;
}

export interface LoadOptions {
  /** The dimension the caller's vectors have; another one is an IndexFileError (NATIVE_DIMENSION_MISMATCH). */
  expectedDim: number;
  /** When given, the number of stored vectors must match (e.g. the rows of id_map). */
  expectedCount?: number;
  /**
   * Load it so that vectors can be added and the index saved again (a build). Without it
   * (search) the file is read in place: nothing is written, no free disk space is needed,
   * and `add`, `addBatch` and `save` fail with InvalidArgumentError.
   */
  forUpdate?: boolean;
}

const U32_MAX = 0xffff_ffff;

function checkCount(name: string, value: number, min = 0): number {
  if (!Number.isInteger(value) || value < min || value > U32_MAX) {
    throw new InvalidArgumentError(
      'invalid_argument',
      `${name} must be an integer in ${min}..=${U32_MAX}, got ${value}`,
    );
  }
  return value;
}

function checkParams(p: VectorIndexParams): VectorIndexParams {
  checkCount('dim', p.dim, 1);
  checkCount('m', p.m);
  checkCount('efConstruction', p.efConstruction);
  return p;
}

function toSpace(s: string): VectorSpace {
  return s === 'cosine' ? 'cosine' : 'l2';
}

export class VectorIndex {
  readonly #native: NativeHnswIndex;

  private constructor(handle: NativeHnswIndex) {
    this.#native = handle;
  }

  /** An empty index. */
  static create(params: VectorIndexParams): VectorIndex {
    const p = checkParams(params);
    return new VectorIndex(callNative(() => native.HnswIndex.create(p.space, p.dim, p.m, p.efConstruction)));
  }

  /** Builds an index from `vectors` (rows × dim), labels 0..n. Off the main thread. */
  static async build(params: VectorIndexParams, vectors: Float32Array): Promise<VectorIndex> {
    const p = checkParams(params);
    const handle = await callNativeAsync(() =>
      native.HnswIndex.build(p.space, p.dim, p.m, p.efConstruction, vectors),
    );
    return new VectorIndex(handle);
  }

  /**
   * Loads a file written by `save`, validated in full first (both SHA-256 checksums).
   * Missing, truncated or damaged files and another dimension are IndexFileError (codes
   * NATIVE_IO, NATIVE_CORRUPT_FILE, NATIVE_DIMENSION_MISMATCH) whose message names the file.
   */
  static async load(path: string, options: LoadOptions): Promise<VectorIndex> {
    checkCount('expectedDim', options.expectedDim, 1);
    if (options.expectedCount !== undefined) checkCount('expectedCount', options.expectedCount);
    const handle = await callNativeAsync(() =>
      native.HnswIndex.load(path, options.expectedDim, options.expectedCount, options.forUpdate === true),
    );
    return new VectorIndex(handle);
  }

  /** Reads an index file's header (cheap; checksums are verified only by `load`). */
  static readHeader(path: string): VectorIndexFileInfo {
    const h = callNative(() => native.HnswIndex.readHeader(path));
    return {
      space: toSpace(h.space),
      dim: h.dim,
      m: h.m,
      efConstruction: h.efConstruction,
      count: h.count,
      library: h.library,
      libraryVersion: h.libraryVersion,
    };
  }

  /** Appends vectors (rows × dim); returns the first new label. Sync: for a few vectors. */
  add(vectors: Float32Array): number {
    return callNative(() => this.#native.add(vectors));
  }

  /**
   * Appends many vectors off the main thread; resolves to the first new label. With
   * `deferView`, the search structures are not remade after the batch (an insertion split
   * into many batches pays for that once): the next call without it, e.g.
   * `addBatch(new Float32Array(0))`, or the next search remakes them. Batches give the
   * same graph as one call with all the vectors (vectors that do not fill the index's own
   * batch of 256 wait, unlinked, until then or until `save`).
   */
  addBatch(vectors: Float32Array, options: { deferView?: boolean } = {}): Promise<number> {
    return callNativeAsync(() => this.#native.addBatch(vectors, options.deferView === true));
  }

  /**
   * Links the vectors still waiting for the index's own batch of 256 (added with `deferView`),
   * off the main thread, without remaking the search structures: what `save` does first.
   */
  linkPending(): Promise<void> {
    return callNativeAsync(() => this.#native.linkPending());
  }

  /**
   * The `k` nearest live vectors, best first; `k` is clamped to the number of live vectors
   * and the beam is max(efSearch, k). Small indexes are searched exactly.
   */
  search(query: Float32Array, k: number, efSearch: number): VectorSearchResult {
    checkCount('k', k);
    checkCount('efSearch', efSearch);
    const r = callNative(() => this.#native.search(query, k, efSearch));
    return { labels: r.labels, distances: r.distances };
  }

  /** Exact search over the stored vectors (same shape as `search`). */
  searchExact(query: Float32Array, k: number): VectorSearchResult {
    checkCount('k', k);
    const r = callNative(() => this.#native.searchExact(query, k));
    return { labels: r.labels, distances: r.distances };
  }

  /** Retired labels are never returned by searches (docs/method.md §3.9). Not saved in the file. */
  retire(labels: Uint32Array | readonly number[]): void {
    const arr =
      labels instanceof Uint32Array ? labels : Uint32Array.from(labels, (l) => checkCount('label', l));
    callNative(() => this.#native.retire(arr));
  }

  /**
   * Layer-0 neighbour lists as directed (src, dst) label pairs. Of an index that can grow,
   * read from its graph (after `save`, without making the search view).
   */
  layer0Edges(): LayerZeroEdges {
    const e = callNative(() => this.#native.layer0Edges());
    return { src: e.src, dst: e.dst };
  }

  /**
   * Threads that link added vectors (default: the available parallelism). Changes only the
   * speed: the graph and the saved bytes are the same for any value.
   */
  setBuildThreads(threads: number): void {
    checkCount('threads', threads, 1);
    callNative(() => this.#native.setBuildThreads(threads));
  }

  /** Writes the index atomically (temp file in the same folder, fsync, rename). */
  save(path: string): Promise<void> {
    return callNativeAsync(() => this.#native.save(path));
  }

  /** Stored vectors, retired ones included. */
  get size(): number {
    return callNative(() => this.#native.len);
  }

  get retiredCount(): number {
    return callNative(() => this.#native.retiredCount);
  }

  get params(): VectorIndexParams {
    return callNative(() => ({
      space: toSpace(this.#native.space),
      dim: this.#native.dim,
      m: this.#native.m,
      efConstruction: this.#native.efConstruction,
    }));
  }

  /** Frees the native index. Idempotent; any later call throws ClosedError. */
  close(): void {
    callNative(() => this.#native.close());
  }
}

/**
 * Exact (brute-force) search of `query` over `vectors` (rows × dim, row i = label i),
 * best first; `k` is clamped to the number of rows. Sync, O(rows × dim).
 */
export function exactSearch(
  vectors: Float32Array,
  dim: number,
  space: VectorSpace,
  query: Float32Array,
  k: number,
): VectorSearchResult {
  checkCount('dim', dim, 1);
  checkCount('k', k);
  const r = callNative(() => native.exactSearch(vectors, dim, space, query, k));
  return { labels: r.labels, distances: r.distances };
}
