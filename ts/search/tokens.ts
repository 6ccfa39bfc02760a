/** The o200k_base token counter of the Rust core (ts/text), for the counts search reports (§6.6). */
import type { TokenCounter } from '../llm/token-cap.js';
import { countTokens } from '../text/index.js';

export const o200kTokenCounter: TokenCounter = { countTokens };
