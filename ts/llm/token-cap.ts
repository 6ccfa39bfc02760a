/**
 * The embedding input cap of docs/method.md §0: at most 8,000 o200k_base tokens of each input are
 * sent (the stored text is unchanged). Token counting is the Rust core's (ts/text); this
 * module only needs something that counts.
 */

export interface TokenCounter {
  countTokens(text: string): number;
  /** The first `maxTokens` tokens of `text` (ts/text has it); without it, prefixes are counted. */
  truncateToTokens?(text: string, maxTokens: number): string;
}

export const EMBEDDING_INPUT_TOKEN_CAP = 8000;

/** Moves an index back off the low half of a surrogate pair. */
function charBoundary(s: string, i: number): number {
  if (i > 0 && i < s.length) {
    const c = s.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff) return i - 1;
  }
  return i;
}

/**
 * The longest prefix of `text` with at most `maxTokens` tokens (the whole text when it fits).
 * A text of at most `maxTokens` UTF-8 bytes always fits (every token is at least one byte),
 * so the common case costs no counting at all.
 */
export function capTokens(text: string, maxTokens: number, counter: TokenCounter): string {
  if (Buffer.byteLength(text, 'utf8') <= maxTokens) return text;
  if (counter.truncateToTokens) return counter.truncateToTokens(text, maxTokens);
  if (counter.countTokens(text) <= maxTokens) return text;
  // Binary search on the prefix length: prefix token counts grow with the prefix.
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = charBoundary(text, Math.ceil((lo + hi) / 2));
    if (mid <= lo) break;
    if (counter.countTokens(text.slice(0, mid)) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  return text.slice(0, charBoundary(text, lo));
}
