/**
 * `npm run bench -- quality [--embedding-base-url URL --embedding-model NAME --dim N [--space l2|cosine]]`
 *
 * Retrieval quality on HotpotQA-100: the corpus (one input file per paragraph) is indexed by
 * the real CLI; each of the 100 questions goes through NodeSearch.search, and the context is
 * scored for
 *   - answer recall: the gold answer, normalised as in the HotpotQA/SQuAD scripts (lower case,
 *     no punctuation, no articles), occurs in the normalised context on token boundaries;
 *   - support recall: the share of the 2 gold supporting paragraphs the context contains. A
 *     paragraph is contained when the context holds verbatim text of it: its text chunk or a
 *     semantic unit (a sentence, with the local provider) whose source chunk is the paragraph's
 *     (every paragraph is its own file and fits one chunk). "chunk" columns count whole text
 *     chunks only;
 *   - tokens: o200k_base tokens of the context string.
 * Naive baseline in the same run, same embeddings: text chunks ranked by exact distance to the
 * question's embedding (the stored text-chunk vectors). "budget" rows give every question a
 * token budget equal to noderag's average context (× 1 and × 1.67) and fill it with whole
 * chunks in rank order, the last one cut at the budget; "top-k" rows use a fixed k, the one
 * whose average tokens come closest. The RESULT line's baseline is the budget row at × 1.
 *
 * Default: the offline `local` provider for everything (bench/.data/hotpot-local). With
 * --embedding-base-url the embeddings come from that OpenAI-compatible endpoint instead (a
 * separate project is built; chat tasks stay local). Only the default run writes RESULTS.md.
 */
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { NodeConfig } from '../ts/config/node-config.js';
import { createProviders } from '../ts/llm/create-providers.js';
import { type ContextItem, formatContext } from '../ts/search/context.js';
import { NodeSearch } from '../ts/search/index.js';
import { countTokens, truncateToTokens } from '../ts/text/index.js';
import { containsAnswer, isYesNo } from './lib/answer-match.js';
import { ensureEmbeddingIndex } from './lib/embedding-project.js';
import { ensureHotpotIndex, loadCorpus, loadQuestions, paragraphFileName } from './lib/hotpot.js';
import { type Chunk, loadChunks, rankChunks } from './lib/naive.js';
import { writeResultsSection } from './lib/results-md.js';
import { fmt, markdownTable, mean } from './lib/stats.js';

const { values: args } = parseArgs({
  options: {
    'embedding-base-url': { type: 'string' },
    'embedding-model': { type: 'string' },
    'embedding-api-key': { type: 'string' },
    dim: { type: 'string' },
    space: { type: 'string' },
    rebuild: { type: 'boolean', default: false },
  },
});

const TOKEN_FACTOR = 1.67;
const MAX_K = 40;

// ----------------------------------------------------------------------------- the index

let folder: string;
let label: string;
if (args['embedding-base-url']) {
  const model = args['embedding-model'];
  const dim = Number(args.dim);
  if (!model || !Number.isInteger(dim) || dim < 1) {
    console.error(
      '--embedding-base-url needs --embedding-model NAME and --dim N (the model’s vector length)',
    );
    process.exit(2);
  }
  const space = args.space ?? 'cosine';
  if (space !== 'l2' && space !== 'cosine') {
    console.error(`--space must be l2 or cosine, got ${space}`);
    process.exit(2);
  }
  const built = ensureEmbeddingIndex(
    {
      baseUrl: args['embedding-base-url'],
      model,
      dim,
      space,
      apiKey: args['embedding-api-key'] ?? null,
    },
    args.rebuild,
  );
  folder = built.folder;
  label = `embeddings: ${model} (dim ${dim}, ${space}) at ${args['embedding-base-url']}`;
  if (built.buildMs > 0) console.log(`built ${folder} in ${(built.buildMs / 1000).toFixed(1)} s`);
} else {
  folder = ensureHotpotIndex();
  label = 'embeddings: local feature hashing (dim 256, l2)';
}

const config = NodeConfig.fromMainFolder(folder);
const space = config.config.space;
const search = new NodeSearch(config);
await search.ready();
const providers = createProviders(config, { mode: 'search' });
const chunks = await loadChunks(folder, config.config.dim);

// Gold paragraphs → their input files (paragraphFileName of the corpus order, as written).
const fileOfTitle = new Map<string, string>();
Object.keys(loadCorpus()).forEach((title, i) => {
  fileOfTitle.set(title, paragraphFileName(i, title));
});
const questions = loadQuestions();

function goldFiles(q: (typeof questions)[number]): string[] {
  const titles = [...new Set(q.supporting_facts.map(([t]) => t))];
  return titles.map((t) => {
    const f = fileOfTitle.get(t);
    if (!f) throw new Error(`question ${q._id}: supporting paragraph "${t}" is not in corpus.json`);
    return f;
  });
}

interface Scored {
  answer: boolean;
  /** Gold paragraphs with verbatim text in the context. */
  support: number;
  /** Gold paragraphs whose whole text chunk is in the context. */
  supportChunk: number;
  gold: number;
  tokens: number;
}

