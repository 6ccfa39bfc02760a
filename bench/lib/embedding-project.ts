/**
 * A HotpotQA-100 project whose embeddings come from any OpenAI-compatible endpoint (e.g. a
 * real embedding model served on 127.0.0.1) while the chat tasks keep the offline `local`
 * provider, so the quality benchmark can compare embedding models on the same graph recipe.
 * Built once per (base URL, model, dim, space) into bench/.data/hotpot-emb-<slug>.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { updateConfigFile } from '../../ts/config/update.js';
import { BENCH_DATA, runCli, writeHotpotProject } from './hotpot.js';

export interface EmbeddingEndpoint {
  /** `http://127.0.0.1:PORT/v1` */
  baseUrl: string;
  model: string;
  dim: number;
  space: 'l2' | 'cosine';
  /** Sent as the bearer token; many local servers ignore it. */
  apiKey: string | null;
}

export function embeddingProjectFolder(e: EmbeddingEndpoint): string {
  const slug = `${e.model}-${e.dim}-${e.space}-${e.baseUrl}`
    .replace(/^https?:\/\//, '')
    .replace(/[^\w.]+/g, '-')
    .slice(0, 100);
  return join(BENCH_DATA, `hotpot-emb-${slug}`);
}

/** Builds (or reuses) the project; returns its folder and the build's wall time (0 when reused). */
export function ensureEmbeddingIndex(
  e: EmbeddingEndpoint,
  rebuild = false,
): { folder: string; buildMs: number } {
  const folder = embeddingProjectFolder(e);
  const state = join(folder, 'info', 'state.json');
  if (!rebuild && existsSync(state)) {
    const s = JSON.parse(readFileSync(state, 'utf8')) as { last_finished_generation?: number };
    if ((s.last_finished_generation ?? 0) >= 1) return { folder, buildMs: 0 };
  }
  writeHotpotProject(folder, { dim: e.dim, space: e.space });
  const updated = updateConfigFile(folder, {
    embedding_config: {
      service_provider: 'openai',
      embedding_model_name: e.model,
      base_url: e.baseUrl,
      api_keys: e.apiKey,
    },
  });
  if (!updated.ok) {
    throw new Error(
      `invalid embedding endpoint settings:\n${updated.problems.map((p) => `  ${p.path}: ${p.message}`).join('\n')}`,
    );
  }
  const t0 = performance.now();
  const r = runCli(['build', '-f', folder, '--yes']);
  if (r.status !== 0) {
    throw new Error(
      `building ${folder} failed (exit ${r.status}):\n${r.stderr.slice(-4000)}${r.stdout.slice(-2000)}`,
    );
  }
  return { folder, buildMs: performance.now() - t0 };
}
