/**
 * A text cut into word pieces: one word and the whitespace after it (leading whitespace goes
 * with the first word). Concatenated, the pieces are the text. What a reply that did not come
 * as a stream is sent as when a stream is asked for (the `local` provider, a cached reply).
 */
export function textPieces(text: string): string[] {
  return text.match(/\s*\S+\s*/gu) ?? (text === '' ? [] : [text]);
}
