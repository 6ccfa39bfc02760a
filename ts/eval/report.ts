/**
 * What `noderag eval` prints: a table per config (noderag, then the naive baseline at the
 * same tokens) for people, or one JSON object for machines.
 */
import type { EvalRun } from './evaluate.js';
import type { Scored, Summary } from './score.js';

interface SummaryJson {
  answer_recall: number;
  /** null when no question has supporting entries. */
  support_recall: number | null;
  avg_tokens: number;
}

export interface EvalReportJson {
  folder: string;
  embedding: string;
  questions: number;
  /** Questions with supporting entries (support recall is over their entries). */
  questions_with_supporting: number;
  configs: {
    name: string;
    overrides: Record<string, unknown>;
    noderag: SummaryJson;
    naive_same_tokens: SummaryJson & { budget: number };
    /** noderag minus naive answer recall. */
    answer_recall_margin: number;
  }[];
  /** Per question and config: answer found, supporting entries found, context tokens. */
  per_question: {
    line: number;
    question: string;
    results: { noderag: QuestionJson; naive: QuestionJson }[];
  }[];
  warnings: string[];
}

interface QuestionJson {
  answer: boolean;
  support: number;
  supporting: number;
  tokens: number;
}

const round = (x: number, digits: number) => Number(x.toFixed(digits));

function summaryJson(s: Summary): SummaryJson {
  return {
    answer_recall: round(s.answer, 4),
    support_recall: s.support === null ? null : round(s.support, 4),
    avg_tokens: round(s.tokens, 1),
  };
}

const questionJson = (s: Scored): QuestionJson => ({
  answer: s.answer,
  support: s.support,
  supporting: s.gold,
  tokens: s.tokens,
});

export function evalReportJson(run: EvalRun): EvalReportJson {
  return {
    folder: run.folder,
    embedding: run.embedding,
    questions: run.questions.length,
    questions_with_supporting: run.targets.filter((t) => t.length > 0).length,
    configs: run.configs.map((c) => ({
      name: c.name,
      overrides: c.overrides,
      noderag: summaryJson(c.summary),
      naive_same_tokens: { ...summaryJson(c.naive.summary), budget: c.naive.budget },
      answer_recall_margin: round(c.summary.answer - c.naive.summary.answer, 4),
    })),
    per_question: run.questions.map((q, n) => ({
      line: q.line,
      question: q.question,
      results: run.configs.map((c) => ({
        noderag: questionJson(c.scored[n]!),
        naive: questionJson(c.naive.scored[n]!),
      })),
    })),
    warnings: run.warnings,
  };
}

function table(head: string[], rows: string[][], right: boolean[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (right[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

const pct = (x: number | null) => (x === null ? '–' : x.toFixed(2));
const int = (x: number) => Math.round(x).toLocaleString('en-US');

/** The human-readable report; `folder` names the project as the user gave it (default: absolute). */
export function formatEvalReport(run: EvalRun, folder = run.folder): string {
  const withSupport = run.targets.filter((t) => t.length > 0).length;
  const rows: string[][] = [];
  let short = false;
  for (const c of run.configs) {
    // Fewer tokens than the budget: the corpus ran out (every chunk is in the context).
    const ranOut = c.naive.summary.tokens < 0.97 * c.naive.budget;
    short ||= ranOut;
    rows.push([`noderag (${c.name})`, pct(c.summary.answer), pct(c.summary.support), int(c.summary.tokens)]);
    rows.push([
      `  naive top-k, same tokens${ranOut ? ' *' : ''}`,
      pct(c.naive.summary.answer),
      pct(c.naive.summary.support),
      int(c.naive.summary.tokens),
    ]);
  }
  const out = [
    `${run.questions.length} questions on ${folder}`,
    `embeddings: ${run.embedding}; ${run.chunks.length} text chunks`,
    '',
    table(['retriever', 'answer recall', 'support recall', 'avg tokens'], rows, [false, true, true, true]),
    '',
    'answer recall: share of questions with a gold answer in the context (normalised, on word',
    `boundaries). support recall: share of the supporting files/texts in the context (${withSupport} of ${run.questions.length}`,
    'questions have some). naive top-k: text chunks nearest to the question embedding, filled to',
    "the row above's average tokens per question.",
  ];
  if (short)
    out.push(
      `* below its budget: the whole corpus (${run.chunks.length} chunks) is smaller than the budget.`,
    );
  for (const w of run.warnings) out.push(`warning: ${w}`);
  return out.join('\n');
}
