/**
 * `noderag eval` end to end: the bundled observatory example built with the offline `local`
 * provider into a temporary folder, then evaluated by the real CLI on questions written
 * here — the table, `--json`, `--set` overrides, and the refusals (malformed line, bad
 * setting, index not built).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvalReportJson } from '../../ts/eval/report.js';
import { createProject, type Project, REPO_ROOT, runCli } from '../helpers/project.js';
import { freePort, serve, stop } from '../helpers/search-server.js';

const EXAMPLE = join(REPO_ROOT, 'examples', 'observatory');

const QUESTIONS = [
  // In the corpus: whichever retriever finds 01-founding.md or 02-margaret-okafor.md has it.
  {
    question: 'Who founded Halden Observatory?',
    answers: ['Margaret Okafor'],
    supporting: ['01-founding.md', '02-margaret-okafor.md'],
  },
  {
    question: 'In which year was the Pryce Reflector installed?',
    answers: ['1921'],
    supporting: ['04-pryce-reflector.md'],
  },
  // A verbatim supporting text instead of a file.
  {
    question: 'What is the old Eastmere railway line called today?',
    answers: ['Observatory Way'],
    supporting: [
      'Eastmere lost its railway in 1963, but the old line is now the Observatory Way walking path.',
    ],
  },
  // Not in the corpus: no retriever can recall it.
  { question: 'What is the name of the observatory cat?', answers: ['Professor Whiskers'] },
];

const jsonl = (rows: readonly object[]) => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;

let project: Project;
let questionsFile: string;

beforeAll(async () => {
  const files: Record<string, string> = {};
  for (const f of readdirSync(join(EXAMPLE, 'input')))
    files[f] = readFileSync(join(EXAMPLE, 'input', f), 'utf8');
  project = await createProject({ files, config: { dim: 256 } });
  const r = await project.build();
  expect(r.code, r.stderr).toBe(0);
  questionsFile = project.path('questions.jsonl');
  await writeFile(questionsFile, jsonl(QUESTIONS));
}, 120_000);

afterAll(async () => {
  await project?.remove();
});

describe('noderag eval', () => {
  it('prints answer recall, support recall, tokens and the naive row per config', async () => {
    const r = await runCli(['eval', '-f', project.root, '--questions', questionsFile]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`4 questions on ${project.root}`);
    expect(r.stdout).toContain('embeddings: local/feature-hash (dim 256, l2)');
    expect(r.stdout).toMatch(/^retriever\s+answer recall\s+support recall\s+avg tokens$/m);
    // 3 of 4 answers are in the corpus and found; the 4th is not in it.
    expect(r.stdout).toMatch(/^noderag \(Node_config\.yaml\)\s+0\.75\s+[01]\.\d\d\s+[\d,]+$/m);
    expect(r.stdout).toMatch(/^ {2}naive top-k, same tokens( \*)?\s+0\.75\s+[01]\.\d\d\s+[\d,]+$/m);
  });

  it('--json: one parseable object with real numbers, and --set adds a config', async () => {
    const r = await runCli([
      'eval',
      '-f',
      project.root,
      '--questions',
      questionsFile,
      '--json',
      '--set',
      'HNSW_results=2',
      '--set',
      'Rnode=0',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as EvalReportJson;
    expect(report.questions).toBe(4);
    expect(report.questions_with_supporting).toBe(3);
    expect(report.configs.map((c) => c.name)).toEqual(['Node_config.yaml', 'HNSW_results=2, Rnode=0']);
    expect(report.configs[1]!.overrides).toEqual({ HNSW_results: 2, Rnode: 0 });
    for (const c of report.configs) {
      for (const s of [c.noderag, c.naive_same_tokens]) {
        expect(s.answer_recall).toBeGreaterThanOrEqual(0);
        expect(s.answer_recall).toBeLessThanOrEqual(0.75);
        expect(s.support_recall).toBeGreaterThan(0);
        expect(s.support_recall).toBeLessThanOrEqual(1);
        expect(s.avg_tokens).toBeGreaterThan(0);
      }
      expect(c.naive_same_tokens.budget).toBe(Math.round(c.noderag.avg_tokens));
      expect(c.naive_same_tokens.avg_tokens).toBeLessThanOrEqual(c.naive_same_tokens.budget);
      expect(c.answer_recall_margin).toBeCloseTo(
        c.noderag.answer_recall - c.naive_same_tokens.answer_recall,
        4,
      );
    }
    // The default config recalls the founder; nobody recalls the cat.
    const [founder, , , cat] = report.per_question;
    expect(founder!.results[0]!.noderag).toMatchObject({ answer: true, supporting: 2 });
    expect(founder!.results[0]!.noderag.support).toBeGreaterThan(0);
    expect(cat!.results.every((x) => !x.noderag.answer && !x.naive.answer)).toBe(true);
    expect(cat!.results[0]!.noderag.supporting).toBe(0);
    // Fewer vector hits and no relationships: a smaller context.
    expect(report.configs[1]!.noderag.avg_tokens).toBeLessThan(report.configs[0]!.noderag.avg_tokens);
  });

  it('warns of a gold answer that can never be found (only articles and punctuation)', async () => {
    const file = project.path('degenerate.jsonl');
    await writeFile(file, jsonl([QUESTIONS[0]!, { question: 'Which band?', answers: ['The', 'The The'] }]));
    const r = await runCli(['eval', '-f', project.root, '--questions', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `Warning: ${file}, line 2: answer "The" is only articles and punctuation once normalised (as HotpotQA/SQuAD scoring does), so it is never found; give it in other words`,
    );
    expect(r.stderr).toContain('answer "The The" is only articles');
    expect(r.stderr).not.toContain('line 1:');
    // --json carries them in its warnings too.
    const json = await runCli(['eval', '-f', project.root, '--questions', file, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const warnings = (JSON.parse(json.stdout) as EvalReportJson).warnings;
    expect(warnings).toContain(
      'line 2: answer "The" is only articles and punctuation once normalised (as HotpotQA/SQuAD scoring does), so it is never found; give it in other words',
    );
  });

  it('a questions file that is not UTF-8 is refused naming the file (a Latin-1 answer could never match)', async () => {
    const latin1 = project.path('latin1.jsonl');
    await writeFile(latin1, Buffer.from('{"question": "Where?", "answers": ["Malm\u00f6"]}\n', 'latin1'));
    const utf16 = project.path('utf16.jsonl');
    await writeFile(utf16, Buffer.from(`\ufeff${jsonl(QUESTIONS.slice(0, 1))}`, 'utf16le'));
    for (const [file, why] of [
      [latin1, 'is not UTF-8 text (Latin-1 or another encoding?); save it as UTF-8'],
      [utf16, 'is UTF-16 text; save it as UTF-8'],
    ] as const) {
      const r = await runCli(['eval', '-f', project.root, '--questions', file]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe(`--questions: ${file} ${why}`);
    }
  });

  it('a malformed line: exit 2, naming the file, the line and what was expected', async () => {
    const bad = project.path('bad.jsonl');
    await writeFile(
      bad,
      `${jsonl(QUESTIONS.slice(0, 2))}\n{"question": "Who built the West Dome?", "answers": "Robert Hale"}\n`,
    );
    const r = await runCli(['eval', '-f', project.root, '--questions', bad]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(
      `${bad}:4: "answers": expected a non-empty array of non-empty strings, got a string ("Robert Hale")`,
    );

    await writeFile(bad, `${jsonl(QUESTIONS.slice(0, 1))}{"question": "unfinished",\n`);
    const r2 = await runCli(['eval', '-f', project.root, '--questions', bad]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(
      new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: not valid JSON \\(`),
    );
    expect(r2.stderr).toContain(
      'expected one object per line: {"question": string, "answers": [string, ...]',
    );

    // A missing file, a folder, no value: said in words (they were bare ENOENT / EISDIR).
    const cases: [string, string][] = [
      [project.path('none.jsonl'), `--questions: cannot read ${project.path('none.jsonl')}: no such file`],
      [
        project.root,
        `--questions: cannot read ${project.root}: it is a folder; give the JSONL file of questions`,
      ],
      ['', '--questions needs a value: the JSONL file of questions'],
    ];
    for (const [file, message] of cases) {
      const r3 = await runCli(['eval', '-f', project.root, `--questions=${file}`]);
      expect(r3.code, file).toBe(2);
      expect(r3.stderr.trim()).toBe(message);
    }
  });

  it('a bad --set names the key; a missing index gives the not-built message', async () => {
    const value = await runCli([
      'eval',
      '-f',
      project.root,
      '--questions',
      questionsFile,
      '--set',
      'Rnode=-1',
    ]);
    expect(value.code).toBe(2);
    expect(value.stderr.trim()).toBe('--set Rnode: expected an integer from 0 to 1000, got -1');
    const key = await runCli([
      'eval',
      '-f',
      project.root,
      '--questions',
      questionsFile,
      '--set',
      'chunk_size=64',
    ]);
    expect(key.code).toBe(2);
    expect(key.stderr).toContain('--set chunk_size: not a search-time key');
    // A --set config's own warnings are printed, named after it.
    const restart = await runCli([
      'eval',
      '-f',
      project.root,
      '--questions',
      questionsFile,
      '--set',
      'ppr_mode=restart',
    ]);
    expect(restart.code, restart.stderr).toBe(0);
    expect(restart.stderr).toContain(
      'Warning (ppr_mode=restart): config.ppr_max_iter: 2 steps of ppr_mode "restart" will not converge; use 20 or more',
    );

    const empty = await createProject({ config: { dim: 256 } });
    try {
      const r = await runCli(['eval', '-f', empty.root, '--questions', questionsFile]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(
        `No index in ${empty.root}: build it first with \`noderag build -f ${empty.root}\`.`,
      );
    } finally {
      await empty.remove();
    }
  });

  it('after a build that stopped before its Embedding stage: one line saying to finish it', async () => {
    const names = readdirSync(join(EXAMPLE, 'input')).slice(0, 3);
    const files = Object.fromEntries(names.map((f) => [f, readFileSync(join(EXAMPLE, 'input', f), 'utf8')]));
    const p = await createProject({ files: { [names[0]!]: files[names[0]!]! }, config: { dim: 256 } });
    try {
      expect((await p.build()).code).toBe(0);
      for (const f of names.slice(1)) await p.writeInput(f, files[f]!);
      const killed = await p.buildWithHooks({ crashAt: 'Graph pipeline' });
      expect(killed.code).not.toBe(0);
      const r = await runCli(['eval', '-f', p.root, '--questions', questionsFile]);
      expect(r.code).toBe(1);
      const state = (await p.readJson<{ current_state: string }>('info/state.json')).current_state;
      expect(state).toMatch(/^(Graph|Attribute) pipeline$/);
      expect(r.stderr.trim()).toBe(
        `The last build of ${p.root} has not finished (it stopped at ${state}); finish it with \`noderag build -f ${p.root}\` before evaluating.`,
      );
      // Finished, it evaluates.
      expect((await p.build()).code).toBe(0);
      expect((await runCli(['eval', '-f', p.root, '--questions', questionsFile])).code).toBe(0);
    } finally {
      await p.remove();
    }
  }, 120_000);

  it('an embedding changed since the build (same dim) is a warning of eval and search, in --json too', async () => {
    // The shared project's config is restored afterwards; a document_prefix changes the vectors.
    await project.writeConfig({ config: { dim: 256 }, embedding: { document_prefix: 'passage: ' } });
    try {
      const said = `holds vectors made with local/feature-hash (256), but the config asks for embedding_config.document_prefix "passage: ": questions are embedded with another model than the stored vectors`;
      const r = await runCli(['eval', '-f', project.root, '--questions', questionsFile, '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(said);
      expect((JSON.parse(r.stdout) as EvalReportJson).warnings.join('\n')).toContain(said);
      const served = await serve(project.root, ['--port', String(await freePort())]);
      expect(served.output().stderr).toContain(said);
      expect(await stop(served)).toBe(0);
    } finally {
      await project.writeConfig();
    }
  }, 60_000);

  it('a config.dim changed since the build is said as such by eval, vis and search, not as damage (exit 2, as build)', async () => {
    const names = readdirSync(join(EXAMPLE, 'input')).slice(0, 2);
    const files = Object.fromEntries(names.map((f) => [f, readFileSync(join(EXAMPLE, 'input', f), 'utf8')]));
    const p = await createProject({ files, config: { dim: 256 } });
    try {
      expect((await p.build()).code).toBe(0);
      await p.writeConfig({ config: { dim: 128 } });
      const said = `the index in ${p.root} was built with config.dim 256, but config.dim is now 128: set it back to 256, or rebuild from scratch with \`noderag build -f ${p.root} --rebuild\``;
      const evalRun = await runCli(['eval', '-f', p.root, '--questions', questionsFile]);
      expect(evalRun.code).toBe(2);
      expect(evalRun.stderr).toContain(said);
      const vis = await runCli(['vis', '-f', p.root]);
      expect(vis.code).toBe(2);
      expect(vis.stderr).toContain(said);
      const search = await runCli(['search', '-f', p.root, '--port', '1']);
      expect(search.code).toBe(2);
      expect(search.stderr).toContain(said);
      const build = await p.build();
      expect(build.code).toBe(2);
    } finally {
      await p.remove();
    }
  }, 120_000);
});
