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
   * the sections of `retrievalInfo` without parsing it. Frozen, as are `sources`. */
  items: readonly RetrievedItem[];
  /** Input files of the items, with the numbers `[n]` of their items and those the answer cites. */
  sources: readonly Source[];
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
  /** The context's items in context order; item n (1-based) is `[n]` in `sources`. Frozen (they may be shared through the retrieval cache), as are `sources`. */
  items: readonly RetrievedItem[];
  /** Input files of the items (`cited` empty). */
  sources: readonly Source[];
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
  /** The texts counted, or how to make them (a retrieval's context is made when first read). */
  texts: Record<string, string | (() => string)>;
  /** Counts known another way than counting the text (a retrieval's, from per-node counts). */
  given: Record<string, () => number>;
  values: Record<string, number | undefined>;
  /** `retrievalInfo` when it is made on first read: how to make it, and it once made or assigned. */
  infoOf?: () => string;
  info?: string;
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
      if (c.values[name] === undefined) {
        const given = c.given[name];
        const text = c.texts[name]!;
        c.values[name] = given ? given() : c.count(typeof text === 'function' ? text() : text);
      }
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

/** The Counts of `target`, made on first use. */
function countsOf(target: object, count: CountTokens): Counts {
  let counts = (target as Partial<WithCounts>)[COUNTS];
  if (!counts) {
    counts = { count, texts: {}, values: {}, given: {} };
    Object.defineProperty(target, COUNTS, { value: counts });
  }
  return counts;
}

/** An enumerable field computed on first read (assigning it replaces the value). */
function lazyCount(target: object, name: string, text: string | (() => string), count: CountTokens): void {
  countsOf(target, count).texts[name] = text;
  Object.defineProperty(target, name, COUNT_ACCESSORS[name]!);
}

/**
 * `retrievalInfo` as an enumerable field made on first read (assigning it replaces it, as
 * for a plain field; the token count stays that of the context made).
 */
const LAZY_INFO: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: WithCounts) {
    const c = this[COUNTS];
    c.info ??= c.infoOf!();
    return c.info;
  },
  set(this: WithCounts, v: string) {
    this[COUNTS].info = v;
  },
};

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
  /** The context's token count when the caller has it without counting (see retrievalResult). */
  retrievalTokens?: () => number,
): SearchAnswer {
  const r = { response } as Record<string, unknown>;
  lazyCount(r, 'responseTokens', response, count);
  r.retrievalInfo = retrievalInfo;
  lazyCount(r, 'retrievalTokens', retrievalInfo, count);
  if (retrievalTokens) countsOf(r, count).given.retrievalTokens = retrievalTokens;
  r.items = items;
  r.sources = cited.sources;
  r.citations = cited.citations;
  alias(r, ['response_tokens', 'retrieval_info', 'retrieval_tokens']);
  return r as unknown as SearchAnswer;
}

/**
 * `retrievalInfo`: the context, or how to make it when first read. `tokens`: its token count
 * when the caller has it without counting the text (the same number `count` would give).
 */
export function retrievalResult(
  retrievalInfo: string | (() => string),
  items: RetrievedItem[],
  count: CountTokens,
  sources: Source[] = [],
  tokens?: () => number,
): SearchRetrieval {
  let r: Record<string, unknown>;
  if (typeof retrievalInfo === 'string') r = { retrievalInfo };
  else {
    r = {};
    countsOf(r, count).infoOf = retrievalInfo;
    Object.defineProperty(r, 'retrievalInfo', LAZY_INFO);
  }
  lazyCount(r, 'retrievalTokens', retrievalInfo, count);
  if (tokens) countsOf(r, count).given.retrievalTokens = tokens;
  r.items = items;
  r.sources = sources;
  alias(r, ['retrieval_info', 'retrieval_tokens']);
  return r as unknown as SearchRetrieval;
}
