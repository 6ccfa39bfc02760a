/**
 * How graphs cross into the native core: `nodeCount` plus parallel typed arrays. Node ids
 * are dense indexes 0..nodeCount−1; the caller keeps the hash-id ↔ index map. Assign the
 * indexes in ascending hash-id order: native rankings break score ties by index, which
 * then equals the method's tie-break by id.
 */
import { InvalidArgumentError } from '../errors.js';

export interface GraphEdges {
  nodeCount: number;
  /** Edge i joins `src[i]` and `dst[i]` (undirected; duplicates are summed). */
  src: Uint32Array;
  dst: Uint32Array;
  /** Edge weights, finite and > 0. Optional where an algorithm ignores weights. */
  weight?: Float64Array;
}

const U32_MAX = 0xffff_ffff;

export function checkCount(name: string, value: number, min = 0): number {
  if (!Number.isInteger(value) || value < min || value > U32_MAX) {
    throw new InvalidArgumentError(
      'invalid_argument',
      `${name} must be an integer in ${min}..=${U32_MAX}, got ${value}`,
    );
  }
  return value;
}

export function requireWeights(edges: GraphEdges, what: string): Float64Array {
  if (!edges.weight) {
    throw new InvalidArgumentError('invalid_argument', `${what} needs edge weights (edges.weight)`);
  }
  return edges.weight;
}
