/**
 * `npm run bench -- peer [--corpus gold|full] [--questions N] [--repeats R] [--skip-lightrag]`
 * (development: `--build-only` noderag's build alone, `--cpu-prof DIR` V8 profiles of it and of
 * the fake server, `--cli PATH` a given compiled CLI; bench/peer/call-overhead.ts measures the
 * CPU one provider call costs our side)
 *
 * noderag against the original Python NodeRAG (PyPI `NodeRAG`, pinned below, installed into
 * the throw-away virtualenv bench/.venv-noderag on first use). Both index the same corpus
 * subset, the gold supporting paragraphs of the first N HotpotQA questions (default 50, so
 * about 100 paragraphs; `--corpus full`: all 994 paragraphs and the 100 questions), with the
 * same fake OpenAI-compatible server (bench/peer/fake-server.ts: tests/helpers' fake server,
 * zero latency, deterministic local-provider answers, which also understands the original's
 * prompt templates so both get the same content), gpt-4o-mini / text-embedding-3-small names,
 * dim 1536. Then each retrieves the same N questions.
 * Measured per side, in child processes: build wall time (provider latency is zero, so this
 * is the pipeline's own time plus loopback HTTP), index size on disk (cache/, without
 * noderag's provider response cache), search-engine load time, retrieval latency p50/p99
 * end-to-end (with the question's embedding and decomposition round trips) and engine-only
 * (the same retrieval with those two replies served in-process), peak RSS.
 * Crashes of the original are reported with their traceback excerpt.
 *
 * Third side: LightRAG (PyPI `lightrag-hku`, pinned below, in bench/.venv-lightrag, driven by
 * bench/peer/lightrag_driver.py) on the same paragraphs, fake server and questions: build wall
 * time and peak RSS, index on disk (rag_storage/ without its response cache), load time, and
 * context-only retrieval e2e and engine-only for its mix (headline), local, global and hybrid
 * modes, with empty contexts counted per mode. The RESULT line adds `lightrag_*_speedup`
 * (LightRAG's time / noderag's).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runChildJson } from './lib/child-json.js';
import { BENCH_DATA, loadCorpus, loadQuestions, paragraphFileName, REPO_ROOT } from './lib/hotpot.js';
import {
  ensureLightragVenv,
  LIGHTRAG_DRIVER,
  LIGHTRAG_PACKAGE,
  LIGHTRAG_PACKAGES,
  PY_LR,
  seedTiktokenCache,
  TIKTOKEN_CACHE,
} from './lib/lightrag.js';
import { writeResultsSection } from './lib/results-md.js';
import { fmt, markdownTable, mib, percentile } from './lib/stats.js';
import { type LightragTemplates, type OriginalTemplates, startPeerFakeServer } from './peer/fake-server.js';

const PEER_PACKAGE = 'NodeRAG==0.1.0';
const VENV = join(REPO_ROOT, 'bench', '.venv-noderag');
const PY = join(VENV, 'bin', 'python');
/**
 * LightRAG, the third side, in its own virtualenv (NodeRAG 0.1.0 pins openai 1.66.3 exactly):
 * bench/lib/lightrag.ts pins it (and `openai`).
 */
const LIGHTRAG_PY = LIGHTRAG_DRIVER;

const { values: args } = parseArgs({
  options: {
    questions: { type: 'string' },
    repeats: { type: 'string', default: '5' },
    corpus: { type: 'string', default: 'gold' },
    // LightRAG's build of the 994 paragraphs takes over 15 minutes here: `--corpus full
    // --skip-lightrag` measures noderag against the original alone (no lightrag_* keys).
    'skip-lightrag': { type: 'boolean', default: false },
    // Development: noderag's build alone against the fake server (wall, the build's CPU and the
    // fake server's CPU, stage times), then exit; nothing is written to RESULTS.md.
    'build-only': { type: 'boolean', default: false },
    // A V8 CPU profile of the noderag build (node --cpu-prof) and of this process, where the
    // fake server runs, written into this folder.
    'cpu-prof': { type: 'string' },
    // Development, A/B: build with this compiled CLI (…/cli/main.js) instead of compiling ts/.
    cli: { type: 'string' },
  },
});
const buildOnly = args['build-only'] === true;
const cpuProfDir = args['cpu-prof'] ? resolve(args['cpu-prof']) : undefined;
const skipLightrag = args['skip-lightrag'] === true;
if (args.corpus !== 'gold' && args.corpus !== 'full') {
  console.error(`--corpus: expected "gold" or "full", got "${args.corpus}"`);
  process.exit(2);
}
/**
 * `gold` (default): the gold paragraphs of the first N questions (N = --questions, 50);
 * `full`: all 994 paragraphs of HotpotQA-100 and N = 100 questions, where the original's
 * whole-graph work per question shows.
 */
const fullCorpus = args.corpus === 'full';
const n = Number(args.questions ?? (fullCorpus ? 100 : 50));
/** Rounds of the engine-only pass over the questions (more samples on a noisy machine). */
const repeats = Number(args.repeats);
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const loadBefore = load();

function ensureVenv(): void {
  if (existsSync(join(VENV, 'lib')) && spawnSync(PY, ['-c', 'import NodeRAG']).status === 0) return;
  console.log(`installing ${PEER_PACKAGE} into ${VENV} ...`);
  const a = spawnSync('python3', ['-m', 'venv', VENV], { stdio: 'inherit' });
  const b = spawnSync(PY, ['-m', 'pip', 'install', '-q', PEER_PACKAGE], { stdio: 'inherit' });
  if (a.status !== 0 || b.status !== 0) throw new Error(`could not install ${PEER_PACKAGE} into ${VENV}`);
}

const PEER_TIMEOUT_MS = 20 * 60_000;
let env: NodeJS.ProcessEnv = process.env;

/**
 * Runs a child asynchronously (the fake server in this process must keep answering); the
 * original's build asks "Do you want to start the pipeline? (y/n)" on stdin.
 */
const runJson = (cmd: string, argv: string[]) =>
  runChildJson(cmd, argv, { env, stdin: 'y\ny\ny\n', timeoutMs: PEER_TIMEOUT_MS, outTail: 5000 });

