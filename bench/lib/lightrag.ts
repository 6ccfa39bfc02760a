/**
 * LightRAG (PyPI `lightrag-hku`) as a retriever of the benchmarks: its pinned virtualenv, the
 * tiktoken files it needs offline, its driver (bench/peer/lightrag_driver.py) run as a child,
 * and what the quality bench needs on top (issue 20 item 2):
 *
 *   - ensureLightragQualityIndex: LightRAG's index of the HotpotQA-100 paragraphs (the input
 *     files noderag indexed), its chat prompts answered by the peer fake server from the local
 *     provider's decomposition, its embeddings by the e5 server, cached under
 *     bench/.data/lightrag-quality-<key>/ where the key hashes the files, the package and the
 *     embedding settings, so a rerun skips the ~10 minute build;
 *   - lightragContextItems: the document chunks of a mix-mode context (for support recall);
 *   - closestByTokens: the setting of a monotone knob whose average tokens come closest to a
 *     target (noderag and naive top-k at LightRAG's token count).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { runChildJson } from './child-json.js';
import { BENCH_DATA, REPO_ROOT } from './hotpot.js';

export { parseDriverOutput } from './child-json.js';

/** `openai` is no dependency of lightrag-hku's core; its OpenAI binding pip-installs it at import when missing. */
export const LIGHTRAG_PACKAGE = 'lightrag-hku==1.5.7';
export const LIGHTRAG_PACKAGES = [LIGHTRAG_PACKAGE, 'openai==3.54.0'];
export const VENV_LR = join(REPO_ROOT, 'bench', '.venv-lightrag');
export const PY_LR = join(VENV_LR, 'bin', 'python');
export const LIGHTRAG_DRIVER = join(REPO_ROOT, 'bench', 'peer', 'lightrag_driver.py');

/** Creates bench/.venv-lightrag with the pinned packages unless they import already. */
export function ensureLightragVenv(): void {
  if (existsSync(join(VENV_LR, 'lib')) && spawnSync(PY_LR, ['-c', 'import lightrag, openai']).status === 0)
    return;
  console.log(`installing ${LIGHTRAG_PACKAGES.join(' ')} into ${VENV_LR} ...`);
  const a = spawnSync('python3', ['-m', 'venv', VENV_LR], { stdio: 'inherit' });
  const b = spawnSync(PY_LR, ['-m', 'pip', 'install', '-q', ...LIGHTRAG_PACKAGES], { stdio: 'inherit' });
  if (a.status !== 0 || b.status !== 0)
    throw new Error(`could not install ${LIGHTRAG_PACKAGE} into ${VENV_LR}`);
}

/**
 * Python tiktoken downloads its BPE files on first use. This machine has no network beyond
 * package registries, so its cache is seeded with the same files (tiktoken checks their
 * SHA-256) from the Rust crates noderag's core embeds: bpe-openai keeps them gzipped,
 * tiktoken-rs plain (cache key: SHA-1 of the URL).
 */
export const TIKTOKEN_CACHE = join(BENCH_DATA, 'tiktoken-cache');
const ENCODING_IN_CRATES = (enc: string): ReadonlyArray<{ crate: string; file: string; gzip: boolean }> => [
  { crate: 'bpe-openai-', file: `data/${enc}.tiktoken.gz`, gzip: true },
  { crate: 'tiktoken-rs-', file: `assets/${enc}.tiktoken`, gzip: false },
];

/**
 * o200k_base for the original and for LightRAG (its tokenizer for gpt-4o-mini); cl100k_base for
 * LightRAG's `openai_embed`, which truncates texts with text-embedding-3-small's encoding (and
 * falls back to it for other model names).
 */
export function seedTiktokenCache(enc: string): void {
  const url = `https://openaipublic.blob.core.windows.net/encodings/${enc}.tiktoken`;
  const target = join(TIKTOKEN_CACHE, createHash('sha1').update(url).digest('hex'));
  if (existsSync(target)) return;
  const registry = join(process.env.CARGO_HOME ?? join(homedir(), '.cargo'), 'registry', 'src');
  for (const index of existsSync(registry) ? readdirSync(registry) : []) {
    for (const { crate, file, gzip } of ENCODING_IN_CRATES(enc)) {
      for (const dir of readdirSync(join(registry, index)).filter((c) => c.startsWith(crate))) {
        const path = join(registry, index, dir, file);
        if (!existsSync(path)) continue;
        mkdirSync(TIKTOKEN_CACHE, { recursive: true });
        writeFileSync(target, gzip ? gunzipSync(readFileSync(path)) : readFileSync(path));
        return;
      }
    }
  }
  console.log(`warning: no ${enc}.tiktoken found to seed the Python sides' tiktoken cache`);
}

