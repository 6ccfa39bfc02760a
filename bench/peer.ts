/**
 * `npm run bench -- peer [--questions N]`
 *
 * noderag against the original Python NodeRAG (PyPI `NodeRAG`, pinned below, installed into
 * the throw-away virtualenv bench/.venv-noderag on first use). Both index the same corpus
 * subset, the gold supporting paragraphs of the first N HotpotQA questions (default 50, so
 * about 100 paragraphs: the original's build is slow), with the same fake OpenAI-compatible
 * server (tests/helpers/fake-providers: zero latency, deterministic local-provider answers,
 * json_schema honoured), gpt-4o-mini / text-embedding-3-small names, dim 1536. Then each
 * answers (retrieval only) the same N questions. Measured per side, in child processes:
 * build wall time (provider latency is zero, so this is the pipeline's own time plus loopback
 * HTTP), index size on disk (cache/), search-engine load time, retrieval latency p50/p99 (the
 * question's embedding and decomposition round trips included on both sides), peak RSS.
 * Crashes of the original are reported with their traceback excerpt.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startFakeOpenAI } from '../tests/helpers/fake-providers/index.js';
import { BENCH_DATA, loadCorpus, loadQuestions, paragraphFileName, REPO_ROOT } from './lib/hotpot.js';
import { writeResultsSection } from './lib/results-md.js';
import { fmt, markdownTable, mib, percentile } from './lib/stats.js';

const PEER_PACKAGE = 'NodeRAG==0.1.0';
const VENV = join(REPO_ROOT, 'bench', '.venv-noderag');
const PY = join(VENV, 'bin', 'python');

const { values: args } = parseArgs({ options: { questions: { type: 'string', default: '50' } } });
const n = Number(args.questions);

function ensureVenv(): void {
  if (existsSync(join(VENV, 'lib')) && spawnSync(PY, ['-c', 'import NodeRAG']).status === 0) return;
  console.log(`installing ${PEER_PACKAGE} into ${VENV} ...`);
  const a = spawnSync('python3', ['-m', 'venv', VENV], { stdio: 'inherit' });
  const b = spawnSync(PY, ['-m', 'pip', 'install', '-q', PEER_PACKAGE], { stdio: 'inherit' });
  if (a.status !== 0 || b.status !== 0) throw new Error(`could not install ${PEER_PACKAGE} into ${VENV}`);
}

function dirBytes(dir: string): number {
  if (!existsSync(dir)) return Number.NaN;
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    total += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return total;
}

// ----------------------------------------------------------------------------- the corpus

const questions = loadQuestions().slice(0, n);
const corpus = loadCorpus();
const titles = Object.keys(corpus);
const wanted = new Set(questions.flatMap((q) => q.supporting_facts.map(([t]) => t)));

function writeInput(folder: string): number {
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(join(folder, 'input'), { recursive: true });
  let count = 0;
  titles.forEach((title, i) => {
    if (!wanted.has(title)) return;
    writeFileSync(
      join(folder, 'input', paragraphFileName(i, title)),
      `${title}\n\n${corpus[title]!.join('')}\n`,
    );
    count++;
  });
  return count;
}

ensureVenv();
/**
 * The original counts tokens with Python tiktoken, which downloads o200k_base on first use. This
 * machine has no network beyond package registries, so its cache is seeded with the same file
 * from the tiktoken-rs crate that noderag's Rust core embeds (cache key: SHA-1 of the URL).
 */
