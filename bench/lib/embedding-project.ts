/**
 * A HotpotQA-100 project whose embeddings come from an OpenAI-compatible endpoint (a real
 * embedding model served on 127.0.0.1) while the chat tasks keep the offline `local`
 * provider, so the quality benchmark compares embedders on the same graph recipe.
 *
 * The folder does not depend on the endpoint's port: `base_url` is written into the config
 * before every build and search (ensureEmbeddingIndex). The response cache keys on base_url
 * (ts/llm/cache-key.ts), so a resumed or repeated build hits the cache only on the same
 * port; the e5 server therefore prefers a fixed port (bench/lib/e5.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ConfigPatch, updateConfigFile } from '../../ts/config/update.js';
import { REPO_ROOT, writeHotpotProject } from './hotpot.js';

export interface EmbeddingEndpoint {
  /** Project folder (bench/.data/…), the same whatever the port. */
  folder: string;
  /** `http://127.0.0.1:PORT/v1` */
  baseUrl: string;
  model: string;
  dim: number;
  space: 'l2' | 'cosine';
  queryPrefix: string;
  documentPrefix: string;
  /**
   * Embedding requests per second and in flight. A local server answers one request at a
   * time: more in flight only wait in its queue (and may time out there).
   */
  rateLimit: number;
}

function finished(folder: string): boolean {
  const state = join(folder, 'info', 'state.json');
  if (!existsSync(state)) return false;
  const s = JSON.parse(readFileSync(state, 'utf8')) as { last_finished_generation?: number };
  return (s.last_finished_generation ?? 0) >= 1;
}

function configure(folder: string, patch: ConfigPatch): void {
  const updated = updateConfigFile(folder, patch);
  if (!updated.ok) {
    throw new Error(
      `invalid embedding endpoint settings:\n${updated.problems.map((p) => `  ${p.path}: ${p.message}`).join('\n')}`,
    );
  }
}

/**
 * Builds the project (or resumes an unfinished build, or reuses a finished one) with
 * `base_url` set to this run's endpoint. Build output goes to this process's stdout/stderr.
 * Returns the build's wall time (0 when the index was reused).
 */
export function ensureEmbeddingIndex(e: EmbeddingEndpoint, rebuild = false): { buildMs: number } {
  const configured = existsSync(join(e.folder, 'Node_config.yaml'));
  if (rebuild || !configured) {
    writeHotpotProject(e.folder, { dim: e.dim, space: e.space });
    configure(e.folder, {
      embedding_config: {
        service_provider: 'openai',
        embedding_model_name: e.model,
        base_url: e.baseUrl,
        api_keys: null,
        query_prefix: e.queryPrefix,
        document_prefix: e.documentPrefix,
        rate_limit: e.rateLimit,
      },
    });
  } else {
    configure(e.folder, { embedding_config: { base_url: e.baseUrl } });
  }
  if (!rebuild && finished(e.folder)) return { buildMs: 0 };
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(REPO_ROOT, 'ts', 'cli', 'main.ts'), 'build', '-f', e.folder, '--yes'],
    { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  if (r.status !== 0) {
    throw new Error(
      `building ${e.folder} failed (exit ${r.status ?? r.signal}); see the output above and ${join(e.folder, 'info', 'info.log')}`,
    );
  }
  return { buildMs: performance.now() - t0 };
}
