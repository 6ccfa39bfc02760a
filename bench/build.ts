/**
 * `npm run bench -- build`: `noderag build` on HotpotQA-100 (994 paragraphs from
 * bench/data/hotpotqa/corpus.json, one titled input file per paragraph) with the
 * offline `local` provider, dim 256.
 *
 * Each build runs in its own process (this file with `--worker <folder>`), so peak RSS is
 * that build's alone; the wall time is from spawn to exit, Node and tsx start-up included,
 * which is what a user of the CLI waits. Per-stage times come from info/info.log.
 *
 * Peer in the same run: an incremental cycle. The same corpus minus 10 % is built first;
 * then the last 10 % of the files are added and indexed by a second cycle (generation 2),
 * which should cost a fraction of a full build. A third run with nothing new shows the
 * cost of an up-to-date check.
 *
 * Last line: RESULT build seconds=<s> peak_rss_mb=<m> nodes=<n> edges=<e> (the full build).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { timedBuild } from './lib/timed-build.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const CORPUS = process.env.BENCH_BUILD_CORPUS ?? join(HERE, 'data', 'hotpotqa', 'corpus.json');

// ----------------------------------------------------------------------------- driver

interface RunResult {
  wall: number;
  inProcess: number;
  /** CPU seconds of the build process (all threads), start-up included. */
  cpu: number;
  peakRssMb: number;
}

function fileName(i: number, title: string): string {
  const safe = title
    .replace(/[^\p{L}\p{N} ._-]+/gu, '_')
    .slice(0, 80)
    .trim();
  return `${String(i + 1).padStart(4, '0')}-${safe}.txt`;
}

function writeProject(root: string, docs: [string, string][]): void {
  mkdirSync(join(root, 'input'), { recursive: true });
  for (const [name, text] of docs) writeFileSync(join(root, 'input', name), text);
  const config = {
    model_config: { service_provider: 'local', model_name: 'local' },
    embedding_config: { service_provider: 'local', embedding_model_name: 'feature-hash' },
    config: { main_folder: root, language: 'English', dim: 256, use_rich: false, use_tqdm: false },
  };
  writeFileSync(join(root, 'Node_config.yaml'), stringify(config));
}

function runWorker(root: string): RunResult {
  const started = performance.now();
  const report = timedBuild(root);
  const wall = (performance.now() - started) / 1000;
  return { wall, inProcess: report.seconds, cpu: report.cpuSeconds, peakRssMb: report.peakRssMb };
}

/** "<stage> (generation g) finished in N s" lines of info.log, per generation. */
function stageTimes(root: string): Map<string, number> {
  const out = new Map<string, number>();
  const log = readFileSync(join(root, 'info', 'info.log'), 'utf8');
  for (const m of log.matchAll(/INFO (.+ pipeline) \(generation (\d+)\) finished in ([\d.]+) s/g)) {
    out.set(`${m[1]}@${m[2]}`, Number(m[3]));
  }
  return out;
}

async function graphCounts(
  root: string,
): Promise<{ byType: Map<string, number>; nodes: number; edges: number; similarity: number }> {
  const { readTable } = await import('../ts/store/index.js');
  const nodes = await readTable(join(root, 'cache', 'graph_nodes.parquet'), {
    columns: [{ name: 'type', kind: 'utf8' }],
  });
  const edges = await readTable(join(root, 'cache', 'graph_edges.parquet'), {
    columns: [{ name: 'source', kind: 'utf8' }],
  });
  const sim = await readTable(join(root, 'cache', 'hnsw_graph.parquet'), {
    columns: [{ name: 'source', kind: 'utf8' }],
  });
  const byType = new Map<string, number>();
  const types = nodes.columns[0]!.kind === 'utf8' ? nodes.columns[0]!.strings : [];
  for (const t of types) byType.set(t ?? '?', (byType.get(t ?? '?') ?? 0) + 1);
  return { byType, nodes: nodes.numRows, edges: edges.numRows, similarity: sim.numRows };
}

