/**
 * `npm run demo` and the README's library snippet, run the way a user runs them after
 * `npm install` (whose `prepare` step compiles dist/, which the package's `bin` and
 * `exports` point to), so that neither can rot. The snippet is read from README.md at test
 * time: what runs is exactly what the README shows.
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers/project.js';

const EXAMPLE = join(REPO_ROOT, 'examples', 'observatory');

/** The ```ts block of the README section "### Library use". */
function librarySnippet(): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.split('\n### Library use\n')[1];
  const code = section === undefined ? null : /```ts\n([\s\S]*?)```/.exec(section);
  if (!code) throw new Error('README.md has no ```ts block under "### Library use"');
  return code[1]!;
}

function output(r: SpawnSyncReturns<string>): string {
  return `exit ${r.status}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

let dir: string;
let project: string;
let snippetFile: string;

beforeAll(() => {
  const build = spawnSync('npm', ['run', 'build:ts'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`npm run build:ts failed\n${output(build)}`);
  dir = mkdtempSync(join(tmpdir(), 'noderag-readme-'));
  // The snippet opens './my-project': a copy of the example, so the repository stays clean.
  project = join(dir, 'my-project');
  cpSync(join(EXAMPLE, 'Node_config.yaml'), join(project, 'Node_config.yaml'));
  cpSync(join(EXAMPLE, 'input'), join(project, 'input'), { recursive: true });
  // Inside the repository, so `import … from 'noderag'` resolves to this package, as it
  // does for a user who installed it.
  snippetFile = join(REPO_ROOT, 'tests', 'artifacts', `readme-snippet-${process.pid}.mts`);
  mkdirSync(join(REPO_ROOT, 'tests', 'artifacts'), { recursive: true });
}, 300_000);

afterAll(() => {
  if (snippetFile) rmSync(snippetFile, { force: true });
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('README', () => {
  it('npm run demo builds the example with the local provider and answers in-process', () => {
    const r = spawnSync('npm', ['run', 'demo', '--', '--folder', project], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
      timeout: 240_000,
    });
    expect(r.status, output(r)).toBe(0);
    expect(r.stdout).toMatch(/Build finished in [\d.]+ s \(generation 1\)/);
    expect(r.stdout).toContain('Question: Who discovered Comet Pryce, and with which telescope?');
    expect(r.stdout).toMatch(/Retrieval context \(\d+ tokens\):\n\S/);
    expect(r.stdout).toMatch(/Answer \(\d+ tokens\):\n\S/);
  });

  it('the library snippet runs as written', async () => {
    // The snippet expects a built index (the demo above built it; a second build is a no-op).
    const built = await runCli(['build', '-f', project, '--yes']);
    expect(built.code, built.stderr).toBe(0);
    const snippet = librarySnippet();
    expect(snippet).toContain("NodeConfig.fromMainFolder('./my-project')");
    writeFileSync(snippetFile, snippet);
    // tsx by its path: the snippet runs in the temporary folder, where `--import tsx` would not resolve.
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    const r = spawnSync(process.execPath, ['--import', tsx, snippetFile], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status, output(r)).toBe(0);
    expect(r.stderr, output(r)).toBe('');
    // Every value the snippet prints exists: a renamed field would print `undefined`.
    expect(r.stdout).not.toContain('undefined');
    expect(r.stdout).toContain('Halden');
  });
});
