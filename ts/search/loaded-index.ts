/**
 * An index loaded for search (docs/method.md §6.1): node ids, types and texts by dense index,
 * the native search graph (base + similarity edges), the vector index with retired labels
 * excluded, and the phrase matcher over entity names and titles. Immutable once built, so
 * any number of queries can use it at once; `close()` frees the native memory.
 *
 * The arrays come from cache/search_graph.bin when it is current (ts/index-io/graph-snapshot.ts:
 * a read and a validation, ids and texts made strings only for the items a query returns), else from
 * the tables (ts/index-io/search-arrays.ts); the two give the same index. Dense node indexes
 * follow ascending hash id, so the native ranking's tie-break by index is the method's
 * tie-break by id.
 */

import { stat } from 'node:fs/promises';
import { IndexFileError, IndexNotBuiltError } from '../errors.js';
import { PhraseMatcher, SearchGraph } from '../graph/index.js';
import { arraysFromTables, type SearchArrays, TYPE_CODE } from '../index-io/search-arrays.js';
import { NODE_TYPES, type NodeType } from '../model/types.js';
import { CACHE_FILES, resolveInProject } from '../project/layout.js';
import { requireSameDim } from '../project/state.js';
import { shellArg } from '../shell-arg.js';
import { countTokens } from '../text/tokens.js';
import { VectorIndex } from '../vector/index.js';
import { itemLine } from './context.js';
import { committedKey, type IndexSnapshot, readSnapshot } from './index-files.js';

export interface LoadOptions {
  /** `config.dim`: the vector index must have it. */
  dim: number;
  /** `config.unbalance_adjust`. */
  unbalanceAdjust: boolean;
}

/** Milliseconds spent in each loading step. */
export interface LoadTimings {
  /** Reading and validating the snapshot (or reading the tables). */
  readMs: number;
  /** Dense arrays from the tables (ids mapped, references resolved); 0 from the snapshot. */
  mapMs: number;
  /** Native builds (search graph, phrase matcher, HNSW.bin), and meanwhile the snapshot's checksum. */
  nativeMs: number;
  totalMs: number;
  /** Whether cache/search_graph.bin was used. */
  snapshot: boolean;
}

const NO = -1;

/** Loads repeated when a build commits during each (a build commits a few times a minute). */
const LOAD_ATTEMPTS = 3;

/** A load failed, and a build committed while it ran: loading again reads the new files. */
class CommittedMeanwhile extends Error {
  constructor(cause: unknown) {
    super('the index changed while it was loaded', { cause });
  }
}

type Native = { graph: SearchGraph; vectors: VectorIndex | null; matcher: PhraseMatcher<number> };

export class LoadedIndex {
  /** Generation of the last finished build cycle in this snapshot. */
  readonly generation: number;
  /** Type code (index into NODE_TYPES) per node. */
  readonly types: Uint8Array;
  /** Index into `documents` of a node's source document, or −1. */
  readonly docOf: Int32Array;
  /**
   * The text node a node's text was taken from: itself for a text chunk, the first chunk of a
   * semantic unit; −1 otherwise. Lets a context leave out a unit whose chunk it already holds.
   */
  readonly chunkOf: Int32Array;
  /** Relative paths of the indexed documents. */
  readonly documents: readonly string[];
  /** Entity → its attribute node, or −1. */
  readonly attributeOf: Int32Array;
  /** Title → its element node, or −1. */
  readonly elementOf: Int32Array;
  /** HNSW label → node index; −1 for retired labels. */
  readonly labelNode: Int32Array;
  /** Labels not retired. */
  readonly activeVectors: number;
  readonly graph: SearchGraph;
  /**
   * The base graph (no similarity edges) as adjacency lists: the neighbours of node i are
   * `targets[offsets[i] .. offsets[i + 1]]`. Bridge passages (ts/search/bridge.ts) walk it.
   */
  readonly adjacency: { offsets: Uint32Array; targets: Uint32Array };
  /** Null when the index holds no vector. */
  readonly vectors: VectorIndex | null;
  readonly matcher: PhraseMatcher<number>;
  readonly timings: LoadTimings;
  readonly #arrays: SearchArrays;
  #allTexts: readonly string[] | undefined;
  #allIds: readonly string[] | undefined;
  /**
   * Ids and texts already made strings, by node: from the snapshot each is decoded from its
   * bytes on first use only, and a node that comes back in a later question (the hubs and
   * passages many questions reach) is not decoded again. Grows to at most what the tables
   * would hold as strings.
   */
  readonly #idStrings: (string | undefined)[];
  readonly #textStrings: (string | undefined)[];
  /** UTF-8 of `textOf(node).trim()` escaped for a JSON string (no quotes), by node, made on first use. */
  readonly #textJson: (Uint8Array | undefined)[];
  /** o200k_base tokens of each node's context line (`lineTokensOf`), 2 per node; -1 until counted. */
  #lineTokens: Int32Array | undefined;
  /** `JSON.stringify` of the document paths and chunk ids replies name (see `quoted`). */
  readonly #quoted = new Map<string, string>();

