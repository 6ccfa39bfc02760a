/**
 * The loaded search graph (docs/method.md §6.1) and its propagation (§6.4), behind the native
 * `SearchGraph` class (bindings/src/graph.rs).
 *
 * `build` runs off the main thread. `topNodes` is sync and fast: the native graph is
 * immutable and shared, so concurrent queries never copy it, and the default 2-step walk
 * touches only the seeds' neighbourhood. `close()` frees the native memory; any later
 * call throws ClosedError.
 */
import { InvalidArgumentError } from '../errors.js';
import { callNative, callNativeAsync, type NativeAddon, native } from '../native.js';
import { checkCount, type GraphEdges, requireWeights } from './edges.js';

type NativeSearchGraph = InstanceType<NativeAddon['SearchGraph']>;

export interface SearchGraphInput {
  /** Type code of each node (index into NODE_TYPES); its length is the node count. */
  nodeTypes: Uint8Array;
  /** The base graph (weights required). `edges.nodeCount` must equal `nodeTypes.length`. */
  edges: GraphEdges;
  /** Similarity pairs (HNSW layer-0 links): each pair adds 1 to its edge, or creates it with weight 1. */
  similarity?: { src: Uint32Array; dst: Uint32Array };
  /** Apply `unbalance_adjust`: w = min(w, 1/deg(u), 1/deg(v)). */
  unbalanceAdjust: boolean;
}

export interface PropagationOptions {
  /** `ppr_alpha`, within [0, 1]. */
  alpha: number;
  /** `ppr_max_iter`: the walk's steps at most (its hop radius). */
  maxIter: number;
  /** `walk` (default): p ← α·T·p + (1 − α)·p. `restart`: p ← α·T·p + (1 − α)·p₀. */
  mode?: 'walk' | 'restart';
  /** Stop when ‖Δp‖₂ falls below this. Default 1e-5. */
  tolerance?: number;
  /** Force the full-graph step (benchmarks; same result). */
  dense?: boolean;
}

export interface Seeds {
  ids: Uint32Array;
  /** Positive weights; normalised to sum 1 natively. Zero weights are ignored. */
  weights: Float64Array;
}

/** Eligible nodes in ranking order (score desc, index asc), at most `quotas[type]` per type. */
export interface TopNodes {
  ids: Uint32Array;
  scores: Float64Array;
  types: Uint8Array;
  /** Steps performed: eligible nodes lie within this many hops of a seed. */
  steps: number;
  /** Eligible nodes of every type, before quotas. */
  eligible: number;
  /** Traffic of the walk: a lower bound in bytes, the same counted by cache line for random accesses, steps by kind. */
  work: { bytesTouched: number; lineBytes: number; sparseSteps: number; denseSteps: number };
}

export interface FullScores {
  scores: Float64Array;
  /** 1 where the node is eligible (positive score, within `steps` hops of a seed). */
  eligible: Uint8Array;
  steps: number;
}

export class SearchGraph {
  readonly #native: NativeSearchGraph;

  private constructor(handle: NativeSearchGraph) {
    this.#native = handle;
  }

  /** Builds the search graph off the main thread (the arrays are copied first). */
  static async build(input: SearchGraphInput): Promise<SearchGraph> {
    checkCount('edges.nodeCount', input.edges.nodeCount);
    if (input.edges.nodeCount !== input.nodeTypes.length) {
      throw new InvalidArgumentError(
        'invalid_argument',
        `edges.nodeCount is ${input.edges.nodeCount} but nodeTypes has ${input.nodeTypes.length} entries`,
      );
    }
    const weight = requireWeights(input.edges, 'SearchGraph.build');
    const sim = input.similarity ?? { src: new Uint32Array(0), dst: new Uint32Array(0) };
    const handle = await callNativeAsync(() =>
      native.SearchGraph.build(
        input.nodeTypes,
        input.edges.src,
        input.edges.dst,
        weight,
        sim.src,
        sim.dst,
        input.unbalanceAdjust,
      ),
    );
    return new SearchGraph(handle);
  }

  /**
   * Propagates from the seeds and returns the best eligible nodes of each type (`quotas[t]`
   * for type code t; types past the array get none). Sync. To let the §6.5 walk skip nodes
   * already in the search list, ask for quota + the most nodes that can be skipped.
   */
  topNodes(seeds: Seeds, quotas: Uint32Array, options: PropagationOptions): TopNodes {
    const r = callNative(() =>
      this.#native.topNodes(seeds.ids, seeds.weights, quotas, toNativeOptions(options)),
    );
    return {
      ids: r.ids,
      scores: r.scores,
      types: r.types,
      steps: r.steps,
      eligible: r.eligible,
      work: {
        bytesTouched: r.bytesTouched,
        lineBytes: r.lineBytes,
        sparseSteps: r.sparseSteps,
        denseSteps: r.denseSteps,
      },
    };
  }

  /** The full score vector of the same propagation (O(nodeCount)); diagnostics. Sync. */
  scores(seeds: Seeds, options: PropagationOptions): FullScores {
    return callNative(() => this.#native.scores(seeds.ids, seeds.weights, toNativeOptions(options)));
  }

  /** Weight of edge {u, v} in the search graph (after similarity edges and adjustment), or null. */
  edgeWeight(u: number, v: number): number | null {
    return callNative(() => this.#native.edgeWeight(u, v)) ?? null;
  }

  get nodeCount(): number {
    return callNative(() => this.#native.nodeCount);
  }

  get edgeCount(): number {
    return callNative(() => this.#native.edgeCount);
  }

  /** Bytes held by the native CSR arrays. */
  get memoryBytes(): number {
    return callNative(() => this.#native.memoryBytes);
  }

  get closed(): boolean {
    return this.#native.closed;
  }

  /** Frees the native graph. Idempotent; later calls throw ClosedError. */
  close(): void {
    callNative(() => this.#native.close());
  }
}

function toNativeOptions(o: PropagationOptions) {
  return { alpha: o.alpha, maxIter: o.maxIter, mode: o.mode, tolerance: o.tolerance, dense: o.dense };
}