ensureVenv();
ensureLightragVenv();

/** Bytes under `dir`, without any sub-folder named `skip`. */
function dirBytes(dir: string, skip?: string): number {
  if (!existsSync(dir)) return Number.NaN;
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory() && e.name === skip) continue;
    const p = join(dir, e.name);
    total += e.isDirectory() ? dirBytes(p, skip) : statSync(p).size;
  }
  return total;
}

// ----------------------------------------------------------------------------- the corpus

const questions = loadQuestions().slice(0, n);
const corpus = loadCorpus();
const titles = Object.keys(corpus);
/**
 * Paragraphs whose title is all capitals ("WRVU", "XMII") crash the original's build: its
 * entity and semantic-unit ids are both sha256 of the raw text, so the title line as a unit
 * and the same name as an entity get one id, the edge between them is a self-loop, and
 * networkx's k_core in its Attribute pipeline refuses the graph. The full corpus leaves them
 * out, for both systems.
 */
const collidesInOriginal = (title: string) => title.toUpperCase() === title && /\p{L}/u.test(title);
const left = titles.filter(collidesInOriginal);
const wanted = new Set(
  fullCorpus
    ? titles.filter((t) => !collidesInOriginal(t))
    : questions.flatMap((q) => q.supporting_facts.map(([t]) => t)),
);
const corpusText = fullCorpus
  ? `the whole HotpotQA-100 corpus but the ${left.length} paragraphs with an all-capitals title (${left.join(', ')}), which crash the original's build: its entity and semantic-unit ids are both sha256 of the raw text, so the title line as a unit and the same name as an entity share one id, their edge is a self-loop and networkx's k_core refuses the graph`
  : `the gold supporting paragraphs of the first ${n} questions`;

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

// The original and LightRAG count tokens with Python tiktoken, whose BPE files are seeded
// offline from the Rust crates (bench/lib/lightrag.ts).
seedTiktokenCache('o200k_base');
seedTiktokenCache('cl100k_base');
const templates = (await runJson(PY, [join(REPO_ROOT, 'bench/peer/original.py'), 'templates'])).json;
if (!templates) throw new Error("could not read the original's prompt templates");
const lightragTemplates = (await runJson(PY_LR, [LIGHTRAG_PY, 'templates'])).json;
if (!lightragTemplates) throw new Error("could not read LightRAG's prompt templates");
const fake = await startPeerFakeServer(
  templates as unknown as OriginalTemplates,
  1536,
  lightragTemplates as unknown as LightragTemplates,
);
env = {
  ...process.env,
  OPENAI_API_KEY: 'bench-key',
  OPENAI_BASE_URL: fake.baseUrl,
  TIKTOKEN_CACHE_DIR: TIKTOKEN_CACHE,
};

const oursFolder = join(BENCH_DATA, 'peer-noderag');
const theirsFolder = join(BENCH_DATA, 'peer-original');
const lightragFolder = join(BENCH_DATA, 'peer-lightrag');
const paragraphs = writeInput(oursFolder);
writeInput(theirsFolder);
writeInput(lightragFolder);
const questionsFile = join(BENCH_DATA, 'peer-questions.json');
writeFileSync(questionsFile, JSON.stringify(questions.map((q) => q.question)));

