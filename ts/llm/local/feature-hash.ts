/**
 * Feature-hashing embeddings of the local provider (docs/method.md §7.7): lower-cased word tokens
 * (single characters for CJK) → bucket = first 4 bytes of SHA-256(token) as u32 LE mod
 * `dim`, sign from the 5th byte (its lowest bit: 0 → +1, 1 → −1); sum, then L2-normalise;
 * an empty text gives the unit vector on bucket 0.
 *
 * Refinement (deterministic, documented in the README): stop words ("the", "of", "的", "是")
 * are left out when the text has any other token, so similarity follows content words rather
 * than grammar.
 */
import { createHash } from 'node:crypto';
import { ENGLISH_STOP_WORDS } from './words.js';

const TOKEN_RE =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]|[^\s\p{P}\p{S}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]+/gu;

export function hashTokens(text: string): string[] {
  return (text.toLowerCase().match(TOKEN_RE) ?? []) as string[];
}

/** Chinese function characters; content characters such as 里 (in 居里) stay. */
const CJK_STOP_CHARS = new Set([...'的了是在和与及或于为被把将对从向也都就而并但这那个着过之其所吗呢吧啊们']);

function isStop(token: string): boolean {
  return ENGLISH_STOP_WORDS.has(token) || CJK_STOP_CHARS.has(token);
}

/** token → (u32 of the first 4 bytes, sign); bounded so a huge corpus cannot grow it forever. */
const hashCache = new Map<string, number>();
const HASH_CACHE_LIMIT = 500_000;

/** Packs the bucket source (u32) and the sign bit into one number: u32 * 2 + signBit. */
function tokenHash(token: string): number {
  let v = hashCache.get(token);
  if (v === undefined) {
    const d = createHash('sha256').update(token, 'utf8').digest();
    v = d.readUInt32LE(0) * 2 + ((d[4] as number) & 1);
    if (hashCache.size >= HASH_CACHE_LIMIT) hashCache.clear();
    hashCache.set(token, v);
  }
  return v;
}

/** Writes the embedding of `text` into `out` (length `dim`, zero-filled by the caller). */
export function featureHashInto(text: string, out: Float32Array): void {
  const dim = out.length;
  const all = hashTokens(text);
  const content = all.filter((t) => !isStop(t));
  const tokens = content.length > 0 ? content : all;
  if (tokens.length === 0) {
    out[0] = 1;
    return;
  }
  // Accumulate in f64 so the result does not depend on summation rounding in f32.
  const acc = new Float64Array(dim);
  for (const t of tokens) {
    const h = tokenHash(t);
    const bucket = Math.floor(h / 2) % dim;
    acc[bucket] = (acc[bucket] as number) + (h % 2 === 0 ? 1 : -1);
  }
  let norm = 0;
  for (let i = 0; i < dim; i++) norm += (acc[i] as number) * (acc[i] as number);
  if (norm === 0) {
    // Every token cancelled out (e.g. two tokens on one bucket with opposite signs).
    out[0] = 1;
    return;
  }
  const inv = 1 / Math.sqrt(norm);
  for (let i = 0; i < dim; i++) out[i] = (acc[i] as number) * inv;
}

/** One flat Float32Array of `texts.length * dim` values. */
export function featureHashBatch(texts: readonly string[], dim: number): Float32Array {
  const out = new Float32Array(texts.length * dim);
  for (let i = 0; i < texts.length; i++) {
    featureHashInto(texts[i] as string, out.subarray(i * dim, (i + 1) * dim));
  }
  return out;
}
