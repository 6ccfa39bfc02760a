/**
 * LightRAG's row of the quality bench (issue 20 item 2): its mix-mode contexts scored by the
 * same ts/eval code as noderag's rows, at its own token count (o200k_base, countTokens, the
 * tokenizer of every row), and noderag and the naive baseline at that same count:
 *
 *   - naive, budget fill: the text chunks by distance to the question embedding, filled to
 *     LightRAG's average tokens (ts/eval fillBudget), as the "naive, budget = …" rows;
 *   - naive, top-k: the k whose average tokens come closest;
 *   - noderag, scaled: the project's search settings with every count key (HNSW_results,
 *     cross_node, Enode, Rnode, Hnode) multiplied by one factor (quarter steps), the factor
 *     whose average tokens come closest. noderag has no token budget, so a context the size of
 *     LightRAG's is asked for this way: more of everything it returns, nothing else changed.
 */
import {
  containsAnswer,
  type EvalRun,
  fillBudget,
  type Scored,
  type Summary,
  summarise,
  topK,
} from '../../ts/eval/index.js';
import { countTokens } from '../../ts/text/index.js';
import { closestByTokens, lightragContextBlocks, lightragContextItems } from './lightrag.js';
import {
  describeSettings,
  type SearchSettings,
  type SweepInputs,
  scoreSettings,
  settingsOf,
} from './quality-sweep.js';
import { fmt, markdownTable, mean } from './stats.js';

/** The count keys of the search settings (how many of each kind of result). */
export const COUNT_KEYS = ['HNSW_results', 'cross_node', 'Enode', 'Rnode', 'Hnode'] as const;
/** Quarter steps: step 4 is the project's settings. */
export const STEPS_PER_UNIT = 4;

/** `base` with each count key × step / 4, rounded, kept within 1..1000 (the schema's maximum). */
export function scaledSettings(base: SearchSettings, step: number): SearchSettings {
  const s = { ...base };
  for (const k of COUNT_KEYS) {
    s[k] = Math.min(1000, Math.max(1, Math.round((base[k] * step) / STEPS_PER_UNIT)));
  }
  return s;
}

export interface LightragRows {
  /** LightRAG's average context tokens, the target of the other rows. */
  target: number;
  lightrag: Summary;
  noderag: { summary: Summary; settings: string; factor: number };
  naiveFill: Summary;
  naiveTopK: { k: number; summary: Summary };
  /** Markdown: the table, the token split of LightRAG's contexts, per-question agreement. */
  text: string;
  /** The RESULT line's additions. */
  result: string;
}

const avgTokens = (s: readonly Scored[]) => mean(s.map((x) => x.tokens));

/**
 * The rows for LightRAG's `contexts` (one per question of `run`, '' when empty). `x` holds
 * the loaded index, question embeddings and decompositions of the e5 project (as the sweep
 * uses them); `ours` is noderag's default-config summary on the same questions.
 */
