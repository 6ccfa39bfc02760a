/**
 * Scoring of retrieval contexts on HotpotQA-100 and the naive top-chunks baseline, shared by
 * the quality benchmark (bench/quality.ts) and its parameter sweep (bench/lib/quality-sweep.ts).
 *
 * - answer: the gold answer, normalised as in the HotpotQA/SQuAD scripts, occurs in the
 *   normalised context on token boundaries (answer-match.ts);
 * - support: gold supporting paragraphs with verbatim text in the context (their text chunk,
 *   or a sentence-level semantic unit whose source chunk is the paragraph's; every paragraph
 *   is its own input file and fits one chunk); `supportChunk` counts whole text chunks only;
 * - tokens: o200k_base tokens of the context string.
 */
import { basename } from 'node:path';
import { type ContextItem, formatContext } from '../../ts/search/context.js';
import { countTokens, truncateToTokens } from '../../ts/text/index.js';
import { containsAnswer } from './answer-match.js';
import { type HotpotQuestion, loadCorpus, loadQuestions, paragraphFileName } from './hotpot.js';
import type { Chunk } from './naive.js';
import { mean } from './stats.js';

export interface Scored {
  answer: boolean;
  /** Gold paragraphs with verbatim text in the context. */
  support: number;
  /** Gold paragraphs whose whole text chunk is in the context. */
  supportChunk: number;
  gold: number;
  tokens: number;
}

export interface ScoredItem {
  type: string;
  document: string | null;
  /** A text chunk cut short (baseline budget fill). */
  partial?: boolean;
}

/** The 100 questions with the input files of their gold paragraphs. */
export class QualityQuestions {
  readonly questions: HotpotQuestion[];
  readonly #gold: string[][];

  constructor() {
    const fileOfTitle = new Map<string, string>();
    Object.keys(loadCorpus()).forEach((title, i) => {
      fileOfTitle.set(title, paragraphFileName(i, title));
    });
    this.questions = loadQuestions();
    this.#gold = this.questions.map((q) =>
      [...new Set(q.supporting_facts.map(([t]) => t))].map((t) => {
        const f = fileOfTitle.get(t);
        if (!f) throw new Error(`question ${q._id}: supporting paragraph "${t}" is not in corpus.json`);
        return f;
      }),
    );
  }

  /** Input file names of question `n`'s gold paragraphs. */
  goldFiles(n: number): readonly string[] {
    return this.#gold[n]!;
  }

  score(n: number, context: string, items: readonly ScoredItem[], tokens: number): Scored {
    const gold = this.#gold[n]!;
    const verbatim = new Set<string>();
    const whole = new Set<string>();
    for (const it of items) {
      if (!it.document || (it.type !== 'text' && it.type !== 'semantic_unit')) continue;
      const f = basename(it.document);
      verbatim.add(f);
      if (it.type === 'text' && !it.partial) whole.add(f);
    }
    return {
      answer: containsAnswer(context, this.questions[n]!.answer),
      support: gold.filter((g) => verbatim.has(g)).length,
      supportChunk: gold.filter((g) => whole.has(g)).length,
      gold: gold.length,
      tokens,
    };
  }
}

export interface Summary {
  answer: number;
  answerNoYesNo: number;
  support: number;
  supportChunk: number;
  bothSupport: number;
  tokens: number;
}

/** Means over `s`; `keep[i]` false leaves question i out of answerNoYesNo. */
export function summarise(s: readonly Scored[], notYesNo: readonly boolean[]): Summary {
  const kept = s.filter((_, i) => notYesNo[i]);
  const gold = s.reduce((a, x) => a + x.gold, 0);
  return {
    answer: mean(s.map((x) => (x.answer ? 1 : 0))),
    answerNoYesNo: mean(kept.map((x) => (x.answer ? 1 : 0))),
    support: s.reduce((a, x) => a + x.support, 0) / gold,
    supportChunk: s.reduce((a, x) => a + x.supportChunk, 0) / gold,
    bothSupport: mean(s.map((x) => (x.support === x.gold ? 1 : 0))),
    tokens: mean(s.map((x) => x.tokens)),
  };
}

// ----------------------------------------------------------------------------- naive baseline

export interface BaselineItem extends ContextItem {
  document: string;
  partial: boolean;
}

function asItem(c: Chunk, text = c.text, partial = false): BaselineItem {
  return { id: c.id, type: 'text', text, document: c.document, partial };
}

export interface BaselineContext {
  context: string;
  items: BaselineItem[];
}

/** Whole chunks in rank order while they fit `budget` tokens; the next one cut to fill it. */
export function fillBudget(
  chunks: readonly Chunk[],
  ranking: readonly number[],
  budget: number,
): BaselineContext {
  const items: BaselineItem[] = [];
  let context = '';
  for (const i of ranking) {
    const c = chunks[i]!;
    const whole = formatContext([...items, asItem(c)]);
    if (countTokens(whole) <= budget) {
      items.push(asItem(c));
      context = whole;
      continue;
    }
    // Cut the chunk: shrink its token allowance until the whole context fits the budget.
    let allowance = budget - (context ? countTokens(context) : 0);
    while (allowance > 0) {
      const piece = truncateToTokens(c.text, allowance);
      const candidate = formatContext([...items, asItem(c, piece, true)]);
      if (piece.trim() && countTokens(candidate) <= budget) {
        items.push(asItem(c, piece, true));
        context = candidate;
        break;
      }
      allowance -= Math.max(1, countTokens(candidate) - budget);
    }
    break;
  }
  return { context, items };
}

export function topK(chunks: readonly Chunk[], ranking: readonly number[], k: number): BaselineContext {
  const items = ranking.slice(0, k).map((i) => asItem(chunks[i]!));
  return { context: formatContext(items), items };
}

/**
 * Per question, the smallest budget (tokens, searched up to `max`) at which the naive
 * budget-fill context contains the gold answer, or Infinity. The fill at a larger budget
 * extends the one at a smaller budget, so "answer at budget B" is B ≥ this threshold; the
 * sweep uses it to price any token count without refilling. (bench/quality.ts still fills
 * its reported budgets for real.)
 */
export function naiveAnswerThresholds(
  qs: QualityQuestions,
  chunks: readonly Chunk[],
  rankings: readonly (readonly number[])[],
  max = 8000,
): number[] {
  return rankings.map((ranking, n) => {
    const answer = qs.questions[n]!.answer;
    const has = (b: number) => containsAnswer(fillBudget(chunks, ranking, b).context, answer);
    if (!has(max)) return Number.POSITIVE_INFINITY;
    let lo = 0; // no answer at lo (empty context)
    let hi = max; // answer at hi
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (has(mid)) hi = mid;
      else lo = mid;
    }
    return hi;
  });
}
