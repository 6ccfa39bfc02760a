/**
 * `npm run bench -- update`: the index follows its input folder (docs/method.md §4.5) on
 * HotpotQA-100 with the offline `local` provider.
 *
 *  1. full build of the 994 paragraphs;
 *  2. edit 10 % of the files (one sentence changed each), delete 5 %, rename 5 %; sync;
 *  3. clean build of the final folder.
 *
 * C = model calls of the sync / of the clean build (info.log `calls=`), S = sync wall time /
 * clean build wall time (builds in process), E = 1 when the text, semantic-unit, entity and
 * relationship tables and the base-graph nodes and edges equal the clean build's (ids,
 * contexts, weights, chunk lists and relation phrases as sets), D = retrieval contexts, over
 * the 100 questions plus one question per deleted file (its first sentence), that hold the
 * text of a removed chunk or of a removed semantic unit that no remaining chunk holds, R =
 * requests that did not get a 200 from a `noderag search` server (by default it follows new
 * generations) questioned 4 at a time during the sync and until it serves the new one.
 *
 * Last line: RESULT update calls_ratio=C seconds_ratio=S tables_equal=E deleted_text_hits=D reload_errors=R
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeConfig } from '../ts/config/node-config.js';
import { IndexData } from '../ts/index-io/index-data.js';
import { runBuild } from '../ts/indexing/pipeline.js';
import { NodeSearch } from '../ts/search/node-search.js';
import { buildLogMark, buildLogSince, stageSeconds } from './lib/build-log.js';
import { comparableIndex } from './lib/comparable-index.js';
import { loadCorpus, loadQuestions, localConfigYaml, paragraphFileName, REPO_ROOT } from './lib/hotpot.js';

async function freePort(): Promise<number> {
  return new Promise((done) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => done(port));
    });
  });
}

/** `noderag search` on `root` (reloading, the default); resolves with its URL once listening. */
async function serve(root: string): Promise<{ child: ChildProcess; url: string; stdout: () => string }> {
  const port = await freePort();
  const cli = join(REPO_ROOT, 'ts', 'cli', 'main.ts');
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', cli, 'search', '-f', root, '--host', '127.0.0.1', '--port', String(port)],
      { cwd: REPO_ROOT, env: { ...process.env, NO_COLOR: '1' } },
    );
    let stdout = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = /listening on (http:\/\/\S+) /.exec(stdout);
      if (m) done({ child, url: m[1]!, stdout: () => stdout });
    });
    child.on('close', (code) => fail(new Error(`search exited with ${code} before listening`)));
  });
}

const DIM = 256;

function writeProject(root: string, files: [string, string][]): void {
  mkdirSync(join(root, 'input'), { recursive: true });
  for (const [name, text] of files) writeFileSync(join(root, 'input', name), text);
  writeFileSync(join(root, 'Node_config.yaml'), localConfigYaml(root));
}

/** Builds in process; wall and CPU seconds and the model calls of the generations it ran. */
async function build(root: string): Promise<{
  seconds: number;
  cpuSeconds: number;
  calls: number;
  byStage: Map<string, number>;
  stageSeconds: Map<string, number>;
  /**
   * Process CPU seconds (every thread) per stage, its commit included, from the end of the
   * stage before (the first stage of the run: from the start, INIT included); after the
   * last commit: the follow-up discovery and the end of the run, as "(after)".
   */
  stageCpu: Map<string, number>;
  /** The Attribute stage's summary line (important entities, calls by decision). */
  attribute: string;
  /** The Summary stage's summary line (communities summarised, reused, formed again). */
  summary: string;
}> {
  const logBefore = buildLogMark(root);
  // The stages' summaries (stdout) are kept for the Attribute and Summary stages' decision counts.
  let printed = '';
  const sink = {
    write: (chunk: string | Uint8Array) => {
      printed += String(chunk);
      return true;
    },
    isTTY: false,
  } as unknown as NodeJS.WritableStream & { isTTY: false };
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const cpuNow = () => {
    const c = process.cpuUsage(cpuBefore);
    return (c.user + c.system) / 1e6;
  };
  const stageCpu = new Map<string, number>();
  let stageStart = 0;
  const code = await runBuild({
    folder: root,
    yes: true,
    stdout: sink,
    stderr: process.stderr,
    handleSignals: false,
    hooks: {
      afterStage: (stage) => {
        const now = cpuNow();
        const name = stage.replace(/ pipeline$/, '');
        stageCpu.set(name, (stageCpu.get(name) ?? 0) + now - stageStart);
        stageStart = now;
      },
    },
  });
  const seconds = (performance.now() - started) / 1000;
  // Process CPU (every thread: the native pool too), steadier than wall time on a shared machine.
  const cpuSeconds = cpuNow();
  stageCpu.set('(after)', cpuSeconds - stageStart);
  if (code !== 0) throw new Error(`build of ${root} failed (exit ${code})`);
  const log = buildLogSince(root, logBefore);
  let calls = 0;
  const byStage = new Map<string, number>();
  for (const m of log.matchAll(/INFO (\S+) pipeline \(generation \d+\) finished in .*\bcalls=(\d+)/g)) {
    calls += Number(m[2]);
    byStage.set(m[1]!, (byStage.get(m[1]!) ?? 0) + Number(m[2]));
  }
  const attribute = /\d+ important entities of [^\n]*/.exec(printed)?.[0] ?? 'no Attribute summary';
  const summary = /[\d,]+ nodes? in the community graph[^\n]*/.exec(printed)?.[0] ?? 'no Summary summary';
  return {
    seconds,
    cpuSeconds,
    calls,
    byStage,
    stageSeconds: stageSeconds(log),
    stageCpu,
    attribute,
    summary,
  };
}