  private constructor(generation: number, a: SearchArrays, native: Native, timings: LoadTimings) {
    this.generation = generation;
    this.#arrays = a;
    this.types = a.types;
    this.docOf = a.docOf;
    this.chunkOf = a.chunkOf;
    this.documents = a.documents;
    this.attributeOf = a.attributeOf;
    this.elementOf = a.elementOf;
    this.labelNode = a.labelNode;
    this.activeVectors = a.labelNode.length - a.retiredLabels.length;
    this.adjacency = a.adjacency;
    this.graph = native.graph;
    this.vectors = native.vectors;
    this.matcher = native.matcher;
    this.timings = timings;
    this.#idStrings = new Array(a.types.length);
    this.#textStrings = new Array(a.types.length);
    this.#textJson = new Array(a.types.length);
  }

  /** Reads the committed index of `root` and builds the search structures. */
  static async load(root: string, options: LoadOptions): Promise<LoadedIndex> {
    for (let attempt = 1; ; attempt++) {
      try {
        const last = attempt >= LOAD_ATTEMPTS;
        const first = await LoadedIndex.#load(root, options, true, last);
        // A snapshot whose payload checksum failed (checked while the native parts were built):
        // everything it gave is dropped and the tables are read instead.
        return first ?? (await LoadedIndex.#load(root, options, false, last))!;
      } catch (e) {
        if (!(e instanceof CommittedMeanwhile)) throw e;
        if (attempt >= LOAD_ATTEMPTS) throw e.cause ?? e;
      }
    }
  }

  static async #load(
    root: string,
    options: LoadOptions,
    useSnapshot: boolean,
    lastAttempt: boolean,
  ): Promise<LoadedIndex | null> {
    const t0 = performance.now();
    // The vector index loads (off the main thread) while the rest is read; it is checked
    // against the snapshot afterwards and loaded again if a build replaced it.
    const early = EarlyVectors.start(resolveInProject(root, CACHE_FILES.hnswBin), options.dim);
    let snapshot: IndexSnapshot;
    let arrays: SearchArrays;
    try {
      snapshot = await readSnapshot(root, { useSnapshot });
      requireSameDim(root, snapshot.state, options.dim);
    } catch (e) {
      await early.discard();
      throw e;
    }
    const t1 = performance.now();
    try {
      // Read amid a build cycle's commits, references the running sync removed are left out
      // (search-arrays.ts).
      arrays = snapshot.graph ?? arraysFromTables(snapshot.tables, snapshot.syncing);
    } catch (e) {
      await early.discard();
      throw e;
    }
    const t2 = performance.now();
    // The native parts build on the pool; meanwhile the main thread, which would only wait,
    // checks the snapshot's payload checksum.
    const building = buildNative(root, snapshot, arrays, options, early);
    const whole = snapshot.graph?.verify() ?? true;
    let native: Native;
    try {
      native = await building;
    } catch (e) {
      if (!whole) return null;
      // HNSW.bin is loaded after the snapshot was read: a build that committed meanwhile may
      // have replaced or removed it (the cycle that finishes removes cache/finished/).
      if ((await committedKey(root).catch(() => snapshot.key)) !== snapshot.key) {
        throw new CommittedMeanwhile(e);
      }
      throw e;
    }
    if (!whole) {
      closeNative(native);
      return null;
    }
    // Loaded whole, but from files a build may have replaced after the snapshot was read
    // (HNSW.bin is opened last): a vector index of another generation with the same count
    // would pass every check.
    if (!lastAttempt && (await committedKey(root).catch(() => snapshot.key)) !== snapshot.key) {
      closeNative(native);
      throw new CommittedMeanwhile(undefined);
    }
    const t3 = performance.now();
    return new LoadedIndex(snapshot.state.last_finished_generation, arrays, native, {
      readMs: t1 - t0,
      mapMs: t2 - t1,
      nativeMs: t3 - t2,
      totalMs: t3 - t0,
      snapshot: snapshot.graph !== null,
    });
  }