// noderag: openai provider at the fake server's base_url, dim 1536, the defaults otherwise, but
// for the request limits: at most 50 requests in flight, the original's own limit (its
// rate_limit is an asyncio semaphore of 50, with no pacing), and a rate limit the fake server
// never needs (10,000 starts/s: pacing one start per 0.1 ms, which never binds here).
const PEER_LIMITS = ['  rate_limit: 10000', '  max_in_flight: 50'];
writeFileSync(
  join(oursFolder, 'Node_config.yaml'),
  [
    'model_config:',
    '  service_provider: openai',
    '  model_name: gpt-4o-mini',
    '  api_keys: bench-key',
    `  base_url: ${fake.baseUrl}`,
    ...PEER_LIMITS,
    'embedding_config:',
    '  service_provider: openai',
    '  embedding_model_name: text-embedding-3-small',
    '  api_keys: bench-key',
    `  base_url: ${fake.baseUrl}`,
    ...PEER_LIMITS,
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

/**
 * What was found about the original and done about it, for the RESULTS section (static: it
 * describes the bench's setup, which each run re-checks through the counts above).
 */
const ORIGINAL_NOTES = [
  "### The original's crash, its cause and the fix",
  '',
  "The first runs of this bench ended with the original's build failing:",
  '`Exception: Error happened in Attribute pipeline.division by zero` (NodeRAG/build/Node.py:158,',
  'then no HNSW data, so its search could not load). The chain, reproduced and read in the',
  'installed 0.1.0 source:',
  '',
  "1. The fake server only recognised noderag's own prompts (system + user message, plain strings).",
  '   The original sends no system message and one user message whose content is a list of parts',
  '   holding its own templates (utils/prompt/*.py), so every chat request was answered `{}`.',
  '2. The original asks for structured output with `client.beta.chat.completions.parse(response_format=',
  '   <pydantic model>)`; `{}` fails validation (`text_decomposition: Output Field required`).',
  '3. NodeRAG 0.1.0 (LLM/LLM.py) wraps its calls in `backoff.on_exception(backoff.expo, [RateLimitError,',
  '   Timeout, APIConnectionError, JSONDecodeError], ...)` with a list, not a tuple, so when any',
  "   exception reaches backoff's `except exception` clause Python raises `TypeError: catching classes",
  '   that do not inherit from BaseException is not allowed` instead of retrying or passing the real',
  '   error on. `error_handler_async` (logging/error.py) returns that message as the reply, and',
  "   `cache_error_async` only treats strings containing `'error':` as errors, so the string was written",
  '   to cache/text_decomposition.jsonl as the "response" of all 100 texts.',
  '4. The graph pipeline silently skips non-dict responses (graph_pipeline.py `graph_tasks`), so the',
  '   graph had 0 nodes, and `NodeImportance.avarege_degree` (build/pipeline/attribute_generation.py)',
  '   divided by `G.number_of_nodes()` = 0.',
  '',
  'So it was neither the corpus size nor the importance threshold. Fix, option (a), no patch to the',
  "original and the same corpus: bench/peer/fake-server.ts reads the original's six English templates",
  'from the installed package at run time (`original.py templates`), recognises them (anchored regex',
  "per template, list-of-parts content flattened), maps their fields to the task inputs noderag's",
  'local provider gets (text decomposition -> D, relationship reconstruction -> R with the Python list',
  'joined back with ", ", attribute generation -> A, community summary -> C, query decomposition -> Q,',
  "answer -> ANS) and answers with the local provider's reply for those inputs, whose JSON shapes are",
  "the original's pydantic models field for field. Both systems therefore get the same deterministic",
  'content: the index-contents table above shows the same text, semantic-unit and entity counts and',
  'the same relationships (up to the race noted under seeds). The original now builds and searches',
  'unpatched, from its pinned PyPI release (which pins its own dependencies exactly, openai 1.66.3',
  'and backoff 2.2.1 included, except google-api-core and ruamel-yaml); a prompt the server does',
  'not recognise is counted in the fake-server line above and listed under "What went wrong".',
  '',
  'Latent problems of 0.1.0 seen on the way (not triggered here, not patched): because of (3), any',
  'transient provider error (429, timeout, bad JSON) silently drops that text from the graph instead of',
  "being retried; and `NodeImportance.K_core` reads `self.G[nodes]['type']` (the node's adjacency, not",
  'its attributes), a KeyError as soon as the k-core is non-empty. Here k = round(ln N * sqrt(mean',
  'degree)) = 13 on the entity/relationship/unit graph of this corpus, whose largest core number is 2',
  '(checked on the built graph), so the k-core is empty and only the',
  'betweenness test picks important entities.',
];

/** noderag's own per-pipeline timer lines in info/info.log (s), and its total as `Build`. */
function noderagStages(folder: string): Record<string, number> {
  const file = join(folder, 'info', 'info.log');
  const out: Record<string, number> = {};
  if (!existsSync(file)) return out;
  for (const m of readFileSync(file, 'utf8').matchAll(
    /INFO (.+?) (?:\(generation \d+\) )?finished in ([\d.]+) s/g,
  )) {
    out[m[1] as string] = Number(m[2]);
  }
  return out;
}

/** The original's stage names (its info.log) for noderag's (same pipeline order, docs/method.md §5). */
const STAGE_PAIRS: [string, string][] = [
  ['(init)', 'Init Pipeline'],
  ['Document pipeline', 'Document Pipeline'],
  ['Text pipeline', 'Text Pipeline'],
  ['Graph pipeline', 'Graph Pipeline'],
  ['Attribute pipeline', 'Attribute Generation'],
  ['Embedding pipeline', 'Embedding Pipeline'],
  ['Summary pipeline', 'Summary Generation Pipeline'],
  ['Insert text pipeline', 'Insert text and concatenate graph'],
  ['HNSW pipeline', 'HNSW graph generation'],
];

function buildStageTable(o: Side, t: Side): string {
  const sum = (r: Record<string, number>, keys: string[]) => keys.reduce((a, k) => a + (r[k] ?? 0), 0);
  const oSum = sum(
    o.buildStages,
    STAGE_PAIRS.map(([k]) => k),
  );
  const tSum = sum(
    t.buildStages,
    STAGE_PAIRS.map(([, k]) => k),
  );
  const cell = (r: Record<string, number>, k: string) => (k in r ? fmt(r[k] as number, 2) : '-');
  return markdownTable(
    ['build stage (noderag / original name)', 'noderag s', 'original s'],
    [
      ...STAGE_PAIRS.map(([a, b]) => [`${a} / ${b}`, cell(o.buildStages, a), cell(t.buildStages, b)]),
      ['sum of the stages', fmt(oSum, 2), fmt(tSum, 2)],
      [
        'rest of the build wall time (process start, imports, config, writing state)',
        fmt(o.buildS - oSum, 2),
        fmt(t.buildS - tSum, 2),
      ],
      ['build wall time', fmt(o.buildS, 2), fmt(t.buildS, 2)],
    ],
  );
}

interface Side {
  buildS: number;
  buildRssKb: number;
  buildError: string | null;
  buildStages: Record<string, number>;
  indexBytes: number;
  loadS: number;
  e2e: number[];
  providerMs: number[];
  engine: number[];
  engineStages: Record<string, number>;
  callMs: { embed: number[]; query: number[] };
  searchRssKb: number;
  errors: { question: string | null; traceback: string }[];
}
const emptySide = (): Side => ({
  buildS: Number.NaN,
  buildRssKb: Number.NaN,
  buildError: null,
  buildStages: {},
  indexBytes: Number.NaN,
  loadS: Number.NaN,
  e2e: [],
  providerMs: [],
  engine: [],
  engineStages: {},
  callMs: { embed: [], query: [] },
  searchRssKb: Number.NaN,
  errors: [],
});

function fillSearch(side: Side, r: { json: Record<string, unknown> | null; raw: string }): void {
  const j = r.json;
  if (!j) {
    side.errors.push({ question: null, traceback: r.raw.slice(-1500) });
    return;
  }
  side.loadS = Number(j.load_s ?? Number.NaN);
  side.e2e = (j.e2e_ms as number[] | undefined) ?? [];
  side.providerMs = (j.provider_ms as number[] | undefined) ?? [];
  side.engine = (j.engine_ms as number[] | undefined) ?? [];
  side.engineStages = (j.engine_stages_ms as Record<string, number> | undefined) ?? {};
  side.searchRssKb = Number(j.maxrss_kb ?? Number.NaN);
  side.callMs = (j.call_ms as Side['callMs'] | undefined) ?? { embed: [], query: [] };
  side.errors = (j.errors as Side['errors'] | undefined) ?? [];
}

/** Peak RSS and CPU seconds (user + system) of a child: the CLI run under python's getrusage(RUSAGE_CHILDREN). */
async function measureChild(
  argv: string[],
): Promise<{ wallS: number; maxRssKb: number; cpuS: number; status: number; output: string }> {
  const script =
    'import resource,subprocess,sys,time,json;t=time.perf_counter();p=subprocess.run(sys.argv[1:],capture_output=True,text=True);' +
    'u=resource.getrusage(resource.RUSAGE_CHILDREN);' +
    'print("PEER_JSON "+json.dumps({"wall_s":time.perf_counter()-t,"maxrss_kb":u.ru_maxrss,"cpu_s":u.ru_utime+u.ru_stime,"status":p.returncode,"out":(p.stdout+p.stderr)[-3000:]}))';
  const r = await runJson('python3', ['-c', script, ...argv]);
  const j = r.json ?? {};
  return {
    wallS: Number(j.wall_s),
    maxRssKb: Number(j.maxrss_kb),
    cpuS: Number(j.cpu_s),
    status: Number(j.status ?? 1),
    output: String(j.out ?? r.raw),
  };
}

/**
 * CPU seconds this process (the fake server, nearly all of its work while a build runs) spends
 * in `run`; with `profileAs`, a V8 CPU profile of it written to that file.
 */
async function fakeServerCpu<T>(
  run: () => Promise<T>,
  profileAs?: string,
): Promise<{ result: T; cpuS: number }> {
  const session = profileAs ? new Session() : undefined;
  const post = (method: string) =>
    new Promise<unknown>((done, fail) => session?.post(method, (err, res) => (err ? fail(err) : done(res))));
  if (session) {
    session.connect();
    await post('Profiler.enable');
    await post('Profiler.start');
  }
  const before = process.cpuUsage();
  const result = await run();
  const used = process.cpuUsage(before);
  if (session && profileAs) {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    writeFileSync(profileAs, JSON.stringify(profile));
    session.disconnect();
  }
  return { result, cpuS: (used.user + used.system) / 1e6 };
}

console.log(`corpus: ${paragraphs} paragraphs (${corpusText}); load average ${loadBefore}`);

// --------------------------------------------------------------------------- noderag
/**
 * noderag's CLI compiled to JavaScript, as `npx noderag` runs it from an installed package
 * (tsc, into bench/.data, so the addon and node_modules resolve from the repository). Run
 * through tsx instead, each build spent about a second more starting up, transpiling the
 * sources it imports.
 */
function compiledCli(): string {
  const outDir = join(BENCH_DATA, 'peer-dist');
  rmSync(outDir, { recursive: true, force: true });
  const tsc = spawnSync(
    process.execPath,
    [
      join(REPO_ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      join(REPO_ROOT, 'tsconfig.build.json'),
      '--outDir',
      outDir,
      '--declaration',
      'false',
      '--sourceMap',
      'false',
    ],
    { cwd: REPO_ROOT, encoding: 'utf8' },
  );
  const main = join(outDir, 'cli', 'main.js');
  // tsc emits despite type errors; only a missing output is fatal here.
  if (!existsSync(main))
    throw new Error(`tsc -p tsconfig.build.json did not write ${main}:\n${tsc.stdout}${tsc.stderr}`);
  return main;
}

const ours = emptySide();
const oursCli = args.cli ? resolve(args.cli) : compiledCli();
if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });
const { result: ob, cpuS: oursServerCpuS } = await fakeServerCpu(
  () =>
    measureChild([
      process.execPath,
      ...(cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : []),
      oursCli,
      'build',
      '-f',
      oursFolder,
      '--yes',
    ]),
  cpuProfDir ? join(cpuProfDir, 'fake-server.cpuprofile') : undefined,
);
ours.buildS = ob.wallS;
ours.buildRssKb = ob.maxRssKb;
if (ob.status !== 0) ours.buildError = ob.output.slice(-1500);
ours.indexBytes = dirBytes(join(oursFolder, 'cache'), 'response_cache');
ours.buildStages = noderagStages(oursFolder);
console.log(
  `noderag build: ${fmt(ob.wallS, 1)} s (exit ${ob.status}); CPU s: build ${fmt(ob.cpuS, 2)}, fake server ${fmt(oursServerCpuS, 2)}`,
);
if (buildOnly) {
  if (ours.buildError) console.log(ours.buildError);
  console.log(
    markdownTable(
      ['stage', 's'],
      Object.entries(ours.buildStages).map(([k, v]) => [k, fmt(v, 2)]),
    ),
  );
  console.log(`load average (1/5/15 min): before ${loadBefore}, after ${load()}`);
  await fake.close();
  process.exit(ours.buildError ? 1 : 0);
}
fillSearch(
  ours,
  await runJson(process.execPath, [
    '--import',
    'tsx',
    join(REPO_ROOT, 'bench/peer/noderag-search.ts'),
    oursFolder,
    questionsFile,
    String(repeats),
  ]),
);

// --------------------------------------------------------------------------- the original
const theirs = emptySide();
const { result: tb, cpuS: theirsServerCpuS } = await fakeServerCpu(() =>
  runJson(PY, [join(REPO_ROOT, 'bench/peer/original.py'), 'build', theirsFolder]),
);
theirs.buildS = Number(tb.json?.wall_s ?? tb.wallS);
theirs.buildRssKb = Number(tb.json?.maxrss_kb ?? Number.NaN);
theirs.buildStages = (tb.json?.stages_s as Record<string, number> | undefined) ?? {};
theirs.buildError = tb.json
  ? ((tb.json.error as string | null) ?? null)
  : `no result (timeout ${PEER_TIMEOUT_MS / 1000} s?):\n${tb.raw.slice(-1500)}`;
theirs.indexBytes = dirBytes(join(theirsFolder, 'cache'), 'response_cache');
console.log(`original build: ${fmt(theirs.buildS, 1)} s${theirs.buildError ? ' (FAILED)' : ''}`);
fillSearch(
  theirs,
  await runJson(PY, [
    join(REPO_ROOT, 'bench/peer/original.py'),
    'search',
    theirsFolder,
    questionsFile,
    String(repeats),
  ]),
);

// --------------------------------------------------------------------------- LightRAG
const lr = emptySide();
interface LightragMode {
  e2e_ms: number[];
  provider_ms: number[];
  engine_ms: number[];
  empty: number;
  context_chars: number[];
  errors: number;
}
let lrBuildCalls: Record<string, number> = {};
let lrModes: Record<string, LightragMode> = {};
let lrCounts: Record<string, number | null> | null = null;
if (skipLightrag) {
  lr.buildError = 'skipped (--skip-lightrag)';
  console.log('LightRAG: skipped (--skip-lightrag)');
} else {
  const lb = await runJson(PY_LR, [LIGHTRAG_PY, 'build', lightragFolder]);
  lr.buildS = Number(lb.json?.wall_s ?? lb.wallS);
  lr.buildRssKb = Number(lb.json?.maxrss_kb ?? Number.NaN);
  lr.buildStages = (lb.json?.stages_s as Record<string, number> | undefined) ?? {};
  lr.buildError = lb.json
    ? ((lb.json.error as string | null) ?? null)
    : `no result (timeout ${PEER_TIMEOUT_MS / 1000} s?):\n${lb.raw.slice(-1500)}`;
  lrBuildCalls = (lb.json?.provider_calls as Record<string, number> | undefined) ?? {};
  /** rag_storage without kv_store_llm_response_cache.json (the provider response cache). */
  const lrStore = join(lightragFolder, 'rag_storage');
  const lrCacheFile = join(lrStore, 'kv_store_llm_response_cache.json');
  lr.indexBytes = dirBytes(lrStore) - (existsSync(lrCacheFile) ? statSync(lrCacheFile).size : 0);
  console.log(`LightRAG build: ${fmt(lr.buildS, 1)} s${lr.buildError ? ' (FAILED)' : ''}`);
  const ls = await runJson(PY_LR, [LIGHTRAG_PY, 'search', lightragFolder, questionsFile, String(repeats)]);
  fillSearch(lr, ls);
  lrModes = (ls.json?.modes as Record<string, LightragMode> | undefined) ?? {};
  lrCounts = (await runJson(PY_LR, [LIGHTRAG_PY, 'counts', lightragFolder])).json as Record<
    string,
    number | null
  > | null;
}

const recognised = { ...fake.recognised };
const byTask = { ...fake.byTask };
const counts = (
  await runJson(PY, [join(REPO_ROOT, 'bench/peer/original.py'), 'counts', oursFolder, theirsFolder])
).json as { noderag: Record<string, number | null>; original: Record<string, number | null> } | null;
const unrecognisedSamples = [...fake.unrecognisedSamples];
await fake.close();
const loadAfter = load();

// ----------------------------------------------------------------------------- report

const p = (xs: number[], q: number) => (xs.length ? percentile(xs, q) : Number.NaN);
const row = (name: string, s: Side) => [
  name,
  s.buildError ? `${fmt(s.buildS, 1)} (failed)` : fmt(s.buildS, 1),
  mib(s.buildRssKb * 1024),
  mib(s.indexBytes),
  fmt(s.loadS * 1000, 0),
  fmt(p(s.e2e, 50), 2),
  fmt(p(s.e2e, 99), 2),
  fmt(p(s.providerMs, 50), 2),
  fmt(p(s.engine, 50), 3),
  fmt(p(s.engine, 99), 3),
  `${s.e2e.length}/${n}`,
  mib(s.searchRssKb * 1024),
];
const table = markdownTable(
  [
    'system',
    'build wall s',
    'build peak RSS MiB',
    'index on disk MiB',
    'engine load ms',
    'retrieval e2e p50 ms',
    'retrieval e2e p99 ms',
    'of which provider calls p50 ms',
    'retrieval engine-only p50 ms',
    'retrieval engine-only p99 ms',
    'questions answered',
    'search peak RSS MiB',
  ],
  [
    row('noderag', ours),
    row(`original NodeRAG (${PEER_PACKAGE})`, theirs),
    ...(skipLightrag ? [] : [row(`LightRAG (${LIGHTRAG_PACKAGE}, mix mode)`, lr)]),
  ],
);
const ratio = (a: number, b: number) =>
  Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : Number.NaN;
const buildSpeedup = theirs.buildError ? Number.NaN : ratio(theirs.buildS, ours.buildS);
const retrievalSpeedup = ratio(p(theirs.engine, 50), p(ours.engine, 50));
const e2eSpeedup = ratio(p(theirs.e2e, 50), p(ours.e2e, 50));
const loadSpeedup = ratio(theirs.loadS, ours.loadS);
const lrBuildSpeedup = lr.buildError ? Number.NaN : ratio(lr.buildS, ours.buildS);
const lrRetrievalSpeedup = ratio(p(lr.engine, 50), p(ours.engine, 50));
const lrLoadSpeedup = ratio(lr.loadS, ours.loadS);
/** Without LightRAG (`--skip-lightrag`) its column (the last) is left out. */
const withoutLightrag = (rows: string[][]) => (skipLightrag ? rows.map((r) => r.slice(0, -1)) : rows);
const ratios = markdownTable(
  withoutLightrag([
    ['ratio (their time or size / noderag)', 'original / noderag', 'LightRAG (mix) / noderag'],
  ])[0]!,
  withoutLightrag([
    [
      'build wall time (RESULT build_speedup, lightrag_build_speedup)',
      fmt(buildSpeedup),
      fmt(lrBuildSpeedup),
    ],
    ['engine load time (RESULT load_speedup, lightrag_load_speedup)', fmt(loadSpeedup), fmt(lrLoadSpeedup)],
    [
      'retrieval engine-only p50 (RESULT retrieval_speedup, lightrag_retrieval_speedup)',
      fmt(retrievalSpeedup),
      fmt(lrRetrievalSpeedup),
    ],
    [
      'retrieval engine-only p99',
      fmt(ratio(p(theirs.engine, 99), p(ours.engine, 99))),
      fmt(ratio(p(lr.engine, 99), p(ours.engine, 99))),
    ],
    ['retrieval end-to-end p50', fmt(e2eSpeedup), fmt(ratio(p(lr.e2e, 50), p(ours.e2e, 50)))],
    [
      'retrieval end-to-end p99',
      fmt(ratio(p(theirs.e2e, 99), p(ours.e2e, 99))),
      fmt(ratio(p(lr.e2e, 99), p(ours.e2e, 99))),
    ],
    [
      'index on disk',
      fmt(ratio(theirs.indexBytes, ours.indexBytes)),
      fmt(ratio(lr.indexBytes, ours.indexBytes)),
    ],
    [
      'build peak RSS',
      fmt(ratio(theirs.buildRssKb, ours.buildRssKb)),
      fmt(ratio(lr.buildRssKb, ours.buildRssKb)),
    ],
    [
      'search peak RSS',
      fmt(ratio(theirs.searchRssKb, ours.searchRssKb)),
      fmt(ratio(lr.searchRssKb, ours.searchRssKb)),
    ],
  ]),
);
const modeTable = markdownTable(
  [
    'LightRAG mode',
    'e2e p50 ms',
    'e2e p99 ms',
    'of which provider calls p50 ms',
    'engine-only p50 ms',
    'engine-only p99 ms',
    'engine-only p50 / noderag',
    'empty contexts',
    'context chars p50',
    'errors',
  ],
  Object.entries(lrModes).map(([mode, m]) => [
    mode,
    fmt(p(m.e2e_ms, 50), 2),
    fmt(p(m.e2e_ms, 99), 2),
    fmt(p(m.provider_ms, 50), 2),
    fmt(p(m.engine_ms, 50), 3),
    fmt(p(m.engine_ms, 99), 3),
    fmt(ratio(p(m.engine_ms, 50), p(ours.engine, 50))),
    `${m.empty}/${m.e2e_ms.length}`,
    fmt(p(m.context_chars, 50), 0),
    String(m.errors),
  ]),
);
const lrCountsTable = lrCounts
  ? markdownTable(
      ['LightRAG index contents', LIGHTRAG_PACKAGE],
      Object.entries(lrCounts).map(([k, v]) => [k, String(v ?? '-')]),
    )
  : '(LightRAG index contents not available)';

const callTable = markdownTable(
  withoutLightrag([
    ['provider call in the e2e pass', 'noderag p50 ms', 'original p50 ms', 'LightRAG (mix) p50 ms'],
  ])[0]!,
  withoutLightrag([
    [
      'question embedding (POST /v1/embeddings)',
      fmt(p(ours.callMs.embed, 50), 2),
      fmt(p(theirs.callMs.embed, 50), 2),
      fmt(p(lr.callMs.embed, 50), 2),
    ],
    [
      'question decomposition / keyword extraction (POST /v1/chat/completions)',
      fmt(p(ours.callMs.query, 50), 2),
      fmt(p(theirs.callMs.query, 50), 2),
      fmt(p(lr.callMs.query, 50), 2),
    ],
  ]),
);
const stageTable = (stages: Record<string, number>, unit: string, digits: number) =>
  Object.keys(stages).length
    ? markdownTable(
        ['stage', unit],
        Object.entries(stages).map(([k, v]) => [k, fmt(v, digits)]),
      )
    : '(none recorded)';
const problems = [
  ...(ours.buildError ? [`noderag build failed:\n${ours.buildError}`] : []),
  ...ours.errors.map((e) => `noderag search error (${e.question ?? 'load'}):\n${e.traceback}`),
  ...(theirs.buildError ? [`original build failed:\n${theirs.buildError}`] : []),
  ...theirs.errors.slice(0, 3).map((e) => `original search error (${e.question ?? 'load'}):\n${e.traceback}`),
  ...(theirs.errors.length > 3 ? [`... and ${theirs.errors.length - 3} more original search errors`] : []),
  ...(lr.buildError && !skipLightrag ? [`LightRAG build failed:\n${lr.buildError}`] : []),
  ...lr.errors.slice(0, 3).map((e) => `LightRAG search error (${e.question ?? 'load'}):\n${e.traceback}`),
  ...(lr.errors.length > 3 ? [`... and ${lr.errors.length - 3} more LightRAG search errors`] : []),
  ...(recognised.unrecognised
    ? [
        `${recognised.unrecognised} chat prompts the fake server did not recognise, e.g.:\n${unrecognisedSamples.join('\n---\n')}`,
      ]
    : []),
];
const vectors = (() => {
  const file = join(oursFolder, 'info', 'info.log');
  const m = existsSync(file) ? /HNSW pipeline .*?items=(\d+)/.exec(readFileSync(file, 'utf8')) : null;
  return m ? Number(m[1]) : Number.NaN;
})();
const ourStages = Object.entries(ours.engineStages).sort((a, b) => b[1] - a[1]);
const ourTotal = ourStages.reduce((a, [, v]) => a + v, 0);
const theirStages = Object.entries(theirs.engineStages).sort((a, b) => b[1] - a[1]);
const goal = [
  '### Goal check (issue 8: retrieval at least 100x faster than the original)',
  '',
  `${Number.isFinite(retrievalSpeedup) && retrievalSpeedup >= 100 ? 'Met' : 'Missed'} in this run: engine-only p50`,
  `${fmt(p(theirs.engine, 50), 2)} ms (original) vs ${fmt(p(ours.engine, 50), 2)} ms (noderag), x${fmt(retrievalSpeedup)}; end-to-end`,
  `x${fmt(e2eSpeedup)}, because both sides spend most of a question in the two provider round trips.`,
  `Where the engine time goes (stage means above): noderag ${ourStages
    .slice(0, 2)
    .map(([k, v]) => `${k} ${fmt(v, 2)} ms`)
    .join(', ')} of ${fmt(ourTotal, 2)} ms; the original ${theirStages
    .slice(0, 2)
    .map(([k, v]) => `${k} ${fmt(v, 2)} ms`)
    .join(', ')}.`,
  ...(vectors < 1000
    ? [
        `noderag's vector stage is an exact scan here: crates/noderag_hnsw searches exactly below`,
        `EXACT_SEARCH_BELOW = 1000 live vectors, and this index has ${vectors} vectors of 1536 floats, about`,
        `${fmt((vectors * 1536 * 4) / 1e6, 1)} MB read per question, while the original's hnswlib graph search over its own index`,
      ]
    : [
        `noderag's vector stage is an HNSW graph search here (${vectors} vectors, at least EXACT_SEARCH_BELOW = 1000),`,
        "with ef_search 64, while the original's hnswlib graph search over its own index",
      ]),
  'takes the "hnsw" time above, with a narrower beam: NodeRAG 0.1.0 never calls hnswlib\'s',
  "`set_ef`, so its queries run with hnswlib's default ef = 10 (k = 10 hits). The original's own cost",
  'is Python work that grows with the',
  'graph (a regex per query element over every entity name and title, `list.index` per seed and a',
  `full sort of all nodes in its PageRank); at ${paragraphs} paragraphs that is ${fmt(p(theirs.engine, 50), 1)} ms (p50), so 100x`,
  `would need noderag's whole retrieval, vector search included, to take ${fmt(p(theirs.engine, 50) / 100, 2)} ms.`,
];
const lrGoal = skipLightrag
  ? ['LightRAG: skipped in this run (`--skip-lightrag`).']
  : [
      '### Goal check (issue 20: every `lightrag_*_speedup` at least 5)',
      '',
      ...(
        [
          ['build', lrBuildSpeedup],
          ['retrieval engine-only p50 (mix)', lrRetrievalSpeedup],
          ['load', lrLoadSpeedup],
        ] as [string, number][]
      ).map(([k, v]) => `- ${k}: x${fmt(v)}, ${Number.isFinite(v) && v >= 5 ? 'met' : 'missed'}`),
    ];
const resultLine =
  `RESULT peer build_speedup=${fmt(buildSpeedup)} retrieval_speedup=${fmt(retrievalSpeedup)} load_speedup=${fmt(loadSpeedup)}` +
  (skipLightrag
    ? ''
    : ` lightrag_build_speedup=${fmt(lrBuildSpeedup)} lightrag_retrieval_speedup=${fmt(lrRetrievalSpeedup)} lightrag_load_speedup=${fmt(lrLoadSpeedup)}`);
const served =
  `chat requests served: ${recognised.noderag} noderag prompts (build + retrieval), ` +
  `${recognised.original} original-NodeRAG prompts, ${recognised.lightrag} LightRAG prompts, ${recognised.unrecognised} unrecognised ` +
  `(${Object.entries(byTask)
    .sort()
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')}); ` +
  `its CPU time while each side built (it runs in the bench process, on the same cores): noderag ${fmt(oursServerCpuS, 2)} s, ` +
  `original ${fmt(theirsServerCpuS, 2)} s; the build process's own CPU time: noderag ${fmt(ob.cpuS, 2)} s`;
const countsTable = counts
  ? markdownTable(
      ['index contents', 'noderag', `original (${PEER_PACKAGE})`],
      Object.keys({ ...counts.noderag, ...counts.original }).map((k) => [
        k,
        String(counts.noderag[k] ?? '-'),
        String(counts.original[k] ?? '-'),
      ]),
    )
  : '(index contents not available)';

console.log(
  `\nnoderag vs the original NodeRAG and LightRAG, ${paragraphs} HotpotQA paragraphs, ${n} questions, fake OpenAI server (0 ms)\n`,
);
console.log(table);
console.log(`\n${ratios}`);
console.log(`\n${countsTable}`);
console.log(`\n${lrCountsTable}`);
console.log(`\n${modeTable}`);
console.log(`\n${callTable}`);
console.log(
  `\nengine-only stages, mean ms per question:\nnoderag\n${stageTable(ours.engineStages, 'ms', 3)}\noriginal\n${stageTable(theirs.engineStages, 'ms', 3)}`,
);
console.log(`\n${buildStageTable(ours, theirs)}`);
console.log(`\nLightRAG build stages\n${stageTable(lr.buildStages, 's', 2)}`);
for (const x of problems) console.log(`\n${x}`);
console.log(`\n${served}\nload average (1/5/15 min): before ${loadBefore}, after ${loadAfter}`);

// The full-corpus run keeps its own section, so the default (gold) run's stays beside it.
writeResultsSection(
  fullCorpus ? 'peer (full corpus)' : 'peer',
  [
    `noderag against the original Python NodeRAG (${PEER_PACKAGE} from PyPI, installed by the bench into`,
    `the throw-away virtualenv bench/.venv-noderag) and against LightRAG (${LIGHTRAG_PACKAGES.join(' and ')} from PyPI,`,
    `in bench/.venv-lightrag, driven by bench/peer/lightrag_driver.py), same ${paragraphs} HotpotQA paragraphs (${corpusText},`,
    'one file each), same fake OpenAI-compatible server',
    '(bench/peer/fake-server.ts: zero latency, deterministic answers of the local provider, dim 1536), same',
    `${n} questions. Each side runs in its own child processes; the server runs in the bench process.`,
    '',
    `Command: \`npm run bench -- peer${fullCorpus ? ' --corpus full' : ''}${skipLightrag ? ' --skip-lightrag' : ''}\` (defaults \`--corpus gold --questions 50 --repeats 5\`; \`--questions N\` sets the`,
    `gold corpus size, \`--corpus full\` takes all 994 paragraphs and 100 questions, \`--repeats R\` the rounds of the engine-only pass; this run: ${n} questions, ${repeats} rounds). Load average`,
    `(1/5/15 min) before ${loadBefore}, after ${loadAfter}; on 2 cores any other load makes timings noisy.`,
    '',
    table,
    '',
    '- build wall: the whole build in a child process; provider latency is zero, so it is the',
    "  pipeline's own time plus loopback HTTP to the fake server (which runs on the same 2 cores).",
    "- index on disk: the `cache/` folder after the build, without noderag's provider response cache",
    '  (`cache/response_cache`; the original has none); LightRAG: its `rag_storage/` folder without its',
    '  provider response cache `kv_store_llm_response_cache.json`.',
    '- engine load: constructing the search engine on the built index (noderag `NodeSearch` until',
    '  `ready()`, the original `NodeSearch(config)`).',
    "- retrieval e2e: one question's retrieval (context string included) with its embedding and",
    '  decomposition requests to the fake server; "of which provider calls" is the time inside those',
    '  calls (noderag makes them concurrently, the original one after the other).',
    `- retrieval engine-only: the same questions again, ${repeats} rounds, on the same engine, with the two provider`,
    "  replies recorded in the e2e pass served in-process, so only the engine's own work is timed",
    '  (original: bench/peer/original.py replaces its `embedding_client.request` / `API_client.request`;',
    '  noderag: bench/peer/noderag-search.ts passes `NodeSearch` recording/replaying providers).',
    "  noderag's retrieval cache is off (`retrievalCacheSize: 0`), else the repeats would be cache hits.",
    '  `retrieval_speedup` in the RESULT line is the ratio of these p50s (original / noderag).',
    '- LightRAG: its `mix` mode (its `QueryParam` default) is the headline row, context only',
    '  (`aquery(q, QueryParam(mode, only_need_context=True, enable_rerank=False))`, no answer call).',
    '  Per question it makes one keyword-extraction chat call and one batched embedding call; the',
    '  engine-only pass answers both in-process from the replies recorded in the e2e pass',
    '  (bench/peer/lightrag_driver.py wraps the model functions it hands to `LightRAG`). Build wall: from',
    '  importing lightrag to `finalize_storages` after `ainsert` of all paragraphs (the Python',
    '  interpreter start is not included, as for the original); load: `LightRAG(...)` on the built',
    '  folder plus `initialize_storages()`. `lightrag_*_speedup` in the RESULT line are LightRAG / noderag.',
    '  Settings changed from its defaults, each forced by the fake provider or the measurement:',
    '  `enable_llm_cache=False` at search (else the engine-only repeats hit its response cache, and',
    '  each new query rewrites that whole JSON file), `enable_rerank=False` (no rerank model), and',
    '  `base_url` passed explicitly (its OpenAI binding reads `OPENAI_API_BASE`, not `OPENAI_BASE_URL`).',
    "  Each of its provider calls builds a new `AsyncOpenAI` client (LightRAG's binding does that), which",
    "  is part of its provider time, not the fake server's. The fake server answers its extraction",
    '  prompt from the same local decomposition (entities, and relationships split at the first and',
    '  last comma as the repair task does), its gleaning prompt with the completion delimiter only,',
    '  its keyword prompt from the local query decomposition (names and years as low-level keywords,',
    '  other words as high-level ones) and its summary prompt with the unique descriptions joined;',
    '  embeddings are the same feature-hash vectors for all three systems; LightRAG drops vector hits',
    '  below its cosine threshold (0.2), which such vectors of short keyword lists can miss, so a mode',
    '  may find nothing for a question: the empty contexts are counted per mode below.',
    "- seeds: noderag's build is deterministic; for the original, bench/peer/original.py seeds Python's",
    "  `random` (networkx's sampled betweenness), numpy, and leidenalg's partition (seed 0) before the",
    '  build (hnswlib and faiss already use fixed seeds). That does not make it repeatable: it fans its',
    '  provider calls out with asyncio and stores the replies in arrival order, which becomes the node',
    '  order of its graph, from which networkx draws the 10 betweenness pivots of its important-entity',
    '  test and on which the Leiden partition depends. Its attribute and high-level-element counts vary',
    '  by a few between runs (52-58 attributes and 41-44 elements seen in five runs), its relationship',
    '  count by one (its graph pipeline checks for an existing relationship, awaits, then adds it).',
    '',
    ratios,
    '',
    'What each index holds (rows of the node tables; the graph as stored by each build). Same',
    'decomposition, so the same text chunks, semantic units, entities and relationships; the',
    'important-entity selection (attributes) and the community detection (high-level elements)',
    "are each system's own algorithm, so those counts differ:",
    '',
    countsTable,
    '',
    "LightRAG's index (its own data model: one chunk per paragraph, entities and relationships as",
    'extracted from the same decomposition, merged by name; the graph holds the entities as nodes):',
    '',
    lrCountsTable,
    '',
    `LightRAG by query mode (same ${n} questions; engine-only: ${repeats} rounds with recorded provider replies;`,
    `empty: the context is LightRAG's \`fail_response\`; the ratio column divides by noderag's engine-only p50):`,
    '',
    modeTable,
    '',
    'The provider calls inside the end-to-end retrieval, each timed from the client (request, fake',
    "server's answer, response parsing; both sides ask for base64 embeddings; noderag runs both calls",
    'at once against the one-threaded fake server, and caches neither at search time):',
    '',
    callTable,
    '',
    'Engine-only retrieval by stage, mean ms per question (noderag: `retrieve()` timings on the',
    'recorded inputs; original: its `NodeSearch` methods wrapped with timers):',
    '',
    'noderag:',
    '',
    stageTable(ours.engineStages, 'ms', 3),
    '',
    'original:',
    '',
    stageTable(theirs.engineStages, 'ms', 3),
    '',
    "Build by pipeline stage, each system's own timer in its info/info.log (noderag logs 0.1 s",
    "resolution; its build runs the CLI compiled by tsc, as an installed package does, so the rest is Node's start and the imports):",
    '',
    buildStageTable(ours, theirs),
    '',
    `LightRAG build stages (bench/peer/lightrag_driver.py's timers; provider calls during the build: ${Object.entries(
      lrBuildCalls,
    )
      .map(([k, v]) => `${v} ${k === 'query' ? 'chat' : k}`)
      .join(', ')}):`,
    '',
    stageTable(lr.buildStages, 's', 2),
    '',
    `Fake server: ${served}.`,
    '',
    ...goal,
    '',
    ...lrGoal,
    '',
    ...ORIGINAL_NOTES,
    '',
    ...(problems.length
      ? ['What went wrong in this run:', '', '```', ...problems, '```', '']
      : ['Nothing crashed in this run.', '']),
    resultLine,
  ].join('\n'),
);
console.log(resultLine);