const TIKTOKEN_CACHE = join(BENCH_DATA, 'tiktoken-cache');
function seedTiktokenCache(): void {
  const url = 'https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken';
  const target = join(TIKTOKEN_CACHE, createHash('sha1').update(url).digest('hex'));
  if (existsSync(target)) return;
  const registry = join(process.env.CARGO_HOME ?? join(homedir(), '.cargo'), 'registry', 'src');
  for (const index of existsSync(registry) ? readdirSync(registry) : []) {
    for (const crate of readdirSync(join(registry, index)).filter((c) => c.startsWith('tiktoken-rs-'))) {
      const file = join(registry, index, crate, 'assets', 'o200k_base.tiktoken');
      if (existsSync(file)) {
        mkdirSync(TIKTOKEN_CACHE, { recursive: true });
        copyFileSync(file, target);
        return;
      }
    }
  }
  console.log("warning: no o200k_base.tiktoken found to seed the original's tiktoken cache");
}
seedTiktokenCache();
const fake = await startFakeOpenAI({ dim: 1536 });
const env = {
  ...process.env,
  OPENAI_API_KEY: 'bench-key',
  OPENAI_BASE_URL: fake.baseUrl,
  TIKTOKEN_CACHE_DIR: TIKTOKEN_CACHE,
};

const oursFolder = join(BENCH_DATA, 'peer-noderag');
const theirsFolder = join(BENCH_DATA, 'peer-original');
const paragraphs = writeInput(oursFolder);
writeInput(theirsFolder);
const questionsFile = join(BENCH_DATA, 'peer-questions.json');
writeFileSync(questionsFile, JSON.stringify(questions.map((q) => q.question)));

// noderag: openai provider at the fake server's base_url, dim 1536, the defaults otherwise.
writeFileSync(
  join(oursFolder, 'Node_config.yaml'),
  [
    'model_config:',
    '  service_provider: openai',
    '  model_name: gpt-4o-mini',
    '  api_keys: bench-key',
    `  base_url: ${fake.baseUrl}`,
    '  rate_limit: 1000',
    'embedding_config:',
    '  service_provider: openai',
    '  embedding_model_name: text-embedding-3-small',
    '  api_keys: bench-key',
    `  base_url: ${fake.baseUrl}`,
    '  rate_limit: 1000',
    'config:',
    `  main_folder: ${JSON.stringify(oursFolder)}`,
    '  language: English',
    '  use_rich: false',
    '  dim: 1536',
    '',
  ].join('\n'),
);
// The original: its documented keys (the PyPI 0.1.0 wheel lacks its own Node_config.yaml template).
writeFileSync(
  join(theirsFolder, 'Node_config.yaml'),
  [
    'model_config:',
    '  service_provider: openai',
    '  model_name: gpt-4o-mini',
    '  api_keys: bench-key',
    '  temperature: 0',
    '  max_tokens: 10000',
    '  rate_limit: 50',
    'embedding_config:',
    '  service_provider: openai_embedding',
    '  embedding_model_name: text-embedding-3-small',
    '  api_keys: bench-key',
    '  rate_limit: 50',
    'config:',
    `  main_folder: ${JSON.stringify(theirsFolder)}`,
    '  language: English',
    '  docu_type: mixed',
    '  chunk_size: 1048',
    '  embedding_batch_size: 50',
    '  use_tqdm: False',
    '  use_rich: False',
    '  space: l2',
    '  dim: 1536',
    '  m: 50',
    '  ef: 200',
    '  m0: null',
    '  Hcluster_size: 39',
    '  url: 127.0.0.1',
    '  port: 5000',
    '  unbalance_adjust: True',
    '  cross_node: 10',
    '  Enode: 10',
    '  Rnode: 30',
    '  Hnode: 10',
    '  HNSW_results: 10',
    '  similarity_weight: 1',
    '  accuracy_weight: 1',
    '  ppr_alpha: 0.5',
    '  ppr_max_iter: 2',
    '',
  ].join('\n'),
);

interface Side {
  buildS: number;
  buildRssKb: number;
  buildError: string | null;
  indexBytes: number;
  loadS: number;
  latencies: number[];
  searchRssKb: number;
  errors: { question: string | null; traceback: string }[];
}

const PEER_TIMEOUT_MS = 8 * 60_000;

