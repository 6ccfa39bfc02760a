/**
 * `npm run bench -- install [--skip-fresh]`: what installing costs (issue 17 item 4).
 *
 *  1. fresh clone: `git clone` of this repository's HEAD into a temp folder, then, as
 *     .ci/run does (CI=true, NODERAG_TEST_PYTHON = .ci/.venv's python with pyarrow + pandas,
 *     the virtualenv and Debian's chromium installed first when missing),
 *     `npm ci` (I: includes the release build of the addon) and `npm test` (T) there. Their
 *     output goes to bench/.data/install/ (npm-ci.log, npm-test.log); the cargo
 *     `Compiling <crate>` lines of both are counted per phase, so a crate compiled twice
 *     (a second profile or feature set) shows up in the table.
 *  2. prebuilt: the platform package and the main package packed with
 *     scripts/pack-prebuilt.mjs (from the clone, or from this checkout with `--skip-fresh`),
 *     then timed (P): `npm ci --offline` of them into an empty project with no cargo on PATH,
 *     `npx noderag build` of examples/observatory and one question through the installed
 *     library. The steps are tests/helpers/prebuilt.ts, which tests/e2e/install-prebuilt.test.ts
 *     asserts on.
 *
 * Goals: P ≤ 60 s, I + T ≤ 1200 s. The fresh part takes 15–25 minutes on a loaded 2-core
 * machine; `--skip-fresh` measures P only.
 *
 * Last line: RESULT install fresh_npm_ci_s=I fresh_npm_test_s=T prebuilt_install_s=P
 * (with --skip-fresh: RESULT install prebuilt_install_s=P).
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { output, PrebuiltSandbox } from '../tests/helpers/prebuilt.js';
import { REPO_ROOT } from './lib/hotpot.js';

const SKIP_FRESH = process.argv.includes('--skip-fresh');
const LOGS = join(REPO_ROOT, 'bench', '.data', 'install');

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

/** CPU seconds (user + system) of the reaped children so far: /proc/self/stat cutime + cstime. */
function childCpuSeconds(): number {
  try {
    // The command name (field 2) may hold spaces; the fields after its ')' are fixed.
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return Number.NaN;
  }
}

interface Timed<T> {
  value: T;
  wallS: number;
  cpuS: number;
}

function timed<T>(f: () => T): Timed<T> {
  const cpu0 = childCpuSeconds();
  const t0 = process.hrtime.bigint();
  const value = f();
  return { value, wallS: Number(process.hrtime.bigint() - t0) / 1e9, cpuS: childCpuSeconds() - cpu0 };
}

function must(r: SpawnSyncReturns<string>, what: string): SpawnSyncReturns<string> {
  if (r.status !== 0) {
    console.error(`bench install: ${what} failed\n${output(r)}`);
    process.exit(1);
  }
  return r;
}

/**
 * Runs a shell step in `cwd` with its output in `log`. A failed `fatal` step ends the bench;
 * another is timed all the same, reported, and makes the bench exit non-zero at the end.
 */
function step(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  log: string,
  fatal = true,
): Timed<string> {
  console.log(`  $ ${command}   (output: ${log})`);
  const t = timed(() =>
    spawnSync('sh', ['-c', `${command} > "${log}" 2>&1 < /dev/null`], { cwd, env, encoding: 'utf8' }),
  );
  if (t.value.status !== 0) {
    const tail = readFileSync(log, 'utf8').split('\n').slice(-40).join('\n');
    console.error(
      `bench install: \`${command}\` failed (exit ${t.value.status}); last lines of ${log}:\n${tail}`,
    );
    if (fatal) process.exit(1);
    failures.push(`\`${command}\` failed (exit ${t.value.status})`);
  }
  return { ...t, value: readFileSync(log, 'utf8') };
}

