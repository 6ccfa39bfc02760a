/**
 * Temporary noderag projects for end-to-end tests: a folder with Node_config.yaml and
 * input/, the real CLI spawned on it (`node --import tsx ts/cli/main.ts ...`, no build
 * step), and readers for what the build leaves on disk.
 *
 *   const p = await createProject({ files: { 'a.txt': '...' }, provider: 'local' });
 *   const r = await p.build();           // build -f <root> --yes
 *   expect(r.code).toBe(0);
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = join(REPO_ROOT, 'ts', 'cli', 'main.ts');
/** `build` with test hooks (tests/helpers/build-entry.ts): the CLI itself reads no test settings. */
export const BUILD_ENTRY = join(REPO_ROOT, 'tests', 'helpers', 'build-entry.ts');

export type ProviderChoice = 'local' | { openaiBaseUrl: string };

export interface ProjectOptions {
  /** Files under input/ (relative path → content). */
  files?: Record<string, string | Uint8Array>;
  provider?: ProviderChoice;
  language?: 'English' | 'Chinese';
  /** Extra `config:` keys (chunk_size, dim, …). */
  config?: Record<string, unknown>;
  /** Extra `model_config:` keys (rate_limit, …). */
  model?: Record<string, unknown>;
  embedding?: Record<string, unknown>;
  /** Write no Node_config.yaml (first-run tests). */
  noConfig?: boolean;
}

export interface BuildTestHooks {
  crashAt?: string;
  fastRetry?: boolean;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string>;
  /** Written to stdin, then stdin is closed. */
  input?: string;
  timeoutMs?: number;
  /** Called with the child as soon as it is spawned (to kill it at a chosen moment). */
  onSpawn?: (child: ChildProcess) => void;
}

/** Spawns the CLI with `args` (cwd = repository root). */
export function runCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  return runTs(CLI, args, options);
}

/** Spawns a TypeScript entry point with `args` (cwd = repository root). */
export function runTs(entry: string, args: string[], options: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 110_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
    options.onSpawn?.(child);
  });
}

function configFor(root: string, o: ProjectOptions): Record<string, unknown> {
  const provider = o.provider ?? 'local';
  const dim = (o.config?.dim as number | undefined) ?? 64;
  const model =
    provider === 'local'
      ? { service_provider: 'local', model_name: 'local' }
      : {
          service_provider: 'openai',
          model_name: 'gpt-4o-mini',
          base_url: provider.openaiBaseUrl,
          api_keys: 'test-key',
        };
  const embedding =
    provider === 'local'
      ? { service_provider: 'local', embedding_model_name: 'feature-hash' }
      : {
          service_provider: 'openai',
          embedding_model_name: 'text-embedding-3-small',
          base_url: provider.openaiBaseUrl,
          api_keys: 'test-key',
        };
  return {
    model_config: { ...model, ...o.model },
    embedding_config: { ...embedding, ...o.embedding },
    config: {
      main_folder: root,
      language: o.language ?? 'English',
      chunk_size: 256,
      dim,
      use_rich: false,
      use_tqdm: false,
      ...o.config,
    },
  };
}

export class Project {
  constructor(
    readonly root: string,
    readonly options: ProjectOptions,
  ) {}

  path(...parts: string[]): string {
    return join(this.root, ...parts);
  }

  async writeInput(relative: string, content: string | Uint8Array): Promise<void> {
    const p = this.path('input', ...relative.split('/'));
    await mkdir(dirname(p), { recursive: true });
    await writeFile(p, content);
  }

  async removeInput(relative: string): Promise<void> {
    await rm(this.path('input', ...relative.split('/')), { force: true });
  }

  async writeConfig(overrides: ProjectOptions = {}): Promise<void> {
    const merged = { ...this.options, ...overrides };
    await writeFile(this.path('Node_config.yaml'), stringify(configFor(this.root, merged)));
  }

  /** `build -f <root> --yes` plus `extra` arguments. */
  build(extra: string[] = [], options: RunOptions = {}): Promise<CliResult> {
    return runCli(['build', '-f', this.root, '--yes', ...extra], options);
  }

  /**
   * The same build in a process of its own with test hooks: `crashAt` (`<stage>` or
   * `<stage>:<commit step>`) kills it with SIGKILL there, `fastRetry` makes the retry
   * delays milliseconds. `extra` may hold `--allow-failures`.
   */
  buildWithHooks(hooks: BuildTestHooks, extra: string[] = [], options: RunOptions = {}): Promise<CliResult> {
    const args = [this.root, ...extra];
    if (hooks.crashAt !== undefined) args.push('--crash-at', hooks.crashAt);
    if (hooks.fastRetry) args.push('--fast-retry');
    return runTs(BUILD_ENTRY, args, options);
  }

  async readJson<T = unknown>(relative: string): Promise<T> {
    return JSON.parse(await readFile(this.path(...relative.split('/')), 'utf8')) as T;
  }

  async readText(relative: string): Promise<string> {
    return readFile(this.path(...relative.split('/')), 'utf8');
  }

  exists(relative: string): boolean {
    return existsSync(this.path(...relative.split('/')));
  }

  async remove(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}

export async function createProject(options: ProjectOptions = {}): Promise<Project> {
  const root = await mkdtemp(join(tmpdir(), 'noderag-e2e-'));
  const project = new Project(root, options);
  await mkdir(project.path('input'), { recursive: true });
  for (const [rel, content] of Object.entries(options.files ?? {})) await project.writeInput(rel, content);
  if (!options.noConfig) await project.writeConfig();
  return project;
}

/** The files of docs/method.md §5 a finished build must leave. */
export const LAYOUT_FILES = [
  'cache/documents.parquet',
  'cache/text.parquet',
  'cache/semantic_units.parquet',
  'cache/entities.parquet',
  'cache/relationship.parquet',
  'cache/attributes.parquet',
  'cache/high_level_elements.parquet',
  'cache/high_level_elements_titles.parquet',
  'cache/graph_nodes.parquet',
  'cache/graph_edges.parquet',
  'cache/hnsw_graph.parquet',
  'cache/HNSW.bin',
  'cache/id_map.parquet',
  'cache/text_decomposition.jsonl',
  'info/state.json',
  'info/indices.json',
  'info/document_hash.json',
  'info/info.log',
] as const;

/** The index files under cache/ that a build must write the same bytes of for the same input. */
export const INDEX_FILES = [
  'documents.parquet',
  'text.parquet',
  'semantic_units.parquet',
  'entities.parquet',
  'relationship.parquet',
  'attributes.parquet',
  'high_level_elements.parquet',
  'high_level_elements_titles.parquet',
  'graph_nodes.parquet',
  'graph_edges.parquet',
  'hnsw_graph.parquet',
  'id_map.parquet',
  'HNSW.bin',
  'text_decomposition.jsonl',
];

/** SHA-256 of every index file (INDEX_FILES): a resumed or repeated build must give the same bytes. */
export async function indexFingerprints(p: Project): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of INDEX_FILES)
    out[f] = createHash('sha256')
      .update(await readFile(p.path('cache', f)))
      .digest('hex');
  return out;
}

/** Runs `sql` in an in-memory DuckDB and returns the rows as JSON-friendly objects. */
export async function duckdbQuery(sql: string): Promise<Record<string, unknown>[]> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    const reader = await conn.runAndReadAll(sql);
    return reader.getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}
