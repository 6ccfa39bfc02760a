/**
 * `node --import tsx bench/lib/lightrag-subset.ts [--index DIR]`
 *
 * LightRAG against noderag while LightRAG's local-embedding index of the quality bench
 * (bench/.data/lightrag-quality-<key>, built by `npm run bench -- quality --lightrag local`)
 * is still unfinished: its build takes tens of minutes on a busy machine and resumes where it
 * stopped. LightRAG processes the files in name order, so the processed ones are the
 * paragraphs of the first questions. This compares the three retrievers on exactly that part:
 *
 *   - a snapshot of LightRAG's storage (copied, so the running build may go on);
 *   - a noderag index (`local` provider, the bench's config) of the same processed paragraphs;
 *   - the questions all of whose 10 paragraphs (gold and distractors) are processed;
 *   - scored as the quality bench's LightRAG rows (bench/lib/lightrag-row.ts).
 *
 * LightRAG's vectors may include entities and chunks of the few documents it was merging at
 * the snapshot (not counted as processed): a slight advantage to LightRAG. The printout is the
 * table of bench/lib/lightrag-row.ts with the corpus and question counts; nothing is written.
 */
import { copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { NodeConfig } from '../../ts/config/node-config.js';
import { evaluate } from '../../ts/eval/index.js';
import { createProviders } from '../../ts/llm/create-providers.js';
import { LoadedIndex, type QueryInputs } from '../../ts/search/index.js';
import {
  BENCH_DATA,
  loadCorpus,
  loadQuestions,
  localConfigYaml,
  paragraphFileName,
  runCli,
} from './hotpot.js';
import { lightragIndexFolder } from './lightrag.js';
import { lightragMixContexts } from './lightrag-quality.js';
import { lightragRows } from './lightrag-row.js';
import { hotpotEvalQuestions } from './quality-eval.js';

const LOCAL_INPUT = join(BENCH_DATA, 'hotpot-local', 'input');
const { values: args } = parseArgs({ options: { index: { type: 'string' } } });
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const log = (line: string) => console.log(line);
const loadBefore = load();

const dim = NodeConfig.fromMainFolder(join(BENCH_DATA, 'hotpot-local')).config.dim;
const spec = {
  base_url: null,
  model: 'feature-hash',
  dim,
  query_prefix: '',
  document_prefix: '',
  max_token_size: 8192,
};
const source =
  args.index ?? lightragIndexFolder(LOCAL_INPUT, { ...spec, base_url: 'unused: not in the key' }).folder;
const snapshot = join(BENCH_DATA, 'lightrag-subset');
rmSync(snapshot, { recursive: true, force: true });
mkdirSync(join(snapshot, 'input'), { recursive: true });
cpSync(join(source, 'rag_storage'), join(snapshot, 'rag_storage'), { recursive: true });
// A write the build had in flight (LightRAG writes through `.tmp.` files, then renames).
for (const f of readdirSync(join(snapshot, 'rag_storage')))
  if (f.includes('.tmp.')) rmSync(join(snapshot, 'rag_storage', f));
const status = JSON.parse(
  readFileSync(join(snapshot, 'rag_storage', 'kv_store_doc_status.json'), 'utf8'),
) as Record<string, { status: string; file_path: string }>;
const processed = new Set(
  Object.entries(status)
    .filter(([id, s]) => !id.startsWith('dup-') && s.status === 'processed')
    .map(([, s]) => s.file_path),
);
for (const f of processed) copyFileSync(join(LOCAL_INPUT, f), join(snapshot, 'input', f));

const fileOf = new Map(Object.keys(loadCorpus()).map((t, i) => [t, paragraphFileName(i, t)]));
const all = hotpotEvalQuestions().questions;
const keep = loadQuestions()
  .map((q, n) => (q.context.every(([t]) => processed.has(fileOf.get(t) ?? '')) ? n : -1))
  .filter((n) => n >= 0);
const questions = keep.map((n) => all[n]!);
log(`LightRAG index ${source}: ${processed.size} paragraphs processed; ${keep.length} questions have all 10`);
if (!keep.length) process.exit(1);

const folder = join(BENCH_DATA, 'lightrag-subset-noderag');
rmSync(folder, { recursive: true, force: true });
mkdirSync(join(folder, 'input'), { recursive: true });
for (const f of processed) copyFileSync(join(LOCAL_INPUT, f), join(folder, 'input', f));
writeFileSync(join(folder, 'Node_config.yaml'), localConfigYaml(folder));
const built = runCli(['build', '-f', folder, '--yes']);
if (built.status !== 0) throw new Error(`noderag build of ${folder} failed:\n${built.stderr}${built.stdout}`);

const config = NodeConfig.fromMainFolder(folder);
const run = await evaluate({ questions, configs: [{ name: 'default', config, overrides: {} }] });
const lr = await lightragMixContexts(
  questions.map((q) => q.question),
  spec,
  join(snapshot, 'input'),
  log,
  snapshot,
);
const providers = createProviders(config, { mode: 'search' });
const index = await LoadedIndex.load(folder, { dim: config.config.dim, unbalanceAdjust: true });
const inputs: QueryInputs[] = [];
for (const q of questions) {
  const { elements } = await providers.run('query', { question: q.question });
  inputs.push({ vector: (await providers.embedQuery(q.question)).slice(), elements });
}
const rows = lightragRows(
  run,
  {
    score: run.score,
    inputs,
    indexes: { adjusted: index, plain: index },
    base: config.config,
    naiveThresholds: [],
    tokenFactor: 1,
  },
  lr.contexts,
  run.configs[0]!.summary,
  'local embeddings, unfinished index',
);
index.close();
providers.close();
log(
  `\nLightRAG's unfinished local index against noderag on the same ${processed.size} paragraphs; ` +
    `the ${keep.length} questions all of whose paragraphs are in them (Q${keep.map((n) => n + 1).join(', Q')}). ` +
    `LightRAG: ${lr.empty} empty contexts, ${lr.failed} failed; fake-server calls ${JSON.stringify(lr.byTask)}. ` +
    `Load average ${loadBefore} before, ${load()} after.\n`,
);
log(rows.text);
log(`\nRESULT lightrag_subset paragraphs=${processed.size} questions=${keep.length} ${rows.result}`);