  get nodeCount(): number {
    return this.types.length;
  }

  /** Hash id of `node` (dense index); made a string only when asked for when from the snapshot. */
  idOf(node: number): string {
    this.#idStrings[node] ??= this.#arrays.ids.at(node)!;
    return this.#idStrings[node];
  }

  /**
   * Hash ids in ascending order (position = dense node index), all made strings on first
   * access (tests and diagnostics; a query asks only for its items through `idOf`).
   */
  get ids(): readonly string[] {
    this.#allIds ??= Array.from({ length: this.nodeCount }, (_, i) => this.idOf(i));
    return this.#allIds;
  }

  /** Node text (`context`) of `node`; decoded on demand when the index came from the snapshot. */
  textOf(node: number): string {
    this.#textStrings[node] ??= this.#arrays.texts.at(node)!;
    return this.#textStrings[node];
  }

  /**
   * The UTF-8 bytes of the trimmed text of `node` as it appears inside a JSON string
   * (`JSON.stringify` of it without the quotes), kept like the texts: a reply holding the
   * context joins these instead of escaping and encoding the whole context again for each
   * question (context.ts formatContextJson).
   */
  textJsonOf(node: number): Uint8Array {
    let json = this.#textJson[node];
    if (json === undefined) {
      const quoted = JSON.stringify(this.textOf(node).trim());
      json = Buffer.from(quoted.slice(1, -1), 'utf8');
      this.#textJson[node] = json;
    }
    return json;
  }

  /**
   * o200k_base tokens of `node`'s line in a context (context.ts `itemLine`; `last`: the last of
   * its section), counted on first use and kept: `contextTokens` sums these.
   */
  lineTokensOf(node: number, last: boolean): number {
    this.#lineTokens ??= new Int32Array(2 * this.nodeCount).fill(-1);
    const at = 2 * node + (last ? 1 : 0);
    let n = this.#lineTokens[at]!;
    if (n < 0) {
      n = countTokens(itemLine(this.textOf(node), last));
      this.#lineTokens[at] = n;
    }
    return n;
  }

  /**
   * `JSON.stringify(s)` for the strings of a reply's sources (document paths, chunk ids),
   * kept: they are the index's own strings, so the memo holds at most one per document and
   * chunk.
   */
  readonly quoted = (s: string): string => {
    let json = this.#quoted.get(s);
    if (json === undefined) {
      json = JSON.stringify(s);
      this.#quoted.set(s, json);
    }
    return json;
  };

  /**
   * Every node's text, decoded on first access (tests and diagnostics; a query decodes only
   * its context items through `textOf`).
   */
  get texts(): readonly string[] {
    this.#allTexts ??= Array.from({ length: this.nodeCount }, (_, i) => this.textOf(i));
    return this.#allTexts;
  }

  /** Neighbours of `node` in the base graph (a view, not a copy). */
  neighbors(node: number): Uint32Array {
    const { offsets, targets } = this.adjacency;
    return targets.subarray(offsets[node]!, offsets[node + 1]!);
  }

  indexOf(id: string): number | undefined {
    return this.#arrays.indexOf(id);
  }

  typeOf(index: number): NodeType {
    return NODE_TYPES[this.types[index]!]!;
  }

  /** Relative path of the document a node came from (its first chunk's), or null. */
  documentOf(index: number): string | null {
    const d = this.docOf[index]!;
    return d === NO ? null : this.documents[d]!;
  }

  close(): void {
    closeNative(this);
  }
}

function closeNative(n: Native): void {
  n.graph.close();
  n.vectors?.close();
  n.matcher.close();
}

/** Entity names and titles (the phrase matcher's names), in node order. */
function matcherNames(a: SearchArrays): [number, string][] {
  const names: [number, string][] = [];
  const entityCode = TYPE_CODE.get('entity');
  const titleCode = TYPE_CODE.get('high_level_element_title');
  for (let i = 0; i < a.types.length; i++) {
    if (a.types[i] === entityCode || a.types[i] === titleCode) names.push([i, a.texts.at(i)!]);
  }
  return names;
}