/** Runs a child asynchronously (the fake server in this process must keep answering). */
function runJson(
  cmd: string,
  argv: string[],
): Promise<{ json: Record<string, unknown> | null; wallS: number; raw: string }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, argv, { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    // The original's build asks "Do you want to start the pipeline? (y/n)" on stdin.
    child.stdin.end('y\ny\ny\n');
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-20_000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), PEER_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const wallS = (performance.now() - t0) / 1000;
      const at = out.lastIndexOf('PEER_JSON ');
      const line = at >= 0 ? out.slice(at).split('\n')[0] : undefined;
      const raw = `${out.slice(-5000)}${err}${signal ? `\nkilled by ${signal} (limit ${PEER_TIMEOUT_MS / 1000} s)` : ''}${code ? `\nexit ${code}` : ''}`;
      resolve({ json: line ? (JSON.parse(line.slice(10)) as Record<string, unknown>) : null, wallS, raw });
    });
  });
}

// noderag build: the real CLI in a child, peak RSS from `/usr/bin/time`-free getrusage of the child.
async function measureChild(
  argv: string[],
): Promise<{ wallS: number; maxRssKb: number; status: number; output: string }> {
  const script =
    'import resource,subprocess,sys,time,json;t=time.perf_counter();p=subprocess.run(sys.argv[1:],capture_output=True,text=True);' +
    'print("PEER_JSON "+json.dumps({"wall_s":time.perf_counter()-t,"maxrss_kb":resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,"status":p.returncode,"out":(p.stdout+p.stderr)[-3000:]}))';
  const r = await runJson('python3', ['-c', script, ...argv]);
  const j = r.json ?? {};
  return {
    wallS: Number(j.wall_s),
    maxRssKb: Number(j.maxrss_kb),
    status: Number(j.status ?? 1),
    output: String(j.out ?? r.raw),
  };
}

console.log(`corpus: ${paragraphs} paragraphs (gold paragraphs of the first ${n} questions)`);
const ours: Side = {
  buildS: Number.NaN,
  buildRssKb: Number.NaN,
  buildError: null,
  indexBytes: Number.NaN,
  loadS: Number.NaN,
  latencies: [],
  searchRssKb: Number.NaN,
  errors: [],
};
const ob = await measureChild([
  process.execPath,
  '--import',
  'tsx',
  join(REPO_ROOT, 'ts/cli/main.ts'),
  'build',
  '-f',
  oursFolder,
  '--yes',
]);
ours.buildS = ob.wallS;
ours.buildRssKb = ob.maxRssKb;
if (ob.status !== 0) ours.buildError = ob.output.slice(-1500);
ours.indexBytes = dirBytes(join(oursFolder, 'cache'));
console.log(`noderag build: ${fmt(ob.wallS, 1)} s (exit ${ob.status})`);
const os = await runJson(process.execPath, [
  '--import',
  'tsx',
  join(REPO_ROOT, 'bench/peer/noderag-search.ts'),
  oursFolder,
  questionsFile,
]);
if (os.json) {
  ours.loadS = Number(os.json.load_s);
  ours.latencies = os.json.latencies_ms as number[];
  ours.searchRssKb = Number(os.json.maxrss_kb);
  ours.errors = os.json.errors as Side['errors'];
} else ours.errors.push({ question: null, traceback: os.raw.slice(-1500) });

const theirs: Side = { ...ours, buildError: null, latencies: [], errors: [] };
const tb = await runJson(PY, [join(REPO_ROOT, 'bench/peer/original.py'), 'build', theirsFolder]);
theirs.buildS = Number(tb.json?.wall_s ?? tb.wallS);
theirs.buildRssKb = Number(tb.json?.maxrss_kb ?? Number.NaN);
theirs.buildError = tb.json
  ? ((tb.json.error as string | null) ?? null)
  : `no result (timeout ${PEER_TIMEOUT_MS / 1000} s?):\n${tb.raw.slice(-1500)}`;
