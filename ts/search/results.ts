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

/**
 * What the lazy counts of one result need: the counter, the texts as they were when the
 * result was made, and the counts once read (or assigned).
 */
interface Counts {
  count: CountTokens;
  texts: Record<string, string>;
  values: Record<string, number | undefined>;
}

/** A result's Counts, under a symbol: not a field of the result, of its keys or of its JSON. */
const COUNTS = Symbol('noderag.counts');

type WithCounts = { [COUNTS]: Counts };

/**
 * The accessors are functions shared by every result, reading the state through `this`: an
 * accessor made of new closures for each result gave each result its own hidden class, and
 * made every question leave megabytes for the garbage collector to promote (bench/RESULTS.md
 * ## server).
 */
function countAccessors(name: string): PropertyDescriptor {
  return {
    enumerable: true,
    configurable: true,
    get(this: WithCounts) {
      const c = this[COUNTS];
      c.values[name] ??= c.count(c.texts[name]!);
      return c.values[name];
    },
    set(this: WithCounts, v: number) {
      this[COUNTS].values[name] = v;
    },
  };
}

const COUNT_ACCESSORS: Record<string, PropertyDescriptor> = {
  responseTokens: countAccessors('responseTokens'),
  retrievalTokens: countAccessors('retrievalTokens'),
};

/** An enumerable field computed on first read (assigning it replaces the value). */
function lazyCount(target: object, name: string, text: string, count: CountTokens): void {
  let counts = (target as Partial<WithCounts>)[COUNTS];
  if (!counts) {
    counts = { count, texts: {}, values: {} };
    Object.defineProperty(target, COUNTS, { value: counts });
  }
  counts.texts[name] = text;
  Object.defineProperty(target, name, COUNT_ACCESSORS[name]!);
}

/** Read-only, non-enumerable aliases of fields, with the same getter for every result. */
const ALIASES: Record<string, PropertyDescriptor> = Object.fromEntries(
  [
    ['response_tokens', 'responseTokens'],
    ['retrieval_info', 'retrievalInfo'],
    ['retrieval_tokens', 'retrievalTokens'],
  ].map(([name, field]) => [
    name,
    {
      get(this: Record<string, unknown>) {
        return this[field!];
      },
      enumerable: false,
      configurable: false,
    },
  ]),
);

function alias(target: object, names: readonly string[]): void {
  for (const name of names) Object.defineProperty(target, name, ALIASES[name]!);
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
  alias(r, ['response_tokens', 'retrieval_info', 'retrieval_tokens']);
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
  alias(r, ['retrieval_info', 'retrieval_tokens']);
  return r as unknown as SearchRetrieval;
}