/**
 * Runs the driver asynchronously (the fake server answering it lives in this process). Its
 * stderr (LightRAG logs ~10 lines per query) is drained, the tail kept for errors.
 */
export async function runLightragDriver(
  argv: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ json: Record<string, unknown> | null; raw: string }> {
  const { json, raw } = await runChildJson(PY_LR, [LIGHTRAG_DRIVER, ...argv], { env });
  return { json, raw };
}

/** Where LightRAG's embeddings go (the driver's LIGHTRAG_EMBEDDING). */
export interface LightragEmbedding {
  /** One server, or several of the same model (used in turn: the build's calls are spread). */
  base_url: string | string[];
  model: string;
  dim: number;
  query_prefix: string;
  document_prefix: string;
  /** Texts are cut to this many tokens (cl100k, by LightRAG's openai_embed) before they are sent. */
  max_token_size: number;
}

/**
 * Cache key of an index: the input files (names and bytes), the package, and the embedding
 * settings but the server's address (LightRAG keeps no address in its index).
 */
export function lightragIndexKey(inputDir: string, embedding: LightragEmbedding): string {
  const h = createHash('sha256');
  h.update(`${LIGHTRAG_PACKAGE}\n`);
  const { base_url: _, ...settings } = embedding;
  h.update(`${JSON.stringify(settings)}\n`);
  for (const name of readdirSync(inputDir).sort()) {
    h.update(`${name}\n`);
    h.update(readFileSync(join(inputDir, name)));
  }
  return h.digest('hex').slice(0, 12);
}

export interface LightragIndex {
  folder: string;
  /** Seconds of the build (of its last part when `resumed`); 0 when the finished index was used. */
  buildS: number;
  resumed: boolean;
  /** The driver's build report (stages, provider calls, document status), or the cached one. */
  report: Record<string, unknown>;
}

/** The folder of LightRAG's index of `inputDir` with `embedding`, and whether it is finished. */
export function lightragIndexFolder(
  inputDir: string,
  embedding: LightragEmbedding,
): { folder: string; done: boolean } {
  const folder = join(BENCH_DATA, `lightrag-quality-${lightragIndexKey(inputDir, embedding)}`);
  return { folder, done: existsSync(join(folder, 'done.json')) };
}

/**
 * LightRAG's index of the files in `inputDir`, built by the driver unless a finished one with
 * the same key exists (`done.json` is written only after a build whose documents were all
 * processed). An unfinished one is resumed: LightRAG skips the documents it has processed
 * and takes up the others. A failed build throws with the driver's message.
 */
