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
   * Embedding requests in flight at once (`max_in_flight`; `rate_limit` too). A local server
   * answering one request at a time only queues more.
   */
  inFlight: number;
  /** `request_timeout`, seconds per request once sent: a CPU model needs more than the 60 s default. */
  requestTimeout: number;
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
  // Per run: where the server is, and how hard to press it (neither is part of the
  // recorded embedding identity, so a built index stays valid).
  const perRun = {
    base_url: e.baseUrl,
    rate_limit: e.inFlight,
    max_in_flight: e.inFlight,
    request_timeout: e.requestTimeout,
  };
  if (rebuild || !configured) {
    writeHotpotProject(e.folder, { dim: e.dim, space: e.space });
    configure(e.folder, {
      embedding_config: {
        service_provider: 'openai',
        embedding_model_name: e.model,
        api_keys: null,
        query_prefix: e.queryPrefix,
        document_prefix: e.documentPrefix,
        ...perRun,
      },
    });
  } else {
    configure(e.folder, { embedding_config: perRun });
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
