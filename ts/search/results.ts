/**
 * The objects `NodeSearch.answer` and `NodeSearch.search` resolve to (method.md §7.4):
 * camelCase fields, plus read-only, non-enumerable snake_case aliases named as in the
 * original API, so `JSON.stringify` shows the camelCase fields only.
 */
import type { AnswerResult } from '../server/engine.js';
import type { RetrievedItem } from './retrieve.js';

export interface SearchAnswer extends AnswerResult {
  readonly response_tokens: number;
  readonly retrieval_info: string;
  readonly retrieval_tokens: number;
}

export interface SearchRetrieval {
  /** The context string of method.md §6.6 (empty when nothing was retrieved). */
  retrievalInfo: string;
  /** o200k_base tokens of `retrievalInfo`. */
  retrievalTokens: number;
  /** The context's items in context order. */
  items: RetrievedItem[];
  readonly retrieval_info: string;
  readonly retrieval_tokens: number;
}

function alias<T extends object>(target: T, names: Record<string, keyof T>): void {
  for (const [name, field] of Object.entries(names)) {
    Object.defineProperty(target, name, { get: () => target[field], enumerable: false, configurable: false });
  }
}

export function answerResult(fields: AnswerResult): SearchAnswer {
  const r = { ...fields };
  alias(r, {
    response_tokens: 'responseTokens',
    retrieval_info: 'retrievalInfo',
    retrieval_tokens: 'retrievalTokens',
  });
  return r as SearchAnswer;
}

export function retrievalResult(fields: {
  retrievalInfo: string;
  retrievalTokens: number;
  items: RetrievedItem[];
}): SearchRetrieval {
  const r = { ...fields };
  alias(r, { retrieval_info: 'retrievalInfo', retrieval_tokens: 'retrievalTokens' });
  return r as SearchRetrieval;
}