function scoreItems(
  context: string,
  items: readonly { type: string; document: string | null; partial?: boolean }[],
  q: (typeof questions)[number],
): Omit<Scored, 'tokens'> {
  const gold = goldFiles(q);
  const verbatim = new Set<string>();
  const whole = new Set<string>();
  for (const it of items) {
    if (!it.document || (it.type !== 'text' && it.type !== 'semantic_unit')) continue;
    const f = basename(it.document);
    verbatim.add(f);
    if (it.type === 'text' && !it.partial) whole.add(f);
  }
  return {
    answer: containsAnswer(context, q.answer),
    support: gold.filter((g) => verbatim.has(g)).length,
    supportChunk: gold.filter((g) => whole.has(g)).length,
    gold: gold.length,
  };
}

// ----------------------------------------------------------------------------- noderag

const t0 = performance.now();
const noderag: Scored[] = [];
const rankings: number[][] = [];
/** Tokens and items of noderag's contexts per section, to show where its budget goes. */
const sectionTokens = new Map<string, { tokens: number; items: number; gold: number }>();
for (const q of questions) {
  const r = await search.search(q.question);
  const items = r.items.map((i) => ({ type: i.type, document: i.document }));
  const gold = new Set(goldFiles(q));
  for (const i of r.items) {
    const e = sectionTokens.get(i.type) ?? { tokens: 0, items: 0, gold: 0 };
    e.tokens += countTokens(i.text);
    e.items += 1;
    if (i.document && gold.has(basename(i.document))) e.gold += 1;
    sectionTokens.set(i.type, e);
  }
  noderag.push({ ...scoreItems(r.retrievalInfo, items, q), tokens: r.retrievalTokens });
  const e = await providers.embed([q.question]);
  rankings.push(rankChunks(chunks, e.vectors.subarray(0, e.dim), space).slice(0, 200));
}
const searchMs = performance.now() - t0;
search.close();
providers.close();

// ----------------------------------------------------------------------------- naive baseline

interface BaselineItem extends ContextItem {
  document: string;
  partial: boolean;
}

function asItem(c: Chunk, text = c.text, partial = false): BaselineItem {
  return { id: c.id, type: 'text', text, document: c.document, partial };
}