theirs.indexBytes = dirBytes(join(theirsFolder, 'cache'));
console.log(`original build: ${fmt(theirs.buildS, 1)} s${theirs.buildError ? ' (FAILED)' : ''}`);
const ts = await runJson(PY, [
  join(REPO_ROOT, 'bench/peer/original.py'),
  'search',
  theirsFolder,
  questionsFile,
]);
theirs.loadS = Number(ts.json?.load_s ?? Number.NaN);
theirs.latencies = (ts.json?.latencies_ms as number[] | undefined) ?? [];
theirs.searchRssKb = Number(ts.json?.maxrss_kb ?? Number.NaN);
theirs.errors = (ts.json?.errors as Side['errors'] | undefined) ?? [
  { question: null, traceback: ts.raw.slice(-1500) },
];
const chatRequests = fake.count('chat');
await fake.close();

// ----------------------------------------------------------------------------- report

const nanIfEmpty = (xs: number[], p: number) => (xs.length ? percentile(xs, p) : Number.NaN);
const row = (name: string, s: Side) => [
  name,
  s.buildError ? `${fmt(s.buildS, 1)} (failed)` : fmt(s.buildS, 1),
  mib(s.buildRssKb * 1024),
  mib(s.indexBytes),
  fmt(s.loadS * 1000, 0),
  fmt(nanIfEmpty(s.latencies, 50), 2),
  fmt(nanIfEmpty(s.latencies, 99), 2),
  `${s.latencies.length}/${n}`,
  mib(s.searchRssKb * 1024),
];
const table = markdownTable(
  [
    'system',
    'build wall s',
    'build peak RSS MiB',
    'index on disk MiB',
    'engine load ms',
    'retrieval p50 ms',
    'retrieval p99 ms',
    'questions answered',
    'search peak RSS MiB',
  ],
  [row('noderag', ours), row(`original NodeRAG (${PEER_PACKAGE})`, theirs)],
);
const ratio = (a: number, b: number) =>
  Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : Number.NaN;
const buildSpeedup = theirs.buildError ? Number.NaN : ratio(theirs.buildS, ours.buildS);
const retrievalSpeedup = ratio(nanIfEmpty(theirs.latencies, 50), nanIfEmpty(ours.latencies, 50));
const loadSpeedup = ratio(theirs.loadS, ours.loadS);
const problems = [
  ...(ours.buildError ? [`noderag build failed:\n${ours.buildError}`] : []),
  ...ours.errors.map((e) => `noderag search error (${e.question ?? 'load'}):\n${e.traceback}`),
  ...(theirs.buildError ? [`original build failed:\n${theirs.buildError}`] : []),
  ...theirs.errors.slice(0, 3).map((e) => `original search error (${e.question ?? 'load'}):\n${e.traceback}`),
  ...(theirs.errors.length > 3 ? [`... and ${theirs.errors.length - 3} more original search errors`] : []),
];
const resultLine = `RESULT peer build_speedup=${fmt(buildSpeedup)} retrieval_speedup=${fmt(retrievalSpeedup)} load_speedup=${fmt(loadSpeedup)}`;

console.log(
  `\nnoderag vs the original NodeRAG, ${paragraphs} HotpotQA paragraphs, ${n} questions, fake OpenAI server (0 ms)\n`,
);
console.log(table);
for (const p of problems) console.log(`\n${p}`);
console.log(`\nchat requests served by the fake server: ${chatRequests}`);
writeResultsSection(
  'peer',
  [
    `noderag against the original Python NodeRAG (${PEER_PACKAGE} from PyPI in bench/.venv-noderag), same`,
    `${paragraphs} HotpotQA paragraphs (the gold supporting paragraphs of the first ${n} questions), same fake`,
    'OpenAI-compatible server (zero latency, local-provider answers, json_schema honoured), dim 1536. Each',
    'side runs in child processes; retrieval latency includes the embedding and decomposition round trips',
    'to the fake server on both sides. Speedups = original / noderag (build wall, load, retrieval p50).',
    'The machine is 2 cores shared with other builds while this ran: timings are noisy.',
    '',
    `Command: \`npm run bench -- peer\` (\`--questions N\`)`,
    '',
    table,
    '',
    ...(problems.length ? ['What went wrong:', '', '```', ...problems, '```', ''] : []),
    resultLine,
  ].join('\n'),
);
console.log(resultLine);
