/**
 * HotpotQA-100 as questions of `noderag eval` (ts/eval): each question with its gold answer
 * and, as supporting entries, the input files of its gold paragraphs (the titles of its
 * supporting_facts; every paragraph is its own input file and fits one chunk). Scoring, the
 * naive baseline and the report numbers all come from ts/eval, the code `noderag eval` runs.
 */
import type { EvalQuestion } from '../../ts/eval/index.js';
import { type HotpotQuestion, loadCorpus, loadQuestions, paragraphFileName } from './hotpot.js';

export interface HotpotEval {
  /** The 100 questions as `noderag eval` reads them (line = question number, 1-based). */
  questions: EvalQuestion[];
  hotpot: HotpotQuestion[];
}

export function hotpotEvalQuestions(): HotpotEval {
  const fileOfTitle = new Map<string, string>();
  Object.keys(loadCorpus()).forEach((title, i) => {
    fileOfTitle.set(title, paragraphFileName(i, title));
  });
  const hotpot = loadQuestions();
  const questions = hotpot.map((q, n) => ({
    question: q.question,
    answers: [q.answer],
    supporting: [...new Set(q.supporting_facts.map(([t]) => t))].map((t) => {
      const f = fileOfTitle.get(t);
      if (!f) throw new Error(`question ${q._id}: supporting paragraph "${t}" is not in corpus.json`);
      return f;
    }),
    line: n + 1,
  }));
  return { questions, hotpot };
}