/** HNSW.bin loading started before the tables are read. */
class EarlyVectors {
  private constructor(
    readonly path: string,
    readonly fileBefore: Promise<string>,
    readonly result: Promise<{ index: VectorIndex } | { error: unknown }>,
  ) {}

  static start(path: string, dim: number): EarlyVectors {
    // The file is identified before it is opened: one replaced in between then fails `take`.
    const before = fileIdentity(path);
    return new EarlyVectors(
      path,
      before,
      before
        .then(() => VectorIndex.load(path, { expectedDim: dim }))
        .then(
          (index) => ({ index }),
          (error: unknown) => ({ error }),
        ),
    );
  }

  /** The early index if it is the file of the snapshot with `count` vectors; else null (and closed). */
  async take(path: string, count: number): Promise<VectorIndex | null> {
    const r = await this.result;
    if (!('index' in r)) return null;
    // The snapshot's file may be elsewhere (still staged by a pending commit, or the kept
    // finished generation during a cycle: a hard link to the same file until the cycle
    // replaces it), so the file is compared, not the path: one unchanged while it was loaded.
    const before = await this.fileBefore;
    const unchanged =
      before !== MISSING &&
      before === (await fileIdentity(this.path)) &&
      before === (await fileIdentity(path));
    if (unchanged && r.index.size === count) return r.index;
    r.index.close();
    return null;
  }

  async discard(): Promise<void> {
    const r = await this.result;
    if ('index' in r) r.index.close();
  }
}

const MISSING = 'missing';

async function fileIdentity(path: string): Promise<string> {
  try {
    const s = await stat(path);
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return MISSING;
  }
}

async function loadVectors(
  snapshot: IndexSnapshot,
  a: SearchArrays,
  options: LoadOptions,
  early: EarlyVectors,
): Promise<VectorIndex | null> {
  if (a.labelNode.length === 0) {
    await early.discard();
    return null;
  }
  const taken = await early.take(snapshot.hnswPath, a.labelNode.length);
  // Not usable (damaged, replaced meanwhile, other count): load it again, with the checks.
  return (
    taken ??
    VectorIndex.load(snapshot.hnswPath, { expectedDim: options.dim, expectedCount: a.labelNode.length })
  );
}

async function buildNative(
  root: string,
  snapshot: IndexSnapshot,
  a: SearchArrays,
  options: LoadOptions,
  early: EarlyVectors,
): Promise<Native> {
  // The three builds run off the main thread, side by side.
  const results = await Promise.allSettled([
    SearchGraph.build({
      nodeTypes: a.types,
      edges: { nodeCount: a.types.length, ...a.edges },
      similarity: a.similarity,
      unbalanceAdjust: options.unbalanceAdjust,
    }),
    loadVectors(snapshot, a, options, early),
    PhraseMatcher.buildWithIds(matcherNames(a)),
  ] as const);
  const [graph, vectors, matcher] = results;
  const failure = results.find((r) => r.status === 'rejected');
  if (failure) {
    // Free whatever was built before reporting.
    if (graph.status === 'fulfilled') graph.value.close();
    if (vectors.status === 'fulfilled') vectors.value?.close();
    if (matcher.status === 'fulfilled') matcher.value.close();
    const e = (failure as PromiseRejectedResult).reason;
    // Only the vector index loads from a file here, and a build re-derives it from the
    // vectors stored in the tables (ts/indexing/init.ts): that is the way out to name.
    if (e instanceof IndexFileError)
      throw new IndexNotBuiltError(
        `index damaged: ${e.message}; run \`noderag build -f ${shellArg(root)}\`: it rebuilds the vector index from the stored vectors`,
        { cause: e },
      );
    throw e;
  }
  const index = vectors.status === 'fulfilled' ? vectors.value : null;
  if (index && a.retiredLabels.length > 0) index.retire(a.retiredLabels);
  return {
    graph: (graph as PromiseFulfilledResult<SearchGraph>).value,
    vectors: index,
    matcher: (matcher as PromiseFulfilledResult<PhraseMatcher<number>>).value,
  };
}
