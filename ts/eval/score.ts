/**
 * Scoring one retrieval context against a question of the questions file:
 *
 * - answer: one of the gold answers, normalised as in the HotpotQA/SQuAD scripts, occurs in
 *   the normalised context on token boundaries (answer-match.ts);
 * - support: the share of the supporting entries represented in the context. An input file
 *   is represented when the context holds verbatim text of it: a text chunk of it, or a
 *   semantic unit whose source chunk is one of its chunks (derived items — attributes,
 *   relationships, high-level elements — do not count). A verbatim text is represented
 *   when its normalised form occurs in the normalised context. `supportChunk` counts files
 *   only through whole text chunks (not a unit, not a chunk cut at a budget);
 * - tokens: o200k_base tokens of the context string.
 */
import { containsAnswer, isYesNo } from './answer-match.js';
import type { EvalQuestion } from './questions.js';

/** One supporting entry, resolved against the indexed documents. */
export type SupportTarget = { kind: 'file'; path: string } | { kind: 'text'; text: string };

/** What the scorer needs of a context item (noderag's RetrievedItem, a baseline chunk). */
export interface ScoredItem {
  type: string;
  /** Relative path of the item's source document, or null. */
  document: string | null;
  /** A text chunk cut short (baseline budget fill). */
  partial?: boolean;
}

export interface Scored {
  answer: boolean;
  /** Every gold answer is "yes" or "no": a string match says little about those. */
  yesNo: boolean;
  /** Supporting entries represented in the context. */
  support: number;
  /** Supporting files whose whole text chunk is in the context (verbatim texts as `support`). */
  supportChunk: number;
  /** Supporting entries of the question. */
  gold: number;
  tokens: number;
}

const normPath = (p: string) =>
  p
    .replace(/\\/g, '/')
    .replace(/^(\.\/)+/, '')
    .replace(/^input\//, '');

/**
 * Resolves each question's `supporting` entries: an entry naming an indexed document (its
 * path relative to input/, or a file name that only one document has) is a file, anything
 * else a verbatim text. Entries that look like a file name but match no document are texts
 * with a warning (most likely a typo or a file that is not indexed).
 */
export function resolveSupporting(
  questions: readonly EvalQuestion[],
  documents: readonly string[],
): { targets: SupportTarget[][]; warnings: string[] } {
  const byPath = new Map(documents.map((d) => [normPath(d), d]));
  const byName = new Map<string, string[]>();
  for (const d of documents) {
    const name = normPath(d).split('/').pop()!;
    byName.set(name, [...(byName.get(name) ?? []), d]);
  }
  const warnings: string[] = [];
  const targets = questions.map((q) =>
    q.supporting.map((s): SupportTarget => {
      const p = normPath(s.trim());
      const exact = byPath.get(p);
      if (exact !== undefined) return { kind: 'file', path: exact };
      const named = byName.get(p);
      if (named?.length === 1) return { kind: 'file', path: named[0]! };
      if (!/\s/.test(p) && /\.\w{1,5}$/.test(p)) {
        warnings.push(
          `line ${q.line}: supporting ${JSON.stringify(s)} is no indexed input file${named ? ' (several files have this name: give the path relative to input/)' : ''}; it is matched as a verbatim text`,
        );
      }
      return { kind: 'text', text: s };
    }),
  );
  return { targets, warnings };
}

/**
 * Scores one context: `texts` are where answers and verbatim supporting texts are looked
 * for, each on its own (an answer must not be found across two of them); `items` give the
 * source documents. For noderag's and the baseline's contexts `texts` are the items' own
 * texts, not the context string, whose item numbers ("7. ") and section headers ("text")
 * matched answers such as "7" or "Text" in every context.
 */
export function scoreContext(
  answers: readonly string[],
  targets: readonly SupportTarget[],
  texts: readonly string[],
  items: readonly ScoredItem[],
  tokens: number,
): Scored {
  const found = (s: string) => texts.some((t) => containsAnswer(t, s));
  const verbatim = new Set<string>();
  const whole = new Set<string>();
  for (const it of items) {
    if (!it.document || (it.type !== 'text' && it.type !== 'semantic_unit')) continue;
    verbatim.add(it.document);
    if (it.type === 'text' && !it.partial) whole.add(it.document);
  }
  let support = 0;
  let supportChunk = 0;
  for (const t of targets) {
    if (t.kind === 'file') {
      if (verbatim.has(t.path)) support++;
      if (whole.has(t.path)) supportChunk++;
    } else if (found(t.text)) {
      support++;
      supportChunk++;
    }
  }
  return {
    answer: answers.some(found),
    yesNo: answers.every(isYesNo),
    support,
    supportChunk,
    gold: targets.length,
    tokens,
  };
}

export interface Summary {
  questions: number;
  /** Share of questions with a gold answer in the context. */
  answer: number;
  /** The same without yes/no questions (NaN when every question is one). */
  answerNoYesNo: number;
  /** Share of all supporting entries represented; null when no question has any. */
  support: number | null;
  supportChunk: number | null;
  /** Share of questions with supporting entries whose entries are all represented. */
  bothSupport: number | null;
  /** Average context tokens. */
  tokens: number;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);

export function summarise(s: readonly Scored[]): Summary {
  const gold = s.reduce((a, x) => a + x.gold, 0);
  const withGold = s.filter((x) => x.gold > 0);
  return {
    questions: s.length,
    answer: mean(s.map((x) => (x.answer ? 1 : 0))),
    answerNoYesNo: mean(s.filter((x) => !x.yesNo).map((x) => (x.answer ? 1 : 0))),
    support: gold ? s.reduce((a, x) => a + x.support, 0) / gold : null,
    supportChunk: gold ? s.reduce((a, x) => a + x.supportChunk, 0) / gold : null,
    bothSupport: withGold.length ? mean(withGold.map((x) => (x.support === x.gold ? 1 : 0))) : null,
    tokens: mean(s.map((x) => x.tokens)),
  };
}
