/**
 * The HotpotQA-100 benchmark project: one input file per paragraph of
 * bench/data/hotpotqa/corpus.json (titled), a config using the offline `local` provider,
 * and a helper that builds the index once and reuses it (bench/.data/, gitignored).
 * Shared by the build, query, vis and quality benchmarks.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(here, '..', '..');
/** The HotpotQA-100 sample kept in the repository (see its README.md for source and licence). */
export const DATA_DIR = join(REPO_ROOT, 'bench', 'data', 'hotpotqa');
export const BENCH_DATA = join(REPO_ROOT, 'bench', '.data');

export interface HotpotQuestion {
  _id: string;
  question: string;
  answer: string;
  type: string;
  supporting_facts: [string, number][];
  context: [string, string[]][];
}

export function loadCorpus(): Record<string, string[]> {
  const file = join(DATA_DIR, 'corpus.json');
  if (!existsSync(file))
    throw new Error(
      `HotpotQA corpus not found at ${file} (it is part of the repository: bench/data/hotpotqa/)`,
    );
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, string[]>;
}

export function loadQuestions(): HotpotQuestion[] {
  return JSON.parse(readFileSync(join(DATA_DIR, 'questions.json'), 'utf8')) as HotpotQuestion[];
}

/** A file name for a paragraph title: stable, unique, safe on every file system. */
export function paragraphFileName(index: number, title: string): string {
  const slug = title
    .normalize('NFKD')
    .replace(/[^\w]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return `${String(index).padStart(4, '0')}-${slug || 'untitled'}.txt`;
}

/** Config of the benchmark projects: the example's, with the local provider. */
export function localConfigYaml(folder: string, overrides: Record<string, string | number> = {}): string {
  const config: Record<string, string | number> = {
    main_folder: folder,
    language: 'English',
    docu_type: 'mixed',
    chunk_size: 1048,
    embedding_batch_size: 50,
    use_tqdm: 'false',
    use_rich: 'false',
    space: 'l2',
    dim: 256,
    port: 5000,
    ...overrides,
  };
  return [
    'model_config:',
    '  service_provider: local',
    '  model_name: local',
    'embedding_config:',
    '  service_provider: local',
    '  embedding_model_name: feature-hash',
    'config:',
    ...Object.entries(config).map(
      ([k, v]) => `  ${k}: ${typeof v === 'string' && v.includes('/') ? JSON.stringify(v) : v}`,
    ),
    '',
  ].join('\n');
}

/** Writes the project (input files + config) into `folder`, replacing what was there. */
export function writeHotpotProject(folder: string, overrides: Record<string, string | number> = {}): number {
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(join(folder, 'input'), { recursive: true });
  const corpus = loadCorpus();
  let i = 0;
  for (const [title, sentences] of Object.entries(corpus)) {
    writeFileSync(
      join(folder, 'input', paragraphFileName(i++, title)),
      `${title}\n\n${sentences.join('')}\n`,
    );
  }
  writeFileSync(join(folder, 'Node_config.yaml'), localConfigYaml(folder, overrides));
  return i;
}

export function runCli(
  args: string[],
  options: { quiet?: boolean } = {},
): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(REPO_ROOT, 'ts', 'cli', 'main.ts'), ...args],
    {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: options.quiet ? 'pipe' : ['ignore', 'pipe', 'pipe'],
    },
  );
  return { status: r.status ?? 1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** The built HotpotQA-100 index (local provider), built on first use. Returns its folder. */
export function ensureHotpotIndex(): string {
  const folder = join(BENCH_DATA, 'hotpot-local');
  const state = join(folder, 'info', 'state.json');
  if (existsSync(state)) {
    const s = JSON.parse(readFileSync(state, 'utf8')) as { last_finished_generation?: number };
    if ((s.last_finished_generation ?? 0) >= 1) return folder;
  }
  writeHotpotProject(folder);
  const r = runCli(['build', '-f', folder, '--yes']);
  if (r.status !== 0)
    throw new Error(`building the HotpotQA index failed (exit ${r.status}):\n${r.stderr}${r.stdout}`);
  return folder;
}
