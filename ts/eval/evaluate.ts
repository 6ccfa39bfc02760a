/**
 * Retrieval evaluation of a built index (`noderag eval`, and the quality benchmark): every
 * question goes through NodeSearch.search once per config, its context is scored
 * (score.ts), and the naive baseline is scored at the same tokens with the same embeddings:
 * the text chunks ranked by exact distance to the question's embedding (the chunk vectors
 * stored in text.parquet), filled into a budget equal to the config's average context
 * tokens per question, the last chunk cut at the budget (naive.ts).
 *
 * All configs must be of the same project (the same index); they differ in search-time
 * settings only (settings.ts).
 */
import type { NodeConfig } from '../config/node-config.js';
import { createProviders } from '../llm/create-providers.js';
import { NodeSearch, type SearchRetrieval } from '../search/index.js';
import { countTokens } from '../text/index.js';
import { type BaselineContext, type Chunk, fillBudget, loadChunks, rankChunks } from './naive.js';
import type { EvalQuestion } from './questions.js';
import {
  resolveSupporting,
  type Scored,
  type ScoredItem,
  type Summary,
  type SupportTarget,
  scoreContext,
  summarise,
} from './score.js';
import type { SearchOverrides } from './settings.js';

export interface EvalConfig {
  /** Shown in reports: "Node_config.yaml", "HNSW_results=20", … */
  name: string;
  config: NodeConfig;
  /** The search-time keys that differ from the project's file ({} for the file itself). */
  overrides: SearchOverrides;
}

export interface EvaluateOptions {
  questions: readonly EvalQuestion[];
  /** At least one; the first one's embedding settings embed the questions for the baseline. */
  configs: readonly EvalConfig[];
  /** After each question (all configs), for a progress bar. */
  onProgress?: (done: number, total: number) => void;
  /** Every retrieval, as it comes (the benchmark's per-section statistics). */
  onRetrieval?: (config: number, question: number, r: SearchRetrieval) => void;
  /** Chunks of each question's naive ranking kept (default 1000). */
  rankingDepth?: number;
}

export interface ConfigResult {
  name: string;
  overrides: SearchOverrides;
  scored: Scored[];
  summary: Summary;
  /** Wall time of the searches, ms. */
  searchMs: number;
  /** The naive baseline at this config's average tokens per question. */
  naive: { budget: number; scored: Scored[]; summary: Summary };
}

export interface EvalRun {
  folder: string;
  /** "local/feature-hash (dim 256, l2)" */
  embedding: string;
  questions: readonly EvalQuestion[];
  targets: SupportTarget[][];
  /** Supporting entries that look like files but match none. */
  warnings: string[];
  chunks: Chunk[];
  /** Per question, chunk indexes by distance to the question's embedding. */
  rankings: number[][];
  configs: ConfigResult[];
  /** Scores a baseline context for question `n` (other budgets, top-k). */
  scoreBaseline(n: number, b: BaselineContext): Scored;
  /** Scores any context for question `n` (`texts`: see scoreContext). */
  score(n: number, texts: readonly string[], items: readonly ScoredItem[], tokens: number): Scored;
}

export async function evaluate(o: EvaluateOptions): Promise<EvalRun> {
  const first = o.configs[0];
  if (!first) throw new Error('evaluate: no config');
  const folder = first.config.mainFolder;
  const { dim, space } = first.config.config;
  const engines = o.configs.map((c) => new NodeSearch(c.config, { retrievalCacheSize: 0 }));
  const providers = createProviders(first.config, { mode: 'search' });
  try {
    await Promise.all(engines.map((e) => e.ready()));
    const { chunks, documents } = await loadChunks(folder, dim);
    const { targets, warnings } = resolveSupporting(o.questions, documents);
    const score = (n: number, texts: readonly string[], items: readonly ScoredItem[], tokens: number) =>
      scoreContext(o.questions[n]!.answers, targets[n]!, texts, items, tokens);
    const scoreBaseline = (n: number, b: BaselineContext) =>
      score(
        n,
        b.items.map((it) => it.text),
        b.items,
        b.context ? countTokens(b.context) : 0,
      );

    const scored: Scored[][] = o.configs.map(() => []);
    const searchMs = o.configs.map(() => 0);
    const rankings: number[][] = [];
    const depth = o.rankingDepth ?? 1000;
    for (const [n, q] of o.questions.entries()) {
      for (const [i, engine] of engines.entries()) {
        const t0 = performance.now();
        const r = await engine.search(q.question);
        searchMs[i]! += performance.now() - t0;
        o.onRetrieval?.(i, n, r);
        scored[i]!.push(
          score(
            n,
            r.items.map((it) => it.text),
            r.items,
            r.retrievalTokens,
          ),
        );
      }
      const vector = await providers.embedQuery(q.question);
      rankings.push(rankChunks(chunks, vector, space).slice(0, depth));
      o.onProgress?.(n + 1, o.questions.length);
    }

    const configs = o.configs.map((c, i): ConfigResult => {
      const summary = summarise(scored[i]!);
      const budget = Math.round(summary.tokens);
      const naive = rankings.map((ranking, n) => scoreBaseline(n, fillBudget(chunks, ranking, budget)));
      return {
        name: c.name,
        overrides: c.overrides,
        scored: scored[i]!,
        summary,
        searchMs: searchMs[i]!,
        naive: { budget, scored: naive, summary: summarise(naive) },
      };
    });
    const e = first.config.embedding_config;
    return {
      folder,
      embedding: `${e.service_provider}/${e.embedding_model_name} (dim ${dim}, ${space})`,
      questions: o.questions,
      targets,
      warnings,
      chunks,
      rankings,
      configs,
      scoreBaseline,
      score,
    };
  } finally {
    for (const e of engines) e.close();
    providers.close();
  }
}
