/**
 * noderag's side of bench/peer.ts, in its own process. Prints
 * `PEER_JSON {load_s, e2e_ms, provider_ms, engine_ms, engine_stages_ms, maxrss_kb, errors}`.
 *
 * Like bench/peer/original.py, every question is retrieved twice on one loaded NodeSearch:
 *  1. end-to-end: `search(q)` with the config's providers (the fake server over HTTP); the
 *     replies are recorded, and `provider_ms` is the wall span of the question's two provider
 *     calls (embedding and decomposition run concurrently);
 *  2. engine-only (`repeats` rounds over the questions): `search(q)` with the two calls answered in-process from the replies of
 *     pass 1, so the time is noderag's own retrieval (vector search, exact matching,
 *     propagation, selection, context string, token count).
 * NodeSearch's retrieval cache (if this version has one) is switched off, so pass 2 retrieves
 * again instead of returning pass 1's results. Then, for the stage profile only, the index is loaded once more and `retrieve()` is run on
 * the recorded inputs to report its per-stage timings (mean ms per question).
 */
import { readFileSync } from 'node:fs';
import { NodeConfig } from '../../ts/config/node-config.js';
import { createProviders, o200kTokenCounter } from '../../ts/llm/create-providers.js';
import {
  LoadedIndex,
  NodeSearch,
  retrieve,
  type SearchProviders,
  searchParamsFrom,
} from '../../ts/search/index.js';

const [folder, questionsFile, repeatsArg] = process.argv.slice(2) as [string, string, string?];
const repeats = Number(repeatsArg ?? 1);
const questions = JSON.parse(readFileSync(questionsFile, 'utf8')) as string[];
const errors: { question: string | null; traceback: string }[] = [];
const e2e: number[] = [];
const providerMs: number[] = [];
const engine: number[] = [];
const stages: Record<string, number> = {};
const describe = (e: unknown) => (e instanceof Error ? (e.stack ?? e.message) : String(e));

const config = NodeConfig.fromMainFolder(folder);
const real = createProviders(config, { mode: 'search', tokenCounter: o200kTokenCounter });
const recordedQuery = new Map<string, { elements: string[] }>();
const recordedEmbed = new Map<string, Float32Array>();
let replay = false;
let span: { start: number; end: number } | null = null;
/** Duration of each provider call, by kind (the embedding and the decomposition). */
const callMs: Record<'embed' | 'query', number[]> = { embed: [], query: [] };
const timed = async <T>(kind: 'embed' | 'query', p: () => Promise<T>): Promise<T> => {
  const t = performance.now();
  try {
    return await p();
  } finally {
    const end = performance.now();
    callMs[kind].push(end - t);
    span = span ? { start: Math.min(span.start, t), end: Math.max(span.end, end) } : { start: t, end };
  }
};
const providers: SearchProviders = {
  run: (async (task: 'query', input: { question: string }, options) => {
    if (task !== 'query') throw new Error(`unexpected task ${task} in retrieval`);
    if (replay) return recordedQuery.get(input.question);
    const r = await timed('query', () => real.run(task, input, options));
    recordedQuery.set(input.question, r);
    return r;
  }) as SearchProviders['run'],
  embedQuery: async (question, options) => {
    if (replay) return recordedEmbed.get(question)!;
    const r = await timed('embed', () => real.embedQuery(question, options));
    recordedEmbed.set(question, r);
    return r;
  },
};

const t0 = performance.now();
// No retrieval cache: pass 2 asks the same questions again and must retrieve them again (a
// variable, not a literal, so this also compiles against a NodeSearch without the option).
const options = { providers, retrievalCacheSize: 0 };
const search = new NodeSearch(config, options);
const cacheStats = () =>
  (search as unknown as { cacheStats?: () => { hits: number } }).cacheStats?.() ?? { hits: 0 };
let loadS = Number.NaN;
const ok: string[] = [];
try {
  await search.ready();
  loadS = (performance.now() - t0) / 1000;
  for (const q of questions) {
    span = null;
    const t = performance.now();
    try {
      await search.search(q);
      e2e.push(performance.now() - t);
      const s = span as { start: number; end: number } | null;
      providerMs.push(s ? s.end - s.start : 0);
      ok.push(q);
    } catch (e) {
      errors.push({ question: q, traceback: describe(e) });
    }
  }
  replay = true;
  for (const q of Array.from({ length: repeats }, () => ok).flat()) {
    const t = performance.now();
    await search.search(q);
    engine.push(performance.now() - t);
  }
  const { hits } = cacheStats();
  if (hits > 0) errors.push({ question: null, traceback: `${hits} retrievals came from NodeSearch's cache` });
} catch (e) {
  errors.push({ question: null, traceback: describe(e) });
}
search.close();
real.close();

// Stage profile of the engine-only retrieval (a second load; the first engine is closed).
if (ok.length) {
  const index = await LoadedIndex.load(config.mainFolder, {
    dim: config.config.dim,
    unbalanceAdjust: config.config.unbalance_adjust,
  });
  const params = searchParamsFrom(config.config);
  const rounds = Array.from({ length: repeats }, () => ok).flat();
  for (const q of rounds) {
    const r = retrieve(
      index,
      { vector: recordedEmbed.get(q)!, elements: recordedQuery.get(q)?.elements ?? [] },
      params,
    );
    for (const [k, v] of Object.entries(r.timings)) stages[k] = (stages[k] ?? 0) + v / rounds.length;
  }
  index.close();
}

console.log(
  `PEER_JSON ${JSON.stringify({
    load_s: loadS,
    e2e_ms: e2e,
    provider_ms: providerMs,
    call_ms: callMs,
    engine_ms: engine,
    engine_stages_ms: stages,
    maxrss_kb: process.resourceUsage().maxRSS,
    errors,
  })}`,
);
