/**
 * The HNSW pipeline's insertion, started early (docs/method.md §3.9; issue 17: stages
 * overlapped where they are independent). In a first build the text, semantic-unit and
 * attribute vectors are final once the Embedding pipeline has committed, and they are the
 * first labels of the vector index (type order, hnsw-vectors.ts). So the build starts
 * inserting them then, on one thread and in memory only, while the Summary and Insert text
 * stages run (mostly waiting for the model); the HNSW stage takes the partial index and
 * inserts the rest (the high-level elements) on all cores. When the Embedding stage embeds
 * every one of those rows (a first build), it feeds the vectors here as their batches arrive
 * in input order (`feedHnswPrebuild`), so the insertion starts during that stage already.
 *
 * Nothing here is committed or written: a crash or stop loses only the head start, and the
 * stage's own checkpoints are unchanged. The stage takes the index only when its job is a
 * rebuild whose vectors start with exactly these (ids and bytes); otherwise it is closed. The
 * graph is the one the stage alone builds (crates/noderag_hnsw/src/build.rs: fixed batches of
 * 256 labels whatever the calls, on any thread count), because the insertion here also links
 * its pending vectors where the stage would save a checkpoint (`nextCheckpoint`).
 */
import { availableParallelism } from 'node:os';
import type { NodeConfig } from '../../config/node-config.js';
import type { IndexData } from '../../index-io/index-data.js';
import { VectorIndex, type VectorIndexParams } from '../../vector/index.js';
import {
  block,
  CHECKPOINT_MIN,
  indexParams,
  nextCheckpoint,
  type VectorNode,
  vectorNodes,
} from './hnsw-vectors.js';

/** Vectors per native call (one native batch): the HNSW stage waits at most for one to take over. */
const CHUNK = 256;

/** What the insertion needs of a vector node. */
type PrebuildNode = Pick<VectorNode, 'id' | 'vector'>;

interface Prebuild {
  params: VectorIndexParams;
  nodes: PrebuildNode[];
  index: VectorIndex;
  /** Vectors inserted so far. */
  done: number;
  stopped: boolean;
  /** More nodes may be fed (`feedHnswPrebuild`) until the Embedding stage has committed. */
  open: boolean;
  /** Wakes the insertion loop waiting for nodes. */
  wake: (() => void) | null;
  /** Settles when the insertion loop has ended (stopped, finished or failed). */
  finished: Promise<void>;
}

const running = new Map<string, Prebuild>();

function wake(p: Prebuild): void {
  const w = p.wake;
  p.wake = null;
  w?.();
}

/** Starts the insertion loop over `nodes` (which may still grow while `open`). */
function begin(root: string, params: VectorIndexParams, nodes: PrebuildNode[], open: boolean): Prebuild {
  const vi = VectorIndex.create(params);
  // One thread: the stages running meanwhile need the other core.
  vi.setBuildThreads(1);
  const p: Prebuild = {
    params,
    nodes,
    index: vi,
    done: 0,
    stopped: false,
    open,
    wake: null,
    finished: Promise.resolve(),
  };
  running.set(root, p);
  p.finished = (async () => {
    let checkpointAt = CHECKPOINT_MIN;
    while (!p.stopped) {
      const want = Math.min(CHUNK, checkpointAt - p.done);
      const available = nodes.length - p.done;
      // While nodes are still fed, wait for a whole native batch (or the checkpoint's rest).
      if (available === 0 || (p.open && available < want)) {
        if (!p.open) break;
        await new Promise<void>((resolve) => {
          p.wake = resolve;
        });
        continue;
      }
      const n = Math.min(want, available);
      await vi.addBatch(block(nodes, p.done, n, params.dim), { deferView: true });
      p.done += n;
      // Where the stage would save a checkpoint (and so link the incomplete batch).
      if (p.done === checkpointAt) {
        await vi.linkPending();
        checkpointAt = nextCheckpoint(0, checkpointAt);
      }
    }
  })().catch(() => {
    // A failed head start is no failure of the build: the stage inserts everything itself.
    p.stopped = true;
    p.done = 0;
  });
  return p;
}

/**
 * Starts inserting the vectors embedded so far of a first build of `root` (no committed id map).
 * Returns at once; does nothing when there is nothing to start from. An insertion fed by the
 * Embedding stage (`feedHnswPrebuild`) is closed instead: it has all the vectors already.
 */
export function startHnswPrebuild(root: string, config: NodeConfig, index: IndexData): void {
  const fed = running.get(root);
  if (fed) {
    fed.open = false;
    wake(fed);
    return;
  }
  const params = indexParams(config);
  const start = async (): Promise<void> => {
    if ((await index.idMap()).length > 0) return;
    const nodes = await vectorNodes(index, 'before-summary');
    if (nodes.length === 0 || running.has(root)) return;
    begin(root, params, nodes, false);
  };
  // Best effort: unreadable tables are the stages' business, reported by them.
  start().catch(() => undefined);
}

/**
 * Inserts vectors as the Embedding stage of a first build receives them, before its commit:
 * `nodes` are the next ones in label order (the stage feeds only when it embeds every text,
 * semantic-unit and attribute row, in that order). The insertion stays open for more until
 * `startHnswPrebuild` after the commit; a failed stage ends the build, which drops it. The
 * HNSW stage's check (`takeHnswPrebuild`: same ids and vector bytes) stays the guard.
 */
export function feedHnswPrebuild(root: string, config: NodeConfig, nodes: readonly PrebuildNode[]): void {
  let p = running.get(root);
  if (!p) p = begin(root, indexParams(config), [], true);
  if (!p.open || p.stopped) return;
  for (const n of nodes) p.nodes.push(n);
  wake(p);
}

/** Vectors the early insertion of `root`'s build has inserted so far; -1 when none runs. */
export function hnswPrebuildDone(root: string): number {
  return running.get(root)?.done ?? -1;
}

/** Ends the insertion of `root`'s build, if any, once its current native call returns. */
async function stopPrebuild(root: string): Promise<Prebuild | undefined> {
  const p = running.get(root);
  if (!p) return undefined;
  running.delete(root);
  p.stopped = true;
  wake(p);
  await p.finished;
  return p;
}

/** Stops the insertion of `root`'s build, if any, and frees its index. */
export async function dropHnswPrebuild(root: string): Promise<void> {
  (await stopPrebuild(root))?.index.close();
}

function sameVector(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  if (a.buffer === b.buffer && a.byteOffset === b.byteOffset) return true;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
}

/**
 * The index started for `root`, when the HNSW stage's job (a rebuild of `fresh` with `params`)
 * begins with exactly its vectors: with how many are in, set to build on all cores. Otherwise
 * (or when there is none) null; an index that does not fit is closed.
 */
export async function takeHnswPrebuild(
  root: string,
  params: VectorIndexParams,
  fresh: readonly VectorNode[],
): Promise<{ index: VectorIndex; done: number } | null> {
  const p = await stopPrebuild(root);
  if (!p) return null;
  const { done, nodes } = p;
  const fits =
    done > 0 &&
    done <= fresh.length &&
    p.params.space === params.space &&
    p.params.dim === params.dim &&
    p.params.m === params.m &&
    p.params.efConstruction === params.efConstruction &&
    nodes.slice(0, done).every((n, i) => n.id === fresh[i]!.id && sameVector(n.vector, fresh[i]!.vector));
  if (!fits) {
    p.index.close();
    return null;
  }
  p.index.setBuildThreads(availableParallelism());
  return { index: p.index, done };
}
