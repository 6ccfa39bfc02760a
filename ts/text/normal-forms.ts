/**
 * The normal forms of docs/method.md §0 and the document clean-up of §3.2. They exist only in the
 * Rust core (crates/noderag_text): JS `trim()` and `\s` treat U+FEFF as whitespace, so a copy
 * here would drift from the ids the core computes.
 */
import { callNative, native } from '../native.js';
import type { TextLanguage } from './language.js';

/** NFKC; trim Unicode `White_Space`; each whitespace run becomes one space. */
export function normText(s: string): string {
  return callNative(() => native.normText(s));
}

/** `normText`, then full locale-independent upper-casing for English (`ß` → `SS`); Chinese keeps case. */
export function normEntity(s: string, language: TextLanguage): string {
  return callNative(() => native.normEntity(s, language));
}

/** `normText`, then full lower-casing. For matching only (§6.3). */
export function fold(s: string): string {
  return callNative(() => native.fold(s));
}

/** Extracted document text → indexed text: CRLF/CR → LF, control characters other than TAB/LF removed. */
export function cleanText(s: string): string {
  return callNative(() => native.cleanDocumentText(s));
}