/** Whole chunks in rank order while they fit `budget` tokens; the next one cut to fill it. */
function fillBudget(ranking: readonly number[], budget: number): { context: string; items: BaselineItem[] } {
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

function topK(ranking: readonly number[], k: number): { context: string; items: BaselineItem[] } {
  const items = ranking.slice(0, k).map((i) => asItem(chunks[i]!));
  return { context: formatContext(items), items };
}

function runBaseline(
  make: (ranking: readonly number[]) => { context: string; items: BaselineItem[] },
): Scored[] {
  return questions.map((q, n) => {
    const { context, items } = make(rankings[n]!);
    return { ...scoreItems(context, items, q), tokens: context ? countTokens(context) : 0 };
  });
}

const avgTokens = mean(noderag.map((s) => s.tokens));
const budgetSame = runBaseline((r) => fillBudget(r, Math.round(avgTokens)));
const budgetMore = runBaseline((r) => fillBudget(r, Math.round(avgTokens * TOKEN_FACTOR)));
const sweep: { k: number; scored: Scored[] }[] = [];
for (let k = 1; k <= MAX_K; k++) {
  const scored = runBaseline((r) => topK(r, k));
  sweep.push({ k, scored });
  if (mean(scored.map((s) => s.tokens)) > avgTokens * TOKEN_FACTOR * 1.5) break;
}
const closestK = (target: number) =>
  sweep.reduce((best, row) =>
    Math.abs(mean(row.scored.map((s) => s.tokens)) - target) <
    Math.abs(mean(best.scored.map((s) => s.tokens)) - target)
      ? row
      : best,
  );
const kSame = closestK(avgTokens);
const kMore = closestK(avgTokens * TOKEN_FACTOR);

// ----------------------------------------------------------------------------- report

const notYesNo = questions.map((q) => !isYesNo(q.answer));
interface Summary {
  answer: number;
  answerNoYesNo: number;
  support: number;
  supportChunk: number;
  bothSupport: number;
  tokens: number;
}
function summarise(s: readonly Scored[]): Summary {
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

const ours = summarise(noderag);
const rows: [string, Summary][] = [
  ['noderag (default config)', ours],
  [`naive, budget = noderag avg (${Math.round(avgTokens)} tok)`, summarise(budgetSame)],
  [`naive, budget = ×${TOKEN_FACTOR} (${Math.round(avgTokens * TOKEN_FACTOR)} tok)`, summarise(budgetMore)],
  [`naive, top-k k=${kSame.k} (closest to ×1)`, summarise(kSame.scored)],
  [`naive, top-k k=${kMore.k} (closest to ×${TOKEN_FACTOR})`, summarise(kMore.scored)],
];
const header = [
  'retriever',
  'answer recall',
  `answer recall w/o yes/no (n=${notYesNo.filter(Boolean).length})`,
  'support recall',
  'support recall (whole chunks)',
  'both gold paragraphs',
  'avg tokens',
  'tokens / noderag',
];
const table = markdownTable(
  header,
  rows.map(([name, s]) => [
    name,
    fmt(s.answer, 2),
    fmt(s.answerNoYesNo, 2),
    fmt(s.support, 3),
    fmt(s.supportChunk, 3),
    fmt(s.bothSupport, 2),
    fmt(s.tokens, 0),
    fmt(s.tokens / ours.tokens, 2),
  ]),
);
const sweepTable = markdownTable(
  ['k', 'avg tokens', 'answer recall', 'support recall'],
  sweep.map(({ k, scored }) => {
    const s = summarise(scored);
    return [k, fmt(s.tokens, 0), fmt(s.answer, 2), fmt(s.support, 3)];
  }),
);
const sectionTable = markdownTable(
  ['noderag section', 'items / question', 'tokens / question (item texts)', 'items from a gold paragraph'],
  [...sectionTokens.entries()].map(([type, e]) => [
    type,
    fmt(e.items / questions.length, 1),
    fmt(e.tokens / questions.length, 0),
    `${fmt((100 * e.gold) / e.items, 0)}%`,
  ]),
);
// Tokens the naive baseline needs (budget fill) to reach noderag's answer recall, if it does.
let matchBudget = Number.NaN;
for (const factor of [0.5, 0.75, 1, 1.25, 1.5, 1.67, 2, 2.5, 3, 4, 5, 6, 8]) {
  const s = summarise(runBaseline((r) => fillBudget(r, Math.round(avgTokens * factor))));
  if (s.answer >= ours.answer) {
    matchBudget = s.tokens;
    break;
  }
}

const naiveSame = summarise(budgetSame);
const naiveMore = summarise(budgetMore);
const goal = ours.answer >= naiveMore.answer;
const summaryText = [
  `${label}; ${chunks.length} text chunks; ${questions.length} questions; search wall ${(searchMs / 1000).toFixed(1)} s.`,
  `Goal "answer recall ≥ naive baseline at ≤ 60% of its tokens" (noderag vs naive at ×${TOKEN_FACTOR}): ` +
    `${fmt(ours.answer)} vs ${fmt(naiveMore.answer)} → ${goal ? 'met' : 'MISSED'}.`,
  `Naive budget-fill needs ${Number.isFinite(matchBudget) ? `${fmt(matchBudget, 0)} tokens (${fmt(matchBudget / ours.tokens)}× noderag's)` : 'more than 8× noderag’s tokens'} to reach noderag's answer recall.`,
].join('\n');

console.log(`\nretrieval quality, HotpotQA-100 (${label})\n`);
console.log(table);
console.log(`\nwhere noderag's context tokens go\n\n${sectionTable}`);
console.log(`\nnaive top-k sweep\n\n${sweepTable}\n`);
console.log(summaryText);
const resultLine =
  `RESULT quality answer_recall=${fmt(ours.answer)} support_recall=${fmt(ours.support, 3)} ` +
  `tokens=${fmt(ours.tokens, 0)} naive_answer_recall_same_tokens=${fmt(naiveSame.answer)}`;

if (!args['embedding-base-url']) {
  writeResultsSection(
    'quality',
    [
      'Retrieval quality on HotpotQA-100 (994 paragraphs, one input file each, indexed by the CLI',
      'with the offline `local` provider: feature-hash embeddings, sentence-level units, capitalised-run',
      'entities). Answer recall: the gold answer, normalised as in the HotpotQA/SQuAD scripts, occurs',
      'in the normalised context on token boundaries (9 of the 100 answers are yes/no, a string',
      'match says nothing about them: hence the column without them). Support recall: share of the',
      '200 gold supporting paragraphs with verbatim text in the context (their text chunk, a',
      'sentence-level semantic unit of it, or for the baseline a budget-cut chunk); the "whole',
      'chunks" column counts complete text chunks only. Naive baseline: text chunks ranked by exact',
      'distance to the question embedding, same vectors as noderag; "budget" rows fill a per-question',
      "budget equal to noderag's average tokens (× 1, × 1.67) with whole chunks in rank order, the last",
      'one cut at the budget; "top-k" rows use the fixed k whose average tokens come closest.',
      '',
      'Command: `npm run bench -- quality`. A real embedding model on 127.0.0.1:',
      '`npm run bench -- quality --embedding-base-url http://127.0.0.1:PORT/v1 --embedding-model NAME --dim N [--space cosine]`',
      '(builds a separate project in bench/.data/hotpot-emb-*; chat tasks stay on the local provider).',
      '',
      table,
      '',
      summaryText,
      '',
      "Where noderag's context tokens go (item texts; headers and numbering excluded):",
      '',
      sectionTable,
      '',
      '<details><summary>naive top-k sweep</summary>',
      '',
      sweepTable,
      '',
      '</details>',
      '',
      resultLine,
    ].join('\n'),
  );
}
console.log(resultLine);
