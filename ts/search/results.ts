/**
 * The objects `NodeSearch.answer` and `NodeSearch.search` resolve to (docs/method.md §7.4):
 * camelCase fields, plus read-only, non-enumerable snake_case aliases named as in the
 * original API, so `JSON.stringify` shows the camelCase fields only.
 *
 * Token counts are computed on first read: counting a 10 KB context costs about as much as
 * the whole retrieval, and the HTTP routes never read them.
 */
import type { AnswerResult, RESULT_JSON, ResultJson } from './engine-types.js';
import type { RetrievedItem } from './retrieve.js';
import type { Citation, Source } from './sources.js';

export interface SearchAnswer extends AnswerResult {
  /** The context's items in context order (the same as `search` returns), so a caller can show
   * the sections of `retrievalInfo` without parsing it. */
  items: RetrievedItem[];
  /** Input files of the items, with the numbers `[n]` of their items and those the answer cites. */
  sources: Source[];
  /** The numbers the answer cites, resolved to their items (ascending). */
  citations: Citation[];
  readonly response_tokens: number;
  readonly retrieval_info: string;
  readonly retrieval_tokens: number;
}

export interface SearchRetrieval {
  /** `retrievalInfo` and `sources` already serialised (engine-types.ts RESULT_JSON). */
  [RESULT_JSON]?: ResultJson;
  /** The context string of docs/method.md §6.6 (empty when nothing was retrieved). */
  retrievalInfo: string;
  /** o200k_base tokens of `retrievalInfo`. */
  retrievalTokens: number;
  /** The context's items in context order; item n (1-based) is `[n]` in `sources`. */
  items: RetrievedItem[];
  /** Input files of the items (`cited` empty). */
  sources: Source[];
  readonly retrieval_info: string;
  readonly retrieval_tokens: number;
}

type CountTokens = (text: string) => number;

/** An enumerable field computed on first read (assigning it replaces the value). */
function lazyCount(target: object, name: string, text: string, count: CountTokens): void {
  let value: number | undefined;
  Object.defineProperty(target, name, {
    enumerable: true,
    configurable: true,
    get: () => {
      value ??= count(text);
      return value;
    },
    set: (v: number) => {
      value = v;
    },
  });
}

function alias(target: object, names: Record<string, string>): void {
  for (const [name, field] of Object.entries(names)) {
    Object.defineProperty(target, name, {
      get: () => (target as Record<string, unknown>)[field],
      enumerable: false,
      configurable: false,
    });
  }
}

export function answerResult(
  response: string,
  retrievalInfo: string,
  items: RetrievedItem[],
  count: CountTokens,
  cited: { sources: Source[]; citations: Citation[] } = { sources: [], citations: [] },
): SearchAnswer {
  const r = { response } as Record<string, unknown>;
  lazyCount(r, 'responseTokens', response, count);
  r.retrievalInfo = retrievalInfo;
  lazyCount(r, 'retrievalTokens', retrievalInfo, count);
  r.items = items;
  r.sources = cited.sources;
  r.citations = cited.citations;
  alias(r, {
    response_tokens: 'responseTokens',
    retrieval_info: 'retrievalInfo',
    retrieval_tokens: 'retrievalTokens',
  });
  return r as unknown as SearchAnswer;
}

export function retrievalResult(
  retrievalInfo: string,
  items: RetrievedItem[],
  count: CountTokens,
  sources: Source[] = [],
): SearchRetrieval {
  const r = { retrievalInfo } as Record<string, unknown>;
  lazyCount(r, 'retrievalTokens', retrievalInfo, count);
  r.items = items;
  r.sources = sources;
  alias(r, { retrieval_info: 'retrievalInfo', retrieval_tokens: 'retrievalTokens' });
  return r as unknown as SearchRetrieval;
}
