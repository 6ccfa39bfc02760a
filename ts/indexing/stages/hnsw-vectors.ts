/**
 * The vectors of the HNSW pipeline in label order, handed to the native index as flat views,
 * and the checkpoint schedule: shared by the stage (hnsw.ts) and its overlapped start
 * (hnsw-prebuild.ts).
 */

import type { NodeConfig } from '../../config/node-config.js';
import { InternalError } from '../../errors.js';
import type { IndexData } from '../../index-io/index-data.js';
import type { NodeType } from '../../model/types.js';
import type { VectorIndexParams } from '../../vector/index.js';

/** The vector index's parameters from the configuration (docs/method.md §3.9). */
export function indexParams(config: NodeConfig): VectorIndexParams {
  const c = config.config;
  return { space: c.space, dim: c.dim, m: c.m, efConstruction: c.ef };
}

/** First checkpoint after this many new vectors; later ones when the index grew by half. */
export const CHECKPOINT_MIN = 4096;

/** Where the next checkpoint is, counted in new vectors: a function of the input alone. */
export function nextCheckpoint(base: number, done: number): number {
  return done + Math.max(CHECKPOINT_MIN, Math.floor((base + done) / 2));
}

export interface VectorNode {
  id: string;
  type: NodeType;
  vector: Float32Array;
  /** Generation its current vector was made in (attributes: updated_generation). */
  madeIn: number;
}

/**
 * How many vectors from `from` (at most `max`) lie back to back in one buffer: rows read from
 * a table are views into its embedding column (ts/index-io/columns.ts), so such a run goes to
 * the index as one view, without a copy.
 */
export function contiguousRun(
  nodes: readonly Pick<VectorNode, 'vector'>[],
  from: number,
  max: number,
  dim: number,
): number {
  const first = nodes[from]!.vector;
  const step = dim * Float32Array.BYTES_PER_ELEMENT;
  let n = 1;
  while (n < max) {
    const v = nodes[from + n]!.vector;
    if (v.buffer !== first.buffer || v.byteOffset !== first.byteOffset + n * step || v.length !== dim) break;
    n++;
  }
  return n;
}

/** The vectors `from .. from + n` as one flat array: a view when they are contiguous, else one copy. */
export function block(
  nodes: readonly Pick<VectorNode, 'vector'>[],
  from: number,
  n: number,
  dim: number,
): Float32Array {
  const first = nodes[from]!.vector;
  if (first.length === dim && contiguousRun(nodes, from, n, dim) === n) {
    return new Float32Array(first.buffer, first.byteOffset, n * dim);
  }
  const flat = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) flat.set(nodes[from + i]!.vector, i * dim);
  return flat;
}

/**
 * Every vector node in label order: text, semantic_unit, attribute, high_level_element, then
 * number. `before-summary`: the first three kinds only, final once the Embedding pipeline has
 * committed in a first build (the overlapped insertion, hnsw-prebuild.ts).
 */
export async function vectorNodes(
  index: Pick<IndexData, 'texts' | 'units' | 'attributes' | 'elements'>,
  kinds: 'all' | 'before-summary' = 'all',
): Promise<VectorNode[]> {
  const out: VectorNode[] = [];
  const push = (id: string, type: NodeType, v: Float32Array | null, madeIn: number) => {
    if (!v)
      throw new InternalError(
        'internal_error',
        `${type} ${id} has no vector; the Embedding pipeline must run first`,
      );
    out.push({ id, type, vector: v, madeIn });
  };
  const byNumber = <T extends { humanReadableId: number }>(m: Map<string, T>) =>
    [...m.values()].sort((a, b) => a.humanReadableId - b.humanReadableId);
  for (const t of [...(await index.texts()).values()].sort((a, b) => a.textId - b.textId)) {
    push(t.hashId, 'text', t.embedding, t.generation);
  }
  for (const u of byNumber(await index.units())) push(u.hashId, 'semantic_unit', u.embedding, u.generation);
  for (const a of byNumber(await index.attributes()))
    push(a.hashId, 'attribute', a.embedding, a.updatedGeneration);
  if (kinds === 'before-summary') return out;
  for (const e of byNumber(await index.elements()))
    push(e.hashId, 'high_level_element', e.embedding, e.generation);
  return out;
}
