/**
 * The text functions the index model needs (normal forms and hash ids, docs/method.md §0/§2).
 * They live in the Rust core; this interface lets the model be tested with the real ones
 * (ts/text) while keeping ts/model free of a direct addon dependency.
 */
export interface TextOps {
  /** H(tag, s): lowercase hex SHA-256 of `tag:s`. */
  hashId(tag: string, s: string): string;
  normText(s: string): string;
  fold(s: string): string;
}
