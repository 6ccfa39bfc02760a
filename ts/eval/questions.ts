/**
 * The questions file of `noderag eval`: JSON Lines, one question per line,
 *
 *   {"question": "Who founded Halden Observatory?", "answers": ["Margaret Okafor"],
 *    "supporting": ["01-founding.md"]}
 *
 * `answers` are gold answers (any one found counts); `supporting` (optional) names the
 * evidence: input files (paths relative to input/) or verbatim texts. Blank lines are
 * skipped; other keys (an id, …) are ignored. A malformed line is one QuestionsFileError naming the file, the line and what
 * was expected.
 */
import { NodeRagError } from '../errors.js';
import { validateQuestion } from '../search/question.js';

export interface EvalQuestion {
  question: string;
  /** Gold answers: the question counts as answered when one of them is in the context. */
  answers: string[];
  /** Input files (relative to input/) or verbatim texts holding the evidence; may be empty. */
  supporting: string[];
  /** 1-based line of the questions file (0 for questions made in code). */
  line: number;
}

const QUESTION_LINE_SHAPE =
  '{"question": string, "answers": [string, ...], "supporting": [string, ...] (optional)}';

export class QuestionsFileError extends NodeRagError {
  readonly file: string;
  /** 1-based line, or 0 for a problem of the whole file. */
  readonly line: number;
  constructor(file: string, line: number, problem: string) {
    super('invalid_questions', `${file}${line > 0 ? `:${line}` : ''}: ${problem}`);
    this.file = file;
    this.line = line;
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string')
    return `a string (${JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v)})`;
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

function stringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === 'string' && s.trim() !== '');
}

/** Parses the text of a questions file; `file` names it in errors. */
export function parseQuestions(text: string, file: string): EvalQuestion[] {
  const out: EvalQuestion[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    const fail = (problem: string): never => {
      throw new QuestionsFileError(file, line, problem);
    };
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      fail(`not valid JSON (${(e as Error).message}); expected one object per line: ${QUESTION_LINE_SHAPE}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      fail(`expected an object ${QUESTION_LINE_SHAPE}, got ${describe(value)}`);
    const o = value as Record<string, unknown>;
    if (typeof o.question !== 'string' || o.question.trim() === '')
      fail(
        `"question": expected a non-empty string, got ${o.question === undefined ? 'nothing' : describe(o.question)}`,
      );
    // The search's own checks (length), here so the file and line are named before any
    // question is sent to the provider.
    try {
      validateQuestion(o.question);
    } catch (e) {
      fail((e as Error).message);
    }
    if (!stringList(o.answers) || o.answers.length === 0)
      fail(
        `"answers": expected a non-empty array of non-empty strings, got ${o.answers === undefined ? 'nothing' : describe(o.answers)}`,
      );
    if (o.supporting !== undefined && o.supporting !== null && !stringList(o.supporting))
      fail(
        `"supporting": expected an array of non-empty strings (input files or verbatim texts), got ${describe(o.supporting)}`,
      );
    out.push({
      question: o.question as string,
      answers: o.answers as string[],
      supporting: (o.supporting as string[] | undefined) ?? [],
      line,
    });
  });
  if (out.length === 0)
    throw new QuestionsFileError(file, 0, `no questions; expected one per line: ${QUESTION_LINE_SHAPE}`);
  return out;
}
