/**
 * `o200k_base` token counts (docs/method.md §0), whatever model is configured: one implementation,
 * in the Rust core, for chunking, prompt budgets and reported token counts. The tokenizer
 * loads once per process (~60 ms) on first use, or at `warmTokenizer()`.
 */
import { InvalidArgumentError } from '../errors.js';
import { callNative, native } from '../native.js';

/** Loads the tokenizer now (e.g. while a server starts) rather than on the first count. */
export function warmTokenizer(): void {
  callNative(() => native.warmTokenizer());
}

/** Tokens of `s`. Special-token text such as `<|endoftext|>` counts as ordinary text. */
export function countTokens(s: string): number {
  return callNative(() => native.countTokens(s));
}

/**
 * `countTokens(s)`, made cheap for texts that repeat line by line (retrieval contexts: the same
 * node texts question after question). The native side cuts `s` where o200k's pre-tokenisation
 * always breaks (after a line break, and after a numbered item's `12.`), remembers each
 * piece's count (about 16 MiB per thread at most, entries' overhead included) and sums them: the same number as
 * `countTokens`, checked by crates/noderag_text/src/tokens_memo.rs's tests.
 */
export function countTokensMemo(s: string): number {
  return callNative(() => native.countTokensMemo(s));
}

/** Tokens of each string, in order, in one native call. */
export function countTokensBatch(texts: readonly string[]): Uint32Array {
  if (texts.length === 0) return new Uint32Array(0);
  return callNative(() => native.countTokensBatch([...texts]));
}

/** Token ids of `s`. */
export function encodeTokens(s: string): Uint32Array {
  return callNative(() => native.encodeTokens(s));
}

/**
 * The longest prefix of `s` within `maxTokens` tokens: the first `maxTokens` tokens, moved
 * back to a character boundary (never half a surrogate pair). `s` itself when it fits.
 */
export function truncateToTokens(s: string, maxTokens: number): string {
  if (!Number.isInteger(maxTokens) || maxTokens < 0 || maxTokens > 0xffff_ffff) {
    throw new InvalidArgumentError(
      'invalid_argument',
      `maxTokens must be a non-negative integer, got ${String(maxTokens)}`,
    );
  }
  return callNative(() => native.truncateToTokens(s, maxTokens));
}
