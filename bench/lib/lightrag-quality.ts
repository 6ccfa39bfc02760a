/**
 * LightRAG's mix-mode contexts for the HotpotQA-100 questions (bench quality, issue 20 item 2).
 *
 * LightRAG (bench/lib/lightrag.ts) indexes the same input files as a noderag project of the bench.
 * Its chat prompts (extraction, gleaning, description summaries at build time; the keyword
 * extraction of every query) go to the peer fake server (bench/peer/fake-server.ts), which
 * answers them from the offline `local` provider: extraction from its decomposition, the
 * query keywords from its query decomposition (names and years low-level, other words
 * high-level), as for noderag's chat tasks. Its embeddings are noderag's: the e5 server with
 * the prefixes noderag uses, through LightRAG's own asymmetric-embedding support (query-time
 * texts "query: ", indexed texts "passage: "), or the `local` provider's feature hashing
 * served by the fake server. Every other LightRAG setting is its default.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type LightragTemplates, startPeerFakeServer } from '../peer/fake-server.js';
import { startE5Server } from './e5.js';
import { BENCH_DATA } from './hotpot.js';
import {
  ensureLightragQualityIndex,
  ensureLightragVenv,
  type LightragEmbedding,
  lightragIndexFolder,
  runLightragDriver,
  seedTiktokenCache,
  TIKTOKEN_CACHE,
} from './lightrag.js';

export interface LightragContexts {
  folder: string;
  /** Build seconds (0: cached index; of the last part when `resumed`). */
  buildS: number;
  resumed: boolean;
  /** Provider calls of the build by kind, as the driver counted them. */
  buildCalls: Record<string, number>;
  loadS: number;
  /** Seconds for all questions (keyword call, embedding call, retrieval). */
  queryS: number;
  /** One per question; '' for an empty context (LightRAG's fail_response) or a failed query. */
  contexts: string[];
  empty: number;
  failed: number;
  /** Chat requests by `<side> <task>` during this run (keyword calls; extraction when building). */
  byTask: Record<string, number>;
  unrecognised: number;
}

/**
 * `embedding.base_url` null: LightRAG embeds through the fake server's embeddings route, the
 * `local` provider's feature hashing at `embedding.dim` (the vectors noderag's local index has).
 */
export async function lightragMixContexts(
  questions: readonly string[],
  spec: Omit<LightragEmbedding, 'base_url'> & { base_url: string | null },
  inputDir: string,
  log: (line: string) => void,
  /** An index to query as it is (bench/lib/lightrag-subset.ts: an unfinished build's snapshot). */
  existing?: string,
): Promise<LightragContexts> {
  ensureLightragVenv();
  seedTiktokenCache('o200k_base');
  seedTiktokenCache('cl100k_base');
  const base = { ...process.env, TIKTOKEN_CACHE_DIR: TIKTOKEN_CACHE, OPENAI_API_KEY: 'bench-key' };
  const t = await runLightragDriver(['templates'], base);
  if (!t.json) throw new Error(`could not read LightRAG's prompt templates:\n${t.raw.slice(-2000)}`);
  const fake = await startPeerFakeServer(null, spec.dim, t.json as unknown as LightragTemplates);
  try {
    const env = { ...base, OPENAI_BASE_URL: fake.baseUrl };
    const embedding = { ...spec, base_url: spec.base_url ?? fake.baseUrl };
    // The build embeds ~25 texts per paragraph; a second e5 server (same model, one engine
    // thread) shares those calls, as two workers would serve them on a 2-core machine.
    const extra =
      existing || spec.base_url === null || lightragIndexFolder(inputDir, embedding).done
        ? null
        : await startE5Server(log, 1);
    let index: Awaited<ReturnType<typeof ensureLightragQualityIndex>>;
    try {
      const urls = [embedding.base_url, extra?.baseUrl ?? []].flat();
      index = existing
        ? { folder: existing, buildS: 0, resumed: false, report: {} }
        : await ensureLightragQualityIndex(inputDir, { ...embedding, base_url: urls }, env, log);
    } finally {
      await extra?.stop();
    }
    const questionsFile = join(BENCH_DATA, 'lightrag-quality-questions.json');
    writeFileSync(questionsFile, JSON.stringify(questions));
    log(
      `LightRAG: ${index.buildS ? `built in ${index.buildS.toFixed(0)} s` : 'index reused'}; mix-mode contexts`,
    );
    const r = await runLightragDriver(['contexts', index.folder, questionsFile], {
      ...env,
      LIGHTRAG_EMBEDDING: JSON.stringify(embedding),
    });
    const out = r.json as {
      load_s: number | null;
      wall_s: number | null;
      contexts: (string | null)[];
      empty: number;
      errors: { question: string | null; traceback: string }[];
    } | null;
    if (!out || out.load_s === null || out.contexts.length !== questions.length) {
      const why = out?.errors[0]?.traceback ?? r.raw.slice(-2000);
      throw new Error(`LightRAG's mix-mode queries on ${index.folder} failed:\n${why}`);
    }
    if (fake.recognised.unrecognised)
      log(`warning: ${fake.recognised.unrecognised} LightRAG prompts were not recognised by the fake server`);
    return {
      folder: index.folder,
      buildS: index.buildS,
      resumed: index.resumed,
      buildCalls: (index.report.provider_calls as Record<string, number> | undefined) ?? {},
      loadS: out.load_s,
      queryS: out.wall_s ?? Number.NaN,
      contexts: out.contexts.map((c) => c ?? ''),
      empty: out.empty,
      failed: out.contexts.filter((c) => c === null).length,
      byTask: { ...fake.byTask },
      unrecognised: fake.recognised.unrecognised,
    };
  } finally {
    await fake.close();
  }
}
