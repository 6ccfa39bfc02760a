/**
 * cache/retired_vectors.json: the vectors of the semantic units a sync removed in its
 * Document commit, kept until the Graph commit of the same cycle (docs/method.md §4.5):
 *
 *   { "version": 1, "units": { "<unit id>": { "generation": g, "embedding": "<base64 f32 LE>",
 *                                          "context": "<the text it was made from>" } } }
 *
 * An edited file's chunk leaves the index with its units, and the new chunk brings most of
 * them back: a unit's id is the hash of its text, so a unit added again with the id of a
 * retired one takes its vector and generation back (no embedding call, and the vector index
 * keeps its label) instead of being embedded and inserted again, when its text is the one the
 * vector was made from (the id hashes the normalised text: "ﬁrst" and "first" share it). The
 * Graph stage empties it. (`context` is absent in files written before it was kept: then the
 * vector is taken back as before.)
 */
import { IndexFileError } from '../errors.js';
import { readTextIfExists } from '../project/read-optional.js';

export const RETIRED_VECTORS_FILE = 'cache/retired_vectors.json';
const VERSION = 1;

export interface RetiredVector {
  generation: number;
  embedding: Float32Array;
  /** The unit's text the vector was made from. */
  context?: string;
}

/** A vector as base64 of its little-endian f32 bytes (exact, compact in JSON). */
export function encodeVector(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
}

export function decodeVector(s: string, label: string, what: string): Float32Array {
  const bytes = Buffer.from(s, 'base64');
  if (bytes.byteLength % 4 !== 0) {
    throw new IndexFileError('index_damaged', `${label}: the embedding of ${what} is not a list of f32`);
  }
  const out = new Float32Array(bytes.byteLength / 4);
  new Uint8Array(out.buffer).set(bytes);
  return out;
}

export function serializeRetiredVectors(units: ReadonlyMap<string, RetiredVector>): string {
  const out: Record<string, { generation: number; embedding: string; context?: string }> = {};
  for (const id of [...units.keys()].sort()) {
    const r = units.get(id)!;
    out[id] = {
      generation: r.generation,
      embedding: encodeVector(r.embedding),
      ...(r.context === undefined ? {} : { context: r.context }),
    };
  }
  return `${JSON.stringify({ version: VERSION, units: out })}\n`;
}

export function parseRetiredVectors(text: string, label: string): Map<string, RetiredVector> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new IndexFileError('index_damaged', `${label}: not valid JSON (${(error as Error).message})`);
  }
  const v = value as { version?: unknown; units?: unknown } | null;
  if (
    v === null ||
    typeof v !== 'object' ||
    v.version !== VERSION ||
    v.units === null ||
    typeof v.units !== 'object' ||
    Array.isArray(v.units)
  ) {
    throw new IndexFileError('index_damaged', `${label}: expected { "version": ${VERSION}, "units": {…} }`);
  }
  const out = new Map<string, RetiredVector>();
  for (const [id, raw] of Object.entries(v.units as Record<string, unknown>)) {
    const r = raw as { generation?: unknown; embedding?: unknown; context?: unknown } | null;
    if (
      !r ||
      !Number.isSafeInteger(r.generation) ||
      typeof r.embedding !== 'string' ||
      (r.context !== undefined && typeof r.context !== 'string')
    ) {
      throw new IndexFileError(
        'index_damaged',
        `${label}: units.${id} must have a generation and an embedding`,
      );
    }
    out.set(id, {
      generation: r.generation as number,
      embedding: decodeVector(r.embedding, label, id),
      ...(typeof r.context === 'string' ? { context: r.context } : {}),
    });
  }
  return out;
}

/** The retired vectors, or none when the file does not exist. */
export async function readRetiredVectors(path: string, label: string): Promise<Map<string, RetiredVector>> {
  const text = await readTextIfExists(path);
  return text === null ? new Map() : parseRetiredVectors(text, label);
}
