/**
 * Sets of node indexes for the per-question retrieval, without a Set or Map per question.
 *
 * A retrieval is synchronous, so one set of buffers per loaded index serves every question
 * (no two retrievals interleave on the JS thread). Membership is an epoch stamp: `clear()`
 * costs one increment, not a pass over the node count, and a question touches only the
 * nodes it marks.
 */

export class NodeMarks {
  readonly #stamp: Uint32Array;
  #epoch = 1;

  constructor(nodeCount: number) {
    this.#stamp = new Uint32Array(nodeCount);
  }

  /** Empties the set. */
  clear(): void {
    this.#epoch++;
    if (this.#epoch === 0x1_0000_0000) {
      // After 2³² clears the stamps would repeat: start again from a zeroed array.
      this.#stamp.fill(0);
      this.#epoch = 1;
    }
  }

  has(node: number): boolean {
    return this.#stamp[node] === this.#epoch;
  }

  /** Adds `node`; false when it was already in the set. */
  add(node: number): boolean {
    if (this.#stamp[node] === this.#epoch) return false;
    this.#stamp[node] = this.#epoch;
    return true;
  }
}

/**
 * A number per marked node (the vector distance of the question's hits): what a
 * `Map<number, number>` gave, on the index's reusable arrays.
 */
export class NodeValues {
  readonly #marks: NodeMarks;
  readonly #values: Float64Array;

  constructor(nodeCount: number) {
    this.#marks = new NodeMarks(nodeCount);
    this.#values = new Float64Array(nodeCount);
  }

  clear(): void {
    this.#marks.clear();
  }

  set(node: number, value: number): void {
    this.#marks.add(node);
    this.#values[node] = value;
  }

  get(node: number): number | undefined {
    return this.#marks.has(node) ? this.#values[node] : undefined;
  }
}

/** Marks and counters that a retrieval on one index reuses (see the module comment). */
export interface RetrievalScratch {
  /** Text nodes the context draws on (bridge.ts). */
  drawnOn: NodeMarks;
  /** Bridge entities already taken. */
  entities: NodeMarks;
  /** Candidate passages, with `links[node]` valid for the marked ones. */
  candidates: NodeMarks;
  links: Uint32Array;
  /** Vector distance of the nodes the question's vector search returned (retrieve.ts). */
  near: NodeValues;
  /** The search list of the selection (select.ts selectRanked). */
  listed: NodeMarks;
  /** Text nodes in the search list (retrieve.ts). */
  inContext: NodeMarks;
}

const scratchOf = new WeakMap<object, RetrievalScratch>();

/** The scratch of the index `owner` with `nodeCount` nodes, made on first use. */
export function retrievalScratch(owner: object, nodeCount: number): RetrievalScratch {
  let s = scratchOf.get(owner);
  if (!s) {
    s = {
      drawnOn: new NodeMarks(nodeCount),
      entities: new NodeMarks(nodeCount),
      candidates: new NodeMarks(nodeCount),
      links: new Uint32Array(nodeCount),
      near: new NodeValues(nodeCount),
      listed: new NodeMarks(nodeCount),
      inContext: new NodeMarks(nodeCount),
    };
    scratchOf.set(owner, s);
  }
  return s;
}
