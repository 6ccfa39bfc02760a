/**
 * Chunking (docs/method.md §3.2): cut points after paragraph, line, sentence (incl. CJK marks) and
 * word boundaries; the furthest that fits `chunkSize` tokens, preferring the strongest class
 * among those that fill at least half the budget. Words are never split, except a single
 * "word" longer than the budget (a base64 blob), cut at a token boundary. Pure and
 * deterministic. Runs in the Rust core; see crates/noderag_text/src/chunk.rs for the exact
 * search procedure.
 */
import { InvalidArgumentError } from '../errors.js';
import { callNative, callNativeAsync, native } from '../native.js';

/**
 * Chunks as parallel arrays. `starts[i]`/`ends[i]` are UTF-16 offsets (JS string indices)
 * into the input, so `text.slice(starts[i], ends[i]) === texts[i]`. Chunks are trimmed, never
 * empty, in order and non-overlapping; `tokenCounts[i]` counts `texts[i]`.
 */
export interface Chunks {
  texts: string[];
  tokenCounts: Uint32Array;
  starts: Uint32Array;
  ends: Uint32Array;
}

/** One chunk as an object, for callers that want rows. */
export interface Chunk {
  text: string;
  tokens: number;
  start: number;
  end: number;
}

/** napi would wrap a negative or fractional number into a u32; reject it here instead. */
function checkChunkSize(chunkSize: number): void {
  if (!Number.isInteger(chunkSize) || chunkSize < 1 || chunkSize > 0xffff_ffff) {
    throw new InvalidArgumentError(
      'invalid_argument',
      `chunkSize must be a positive integer number of tokens, got ${String(chunkSize)}`,
    );
  }
}

/** Chunks `text` on the calling thread (~0.1 ms per 1,000 characters). */
export function chunkText(text: string, chunkSize: number): Chunks {
  checkChunkSize(chunkSize);
  return callNative(() => native.chunkText(text, chunkSize));
}

/** Chunks `text` off the main thread; use this for whole documents. */
export async function chunkTextAsync(text: string, chunkSize: number): Promise<Chunks> {
  checkChunkSize(chunkSize);
  return await callNativeAsync(() => native.chunkTextAsync(text, chunkSize));
}

/** The chunks as objects. */
export function chunkRows(c: Chunks): Chunk[] {
  return c.texts.map((text, i) => ({
    text,
    tokens: c.tokenCounts[i]!,
    start: c.starts[i]!,
    end: c.ends[i]!,
  }));
}