/** How often cargo printed `Compiling <crate> v<version>` in a log, per crate. */
function compiled(log: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of log.matchAll(/^\s*Compiling (\S+) v(\S+)/gm)) {
    const key = `${m[1]} ${m[2]}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

const rows: [string, string][] = [];
/** Steps that failed without ending the bench (the fresh clone's `npm test`). */
const failures: string[] = [];
const row = (what: string, value: string) => {
  rows.push([what, value]);
  console.log(`  ${what.padEnd(60)} ${value}`);
};
const s = (x: number) => x.toFixed(1);

/**
 * The Python of the parquet compatibility test, as .ci/run provides it: `.ci/.venv` with the
 * current pyarrow and pandas, created here (before any timing) when missing. Not another
 * virtualenv: bench/.venv-noderag pins pyarrow 19, which rejects a null FixedSizeList entry
 * that pyarrow 26 reads.
 */
function testPython(): string | undefined {
  const venv = join(REPO_ROOT, '.ci', '.venv');
  const python = join(venv, 'bin', 'python');
  const ready = () =>
    existsSync(python) &&
    spawnSync(python, ['-c', 'import pyarrow, pandas'], { stdio: 'ignore' }).status === 0;
  if (!ready()) {
    console.log(`  creating ${venv} with pyarrow and pandas (as .ci/run does)`);
    if (!existsSync(python)) spawnSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
    spawnSync(
      join(venv, 'bin', 'pip'),
      ['install', '--quiet', '--disable-pip-version-check', 'pyarrow', 'pandas'],
      { stdio: 'inherit' },
    );
  }
  return ready() ? python : undefined;
}

/**
 * Debian's Chromium for the browser tests, installed (before any timing) when missing, as
 * .ci/run does; without it those tests fail and so does `npm test`.
 */
function ensureChromium(): void {
  if (existsSync('/usr/bin/chromium')) return;
  console.log("  installing Debian's chromium for the browser tests (as .ci/run does)");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium'], {
    stdio: 'ignore',
    env,
  });
  if (!existsSync('/usr/bin/chromium'))
    console.log('  (chromium could not be installed: the browser tests of npm test will fail)');
}

function fresh(): { ciS: number; testS: number; clone: string } {
  const tmp = mkdtempSync(join(tmpdir(), 'noderag-fresh-'));
  const clone = join(tmp, 'noderag');
  const head = must(
    spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }),
    'git rev-parse',
  ).stdout.trim();
  must(spawnSync('git', ['clone', '--quiet', REPO_ROOT, clone], { encoding: 'utf8' }), 'git clone');
  console.log(`fresh clone of ${head} in ${clone}`);
  // A new user's shell: none of the variables `npm run bench` set (npm_*, INIT_CWD), and the
  // clone builds in its own target/, never in this checkout's.
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('npm_') && k !== 'INIT_CWD' && k !== 'CARGO_TARGET_DIR',
    ),
  );
  env.CI = 'true';
  ensureChromium();
  const python = testPython();
  if (python) env.NODERAG_TEST_PYTHON = python;
  else console.log('  (.ci/.venv could not be created: the pandas compatibility test skips)');
  mkdirSync(LOGS, { recursive: true });
  console.log(`  load average before: ${load()}`);
  // --foreground-scripts: the install script's cargo output in the log (npm hides it otherwise).
  const ci = step('npm ci --no-audit --no-fund --foreground-scripts', clone, env, join(LOGS, 'npm-ci.log'));
  console.log(`  load average after npm ci: ${load()}`);
  const test = step('npm test', clone, env, join(LOGS, 'npm-test.log'), false);
  console.log(`  load average after npm test: ${load()}`);
  row('fresh clone: npm ci (wall)', `${s(ci.wallS)} s (CPU ${s(ci.cpuS)} s)`);
  row(
    'fresh clone: npm test (wall)',
    `${s(test.wallS)} s (CPU ${s(test.cpuS)} s)${failures.length ? ', FAILED: see npm-test.log' : ''}`,
  );
  const inCi = compiled(ci.value);
  const inTest = compiled(test.value);
  const list = (keys: string[]) => (keys.length ? `${keys.length}: ${keys.join(', ')}` : '0');
  row('crates compiled by npm ci / by npm test', `${inCi.size} / ${inTest.size}`);
  row(
    'compiled by npm test again (npm ci had built them)',
    list([...inTest.keys()].filter((k) => inCi.has(k))),
  );
  // Within one step a crate may build twice legitimately (for the host: build scripts, proc macros).
  const twice = [...inCi, ...inTest].filter(([, c]) => c > 1).map(([k]) => k);
  row('compiled more than once within npm ci or npm test', list([...new Set(twice)]));
  return { ciS: ci.wallS, testS: test.wallS, clone: tmp };
}

function prebuilt(root: string): number {
  const sandbox = PrebuiltSandbox.create(root);
  try {
    if (sandbox.missing !== null) {
      console.error(`bench install: ${sandbox.missing}`);
      process.exit(1);
    }
    const packed = timed(() => sandbox.pack());
    row('pack: tsc + scripts/pack-prebuilt.mjs (not counted in P)', `${s(packed.wallS)} s`);
    const project = sandbox.consumer('consumer');
    const install = timed(() => must(sandbox.install(project), 'npm ci --offline of the packed packages'));
    if (!install.value.stdout.includes('using the prebuilt native addon'))
      throw new Error(`the install did not take the prebuilt addon\n${output(install.value)}`);
    const build = timed(() => must(sandbox.buildExample(project), 'npx noderag build'));
    const ask = timed(() => must(sandbox.askExample(project), 'the question'));
    const answer = JSON.parse(ask.value.stdout.trim().split('\n').at(-1)!) as { response: string };
    if (!answer.response.includes('Comet Pryce'))
      throw new Error(`unexpected answer from the installed package: ${answer.response}`);
    row('prebuilt: npm ci --offline, no cargo on PATH', `${s(install.wallS)} s (CPU ${s(install.cpuS)} s)`);
    row('prebuilt: npx noderag build (example)', `${s(build.wallS)} s (CPU ${s(build.cpuS)} s)`);
    row('prebuilt: one question (library, fresh process)', `${s(ask.wallS)} s (CPU ${s(ask.cpuS)} s)`);
    const total = install.wallS + build.wallS + ask.wallS;
    row('prebuilt_install_s (P = install + build + question)', `${s(total)} s (goal ≤ 60)`);
    return total;
  } finally {
    sandbox.remove();
  }
}

console.log(`install benchmark (node ${process.version}; load average ${load()})`);
let result: string;
if (SKIP_FRESH) {
  const p = prebuilt(REPO_ROOT);
  result = `RESULT install prebuilt_install_s=${s(p)}`;
} else {
  const f = fresh();
  try {
    const p = prebuilt(join(f.clone, 'noderag'));
    row('I + T', `${s(f.ciS + f.testS)} s (goal ≤ 1200)`);
    result = `RESULT install fresh_npm_ci_s=${s(f.ciS)} fresh_npm_test_s=${s(f.testS)} prebuilt_install_s=${s(p)}`;
  } finally {
    rmSync(f.clone, { recursive: true, force: true });
  }
}
console.log(`  load average at the end: ${load()}`);
console.log('');
console.log('| measure | value |');
console.log('|---|---|');
for (const [a, b] of rows) console.log(`| ${a} | ${b} |`);
console.log('');
console.log(result);
if (failures.length) {
  console.error(`bench install: ${failures.join('; ')} (its time is in the RESULT line all the same)`);
  process.exit(1);
}