export function lightragRows(
  run: EvalRun,
  x: SweepInputs,
  contexts: readonly string[],
  ours: Summary,
  label: string,
): LightragRows {
  const all = contexts.map((_, n) => n);
  const tokens = contexts.map((c) => (c ? countTokens(c) : 0));
  // LightRAG names a chunk's file as the driver inserted it (the name in input/); the scorer
  // compares with the index's document paths, which may carry a folder.
  const docPath = new Map<string, string>();
  for (const t of run.targets.flat()) if (t.kind === 'file') docPath.set(t.path.split('/').pop()!, t.path);
  const items = (c: string) =>
    lightragContextItems(c).map((it) => ({
      ...it,
      document: it.document && (docPath.get(it.document) ?? it.document),
    }));
  // Answers are looked for in LightRAG's whole context: its entity and relation blocks are
  // context too, and hold no item numbers.
  const lrScored = contexts.map((c, n) => run.score(n, [c], items(c), tokens[n]!));
  const lightrag = summarise(lrScored);
  const target = Math.round(lightrag.tokens);

  const naiveFillScored = run.rankings.map((r, n) => run.scoreBaseline(n, fillBudget(run.chunks, r, target)));
  const naiveFill = summarise(naiveFillScored);
  const topKScored = (k: number) => run.rankings.map((r, n) => run.scoreBaseline(n, topK(run.chunks, r, k)));
  const kPick = closestByTokens(target, (k) => avgTokens(topKScored(k)), 1, run.chunks.length);
  const naiveTopK = { k: kPick.value, summary: summarise(topKScored(kPick.value)) };

  const base = settingsOf(x.base);
  const oursAt = (step: number) => scoreSettings(x, scaledSettings(base, step), all);
  const step = closestByTokens(target, (s) => avgTokens(oursAt(s)), 1, 250 * STEPS_PER_UNIT).value;
  const oursScored = oursAt(step);
  const noderag = {
    summary: summarise(oursScored),
    settings: describeSettings(scaledSettings(base, step), base),
    factor: step / STEPS_PER_UNIT,
  };

  const cells = (name: string, s: Summary) => [
    name,
    fmt(s.answer, 2),
    fmt(s.answerNoYesNo, 2),
    fmt(s.support ?? Number.NaN, 3),
    fmt(s.bothSupport ?? Number.NaN, 2),
    fmt(s.tokens, 0),
    fmt(s.tokens / target, 2),
  ];
  const table = markdownTable(
    [
      'retriever',
      'answer recall',
      'answer recall w/o yes/no',
      'support recall',
      'both gold paragraphs',
      'avg tokens',
      'tokens / LightRAG',
    ],
    [
      cells(`LightRAG (${label}, mix mode, context only)`, lightrag),
      cells(`noderag, count keys ×${fmt(noderag.factor)} (${noderag.settings})`, noderag.summary),
      cells(`naive, budget = LightRAG avg (${target} tok)`, naiveFill),
      cells(`naive, top-k k=${naiveTopK.k} (closest to LightRAG)`, naiveTopK.summary),
      cells('noderag (default config, its own tokens)', ours),
    ],
  );

  // Where LightRAG's tokens go, and which section holds the answer.
  const parts = { entities: 0, relationships: 0, chunks: 0, other: 0 };
  const answerIn = { entities: 0, relationships: 0, chunks: 0 };
  const answers = run.questions.map((q) => q.answers);
  contexts.forEach((c, n) => {
    if (!c) return;
    const b = lightragContextBlocks(c);
    const t = {
      entities: countTokens(b.entities),
      relationships: countTokens(b.relationships),
      chunks: countTokens(b.chunks),
    };
    parts.entities += t.entities;
    parts.relationships += t.relationships;
    parts.chunks += t.chunks;
    parts.other += tokens[n]! - t.entities - t.relationships - t.chunks;
    for (const key of ['entities', 'relationships', 'chunks'] as const) {
      if (answers[n]!.some((a) => containsAnswer(b[key], a))) answerIn[key]++;
    }
  });
  const total = tokens.reduce((a, b) => a + b, 0) || 1;
  const pct = (v: number) => `${fmt((100 * v) / total, 0)}%`;
  const chunkCount = mean(contexts.map((c) => lightragContextItems(c).length));
  const both = (a: Scored[], b: Scored[]) => a.filter((s, n) => s.answer && !b[n]!.answer).length;
  const notes = [
    `LightRAG's context tokens: entities ${pct(parts.entities)}, relationships ${pct(parts.relationships)}, ` +
      `document chunks ${pct(parts.chunks)} (${fmt(chunkCount, 1)} chunks per question), headings and reference list ` +
      `${pct(parts.other)}; the answer is in the entity block for ${answerIn.entities} questions, in the ` +
      `relationship block for ${answerIn.relationships}, in the chunks for ${answerIn.chunks}; ` +
      `${contexts.filter((c) => !c).length} empty contexts.`,
    `Per question at LightRAG's tokens: noderag has the answer where LightRAG has not in ${both(oursScored, lrScored)} ` +
      `questions, LightRAG where noderag has not in ${both(lrScored, oursScored)}; naive (budget fill) where ` +
      `LightRAG has not in ${both(naiveFillScored, lrScored)}, LightRAG where naive has not in ${both(lrScored, naiveFillScored)}.`,
  ];
  const result =
    `lightrag_answer_recall=${fmt(lightrag.answer)} lightrag_tokens=${target} ` +
    `noderag_at_lightrag_tokens=${fmt(noderag.summary.answer)} naive_at_lightrag_tokens=${fmt(naiveFill.answer)}`;
  return { target, lightrag, noderag, naiveFill, naiveTopK, text: [table, '', ...notes].join('\n'), result };
}
