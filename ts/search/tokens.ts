/** The o200k_base token counter of the Rust core, for the counts search reports (§6.6). */
import type { TokenCounter } from '../llm/token-cap.js';
import { callNative, native } from '../native.js';

export const o200kTokenCounter: TokenCounter = {
  countTokens: (text) => callNative(() => native.countTokens(text)),
};