const corpus = loadCorpus();
const paragraphs = Object.entries(corpus).map(([title, sentences], i) => ({
  name: paragraphFileName(i, title),
  title,
  sentences,
}));
const render = (title: string, sentences: string[]) => `${title}\n\n${sentences.join('')}\n`;

const work = mkdtempSync(join(tmpdir(), 'noderag-bench-update-'));
try {
  const root = join(work, 'sync');
  writeProject(
    root,
    paragraphs.map((p) => [p.name, render(p.title, p.sentences)]),
  );
  const full = await build(root);
  const before = new IndexData(root, DIM);
  const textsBefore = new Map([...(await before.texts())].map(([id, t]) => [id, t.context]));
  const unitsBefore = new Map([...(await before.units())].map(([id, u]) => [id, u.context]));
  // A copy of the built project gets the same changes and is synced under load (R), so the
  // timed sync of `root` runs alone.
  const loaded = join(work, 'loaded');
  cpSync(root, loaded, { recursive: true });
  writeFileSync(join(loaded, 'Node_config.yaml'), localConfigYaml(loaded));

  // Edit 10 %, delete 5 %, rename 5 % (disjoint, spread over the corpus).
  let edited = 0;
  const deleted: { name: string; question: string }[] = [];
  let renamed = 0;
  paragraphs.forEach((p, i) => {
    for (const dir of [root, loaded]) {
      const file = join(dir, 'input', p.name);
      if (i % 10 === 0) {
        const sentences = [...p.sentences];
        const k = sentences.length - 1;
        sentences[k] = sentences[k]!.replace(/^(\s*)/, '$1Notably, ');
        writeFileSync(file, render(p.title, sentences));
      } else if (i % 20 === 5) rmSync(file);
      else if (i % 20 === 15) renameSync(file, join(dir, 'input', `renamed-${p.name}`));
    }
    if (i % 10 === 0) edited++;
    else if (i % 20 === 5) deleted.push({ name: p.name, question: (p.sentences[0] ?? p.title).trim() });
    else if (i % 20 === 15) renamed++;
  });
  const sync = await build(root);

  // A server on the index answers questions during the whole sync (4 at a time) and until
  // it has loaded the new generation; R counts the requests that did not get a 200.
  const server = await serve(loaded);
  const questionPool = loadQuestions().map((q) => q.question);
  let requests = 0;
  let failures = 0;
  let syncing = true;
  let served = 1;
  const client = async (k: number) => {
    for (let i = k; syncing || served < 2; i += 4) {
      requests++;
      try {
        const r = await fetch(`${server.url}/retrieval`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ question: questionPool[i % questionPool.length] }),
        });
        await r.arrayBuffer();
        if (r.status !== 200) failures++;
        if (!syncing) {
          const h = (await (await fetch(`${server.url}/health`)).json()) as { generation: number };
          served = h.generation;
        }
      } catch {
        failures++;
      }
    }
  };
  const clients = [0, 1, 2, 3].map(client);
  await build(loaded);
  syncing = false;
  await Promise.all(clients);
  server.child.kill('SIGTERM');
  const reloadLines = server
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('Index generation'));

  // A clean build of the final folder.
  const clean = join(work, 'clean');
  const finalFiles = readdirSync(join(root, 'input'))
    .sort()
    .map((f): [string, string] => [f, readFileSync(join(root, 'input', f), 'utf8')]);
  writeProject(clean, finalFiles);
  const cleanRun = await build(clean);

  const mine = await comparableIndex(root, DIM);
  const theirs = await comparableIndex(clean, DIM);
  const differing = (Object.keys(mine) as (keyof typeof mine)[]).filter(
    (k) => JSON.stringify(mine[k]) !== JSON.stringify(theirs[k]),
  );
  const tablesEqual = differing.length === 0 ? 1 : 0;

  // Retrieval: nothing removed comes back.
  const after = new IndexData(root, DIM);
  const textsAfter = await after.texts();
  const unitsAfter = await after.units();
  const removedTexts = [...textsBefore].filter(([id]) => !textsAfter.has(id)).map(([, t]) => t);
  // A removed unit's sentence can still be part of a kept chunk (the edited files keep every
  // sentence but one, prefixed): only text that no remaining chunk holds counts.
  const remaining = [...textsAfter.values()].map((t) => t.context);
  const removedUnits = [...unitsBefore]
    .filter(([id]) => !unitsAfter.has(id))
    .map(([, t]) => t)
    .filter((t) => !remaining.some((c) => c.includes(t)));
  const questions = [...loadQuestions().map((q) => q.question), ...deleted.map((d) => d.question)];
  const search = new NodeSearch(NodeConfig.fromMainFolder(root, { env: {} }));
  let hits = 0;
  try {
    for (const q of questions) {
      const r = await search.search(q);
      const context = r.retrievalInfo;
      const t = removedTexts.find((x) => context.includes(x));
      const u = removedUnits.find((x) => context.includes(x));
      if (t !== undefined || u !== undefined) {
        hits++;
        console.log(
          `removed text in the context of ${JSON.stringify(q)}: ${JSON.stringify((t ?? u)!.slice(0, 80))}`,
        );
      }
    }
  } finally {
    search.close();
  }

  console.log(
    `HotpotQA-100: ${paragraphs.length} files; local provider, dim ${DIM}; edited ${edited}, deleted ${deleted.length}, renamed ${renamed}`,
  );
  console.log('\n| run | wall s | CPU s | model calls |');
  console.log('|---|---:|---:|---:|');
  const row = (name: string, r: typeof full) =>
    console.log(`| ${name} | ${r.seconds.toFixed(2)} | ${r.cpuSeconds.toFixed(2)} | ${r.calls} |`);
  row('full build', full);
  row('sync (edit 10 %, delete 5 %, rename 5 %)', sync);
  row('clean build of the final folder', cleanRun);
  console.log(
    `CPU seconds of the sync / of the clean build: ${(sync.cpuSeconds / cleanRun.cpuSeconds).toFixed(3)}; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log('\n| stage | model calls of the sync | of the clean build |');
  console.log('|---|---:|---:|');
  for (const [stage, n] of cleanRun.byStage)
    console.log(`| ${stage} | ${sync.byStage.get(stage) ?? 0} | ${n} |`);
  console.log(`Attribute stage of the sync: ${sync.attribute}`);
  console.log(`Attribute stage of the clean build: ${cleanRun.attribute}`);
  console.log(`Summary stage of the sync: ${sync.summary}`);
  console.log(`Summary stage of the clean build: ${cleanRun.summary}`);
  console.log(
    '\n| stage | seconds of the sync | of the clean build | CPU s of the sync | of the clean build |',
  );
  console.log('|---|---:|---:|---:|---:|');
  for (const [stage, cpu] of cleanRun.stageCpu) {
    const wall = (r: typeof full) => (stage === '(after)' ? '' : (r.stageSeconds.get(stage) ?? 0).toFixed(1));
    console.log(
      `| ${stage} | ${wall(sync)} | ${wall(cleanRun)} | ${(sync.stageCpu.get(stage) ?? 0).toFixed(2)} | ${cpu.toFixed(2)} |`,
    );
  }
  console.log('(CPU per stage: its commit included; the first stage includes INIT)');
  console.log(
    `\nremoved by the sync: ${removedTexts.length} chunks, ${removedUnits.length} semantic units; tables equal to the clean build: ${tablesEqual ? 'yes' : `no (${differing.join(', ')})`}`,
  );
  console.log(`retrieval contexts checked: ${questions.length}; holding removed text: ${hits}`);
  console.log(
    `server during the sync: ${requests} POST /retrieval, ${failures} failed; reload line: ${reloadLines.join(' / ') || 'none'}`,
  );
  const callsRatio = cleanRun.calls === 0 ? 0 : sync.calls / cleanRun.calls;
  console.log(
    `RESULT update calls_ratio=${callsRatio.toFixed(3)} seconds_ratio=${(sync.seconds / cleanRun.seconds).toFixed(3)} tables_equal=${tablesEqual} deleted_text_hits=${hits} reload_errors=${failures}`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