const corpus = JSON.parse(readFileSync(CORPUS, 'utf8')) as Record<string, string[]>;
const docs: [string, string][] = Object.entries(corpus).map(([title, sentences], i) => [
  fileName(i, title),
  `${title}\n\n${sentences.join('').trim()}\n`,
]);
const chars = docs.reduce((n, [, t]) => n + t.length, 0);
const load = (await import('node:os')).loadavg()[0]!.toFixed(2);
console.log(
  `HotpotQA-100: ${docs.length} paragraphs, ${chars.toLocaleString('en-US')} characters; local provider, dim 256, chunk_size 1048, other settings default (m 50, ef 200); load average ${load}`,
);

const work = mkdtempSync(join(tmpdir(), 'noderag-bench-build-'));
try {
  // Full build.
  const full = join(work, 'full');
  writeProject(full, docs);
  const fullRun = runWorker(full);
  const fullStages = stageTimes(full);
  const counts = await graphCounts(full);

  // Peer: 90 % first, then the last 10 % as an increment, then an up-to-date run.
  const cut = Math.floor(docs.length * 0.9);
  const inc = join(work, 'incremental');
  writeProject(inc, docs.slice(0, cut));
  const baseRun = runWorker(inc);
  for (const [name, text] of docs.slice(cut)) writeFileSync(join(inc, 'input', name), text);
  const incRun = runWorker(inc);
  const incStages = stageTimes(inc);
  const noopRun = runWorker(inc);
  const incCounts = await graphCounts(inc);

  const STAGES = [
    'Document pipeline',
    'Text pipeline',
    'Graph pipeline',
    'Attribute pipeline',
    'Embedding pipeline',
    'Summary pipeline',
    'Insert text pipeline',
    'HNSW pipeline',
  ];
  console.log('\n| stage | full build s | 90 % build s | +10 % increment s |');
  console.log('|---|---:|---:|---:|');
  for (const s of STAGES) {
    const f = fullStages.get(`${s}@1`) ?? 0;
    const b = incStages.get(`${s}@1`) ?? 0;
    const i = incStages.get(`${s}@2`) ?? 0;
    console.log(`| ${s} | ${f.toFixed(1)} | ${b.toFixed(1)} | ${i.toFixed(1)} |`);
  }

  console.log(
    '\n| run | documents | wall s (process) | build s (in process) | CPU s (process) | peak RSS MB |',
  );
  console.log('|---|---:|---:|---:|---:|---:|');
  const row = (name: string, n: number, r: RunResult) =>
    console.log(
      `| ${name} | ${n} | ${r.wall.toFixed(2)} | ${r.inProcess.toFixed(2)} | ${r.cpu.toFixed(1)} | ${r.peakRssMb.toFixed(0)} |`,
    );
  row('full build', docs.length, fullRun);
  row('peer: build of the first 90 %', cut, baseRun);
  row('peer: increment of the last 10 %', docs.length - cut, incRun);
  row('peer: nothing new (up to date)', 0, noopRun);

  console.log('\n| node type | full build | 90 % + 10 % increment |');
  console.log('|---|---:|---:|');
  for (const t of [...counts.byType.keys()].sort()) {
    console.log(`| ${t} | ${counts.byType.get(t)} | ${incCounts.byType.get(t) ?? 0} |`);
  }
  console.log(`| all nodes | ${counts.nodes} | ${incCounts.nodes} |`);
  console.log(`| base-graph edges | ${counts.edges} | ${incCounts.edges} |`);
  console.log(`| similarity edges (hnsw_graph) | ${counts.similarity} | ${incCounts.similarity} |`);
  console.log(
    `\nincrement / full build wall time: ${(incRun.wall / fullRun.wall).toFixed(2)} (in process ${(incRun.inProcess / fullRun.inProcess).toFixed(2)})`,
  );
  console.log(
    `RESULT build seconds=${fullRun.wall.toFixed(2)} peak_rss_mb=${fullRun.peakRssMb.toFixed(0)} nodes=${counts.nodes} edges=${counts.edges}`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