export async function ensureLightragQualityIndex(
  inputDir: string,
  embedding: LightragEmbedding,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<LightragIndex> {
  const { folder, done: finished } = lightragIndexFolder(inputDir, embedding);
  const done = join(folder, 'done.json');
  if (finished)
    return {
      folder,
      buildS: 0,
      resumed: false,
      report: JSON.parse(readFileSync(done, 'utf8')) as Record<string, unknown>,
    };
  const resumed = existsSync(join(folder, 'rag_storage'));
  if (!resumed) rmSync(folder, { recursive: true, force: true });
  mkdirSync(join(folder, 'input'), { recursive: true });
  for (const name of readdirSync(inputDir)) copyFileSync(join(inputDir, name), join(folder, 'input', name));
  log(
    `LightRAG: ${resumed ? 'resuming the unfinished build of' : 'building'} ${folder} ` +
      `(${readdirSync(inputDir).length} files; tens of minutes with e5 on a busy machine)`,
  );
  const r = await runLightragDriver(['build', folder], {
    ...env,
    LIGHTRAG_EMBEDDING: JSON.stringify(embedding),
  });
  const error = r.json
    ? (r.json.error as string | null)
    : `no result from the driver:\n${r.raw.slice(-2000)}`;
  if (error) throw new Error(`LightRAG build of ${folder} failed: ${error}`);
  writeFileSync(done, JSON.stringify(r.json, null, 2));
  return { folder, buildS: Number(r.json!.wall_s), resumed, report: r.json! };
}

/** A document chunk of a LightRAG context, with the file it came from. */
export interface LightragChunk {
  type: 'text';
  text: string;
  document: string | null;
  partial: false;
}

/** The fenced blocks of a LightRAG context (PROMPTS["kg_query_context"]); '' where one is missing. */
export interface LightragBlocks {
  entities: string;
  relationships: string;
  chunks: string;
  references: string;
}

/** The fenced block after the first line starting with `heading`. */
function fencedAfter(context: string, heading: string): string {
  const at = context.search(new RegExp(`^${heading}`, 'm'));
  if (at < 0) return '';
  const open = context.indexOf('```', at);
  const start = open < 0 ? -1 : context.indexOf('\n', open);
  const end = start < 0 ? -1 : context.indexOf('\n```', start);
  return end < 0 ? '' : context.slice(start + 1, end);
}

export function lightragContextBlocks(context: string): LightragBlocks {
  return {
    entities: fencedAfter(context, 'Knowledge Graph Data \\(Entity\\)'),
    relationships: fencedAfter(context, 'Knowledge Graph Data \\(Relationship\\)'),
    chunks: fencedAfter(context, 'Document Chunks'),
    references: fencedAfter(context, 'Reference Document List'),
  };
}

/**
 * The document chunks of a LightRAG mix/naive context: the JSON lines
 * `{"reference_id": "1", "content": "…"}` of the "Document Chunks" block, joined to the file
 * paths of the "Reference Document List" (`[1] path`). Entities and relationships are derived
 * text, so they are not returned (they do not count as support, as noderag's attributes and
 * relationships do not).
 */
export function lightragContextItems(context: string): LightragChunk[] {
  const b = lightragContextBlocks(context);
  const paths = new Map<string, string>();
  for (const line of b.references.split('\n')) {
    const m = /^\[([^\]]+)\]\s*(.*)$/.exec(line.trim());
    if (m) paths.set(m[1]!, m[2]!.trim());
  }
  const chunks: LightragChunk[] = [];
  for (const line of b.chunks.split('\n')) {
    if (!line.trim()) continue;
    let row: { reference_id?: unknown; content?: unknown };
    try {
      row = JSON.parse(line) as typeof row;
    } catch {
      continue;
    }
    if (typeof row.content !== 'string') continue;
    const ref = row.reference_id === undefined ? undefined : String(row.reference_id);
    chunks.push({
      type: 'text',
      text: row.content,
      document: (ref && paths.get(ref)) || null,
      partial: false,
    });
  }
  return chunks;
}

/**
 * The value of an integer knob in [lo, hi] whose average tokens come closest to `target`,
 * for a `tokensAt` that grows with the knob: doubling from `lo` until the target is passed
 * (large values are the slow ones: they are not tried unless needed), then a binary search;
 * ties go to the smaller value. Returns the value and its tokens; each value is evaluated once.
 */
export function closestByTokens(
  target: number,
  tokensAt: (value: number) => number,
  lo: number,
  hi: number,
): { value: number; tokens: number } {
  const seen = new Map<number, number>();
  const at = (v: number) => {
    let t = seen.get(v);
    if (t === undefined) {
      t = tokensAt(v);
      seen.set(v, t);
    }
    return t;
  };
  if (at(lo) >= target) return { value: lo, tokens: at(lo) };
  let a = lo;
  let b = Math.min(hi, Math.max(lo + 1, lo * 2));
  while (at(b) < target) {
    if (b === hi) return { value: hi, tokens: at(hi) };
    a = b;
    b = Math.min(hi, b * 2);
  }
  // Invariant: at(a) < target <= at(b).
  while (b - a > 1) {
    const mid = Math.floor((a + b) / 2);
    if (at(mid) < target) a = mid;
    else b = mid;
  }
  return target - at(a) <= at(b) - target ? { value: a, tokens: at(a) } : { value: b, tokens: at(b) };
}
