/**
 * Install without Rust (issue 17 item 4): the published shape of the package, tried as a user
 * on a machine without cargo would. The platform package (noderag-linux-x64-gnu etc., holding
 * the release addon `npm ci` built) and the main package (compiled TypeScript, the platform
 * packages in its optionalDependencies) are packed with `npm pack`
 * (scripts/pack-prebuilt.mjs), installed into an empty project with no cargo on PATH and no
 * network (`npm ci --offline` from the npm cache that the repository's `npm ci` filled), and
 * the installed CLI builds the example and the installed library answers a question.
 *
 * The empty project's package-lock.json is written here from the repository's: it pins the
 * dependencies to the tarballs already in the npm cache, so that npm needs no registry
 * metadata. When the cache lacks one of them (a CI that ran `npm ci` with another cache),
 * the tests skip and say which tarball is missing: they must not download it.
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/project.js';

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dev?: boolean;
  optional?: boolean;
  link?: boolean;
  [key: string]: unknown;
}

const MAIN = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  license: string;
};

function output(r: SpawnSyncReturns<string>): string {
  return `exit ${r.status} ${r.error ?? ''}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

/** npm's own entry scripts, run with this node: the sandboxed PATH holds node and sh only. */
function npmCli(): { npm: string; npx: string } {
  const candidates = [
    process.env.npm_execpath,
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
  ];
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const npm = join(dir, 'npm');
    if (existsSync(npm)) candidates.push(join(dirname(realpathSync(npm)), 'npm-cli.js'));
  }
  for (const c of candidates) {
    if (c && basename(c) === 'npm-cli.js' && existsSync(c))
      return { npm: c, npx: join(dirname(c), 'npx-cli.js') };
  }
  throw new Error(`npm-cli.js not found (tried ${candidates.filter(Boolean).join(', ')})`);
}

/** Where cacache keeps the content of an sha512 integrity. */
function cachedContent(cache: string, integrity: string): string | null {
  const sha512 = integrity.split(/\s+/).find((h) => h.startsWith('sha512-'));
  if (!sha512) return null;
  const hex = Buffer.from(sha512.slice('sha512-'.length), 'base64').toString('hex');
  return join(cache, '_cacache', 'content-v2', 'sha512', hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}

function integrityOf(file: string): string {
  return `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;
}

let dir: string;
let env: NodeJS.ProcessEnv;
let cli: { npm: string; npx: string };
let tarballs: { main: string; platform: string };
let platformName: string;
/** linux-x64-gnu etc. */
let platformSuffix: string;
/** The runtime dependencies' lock entries, as the repository's package-lock.json has them. */
let dependencyEntries: Record<string, LockEntry>;
let skipReason: string | null = null;

function npm(args: string[], cwd: string, timeout = 240_000): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [cli.npm, ...args], { cwd, env, encoding: 'utf8', timeout });
}

/** An empty project that depends on the packed main package only, with its lock file. */
function consumer(name: string): string {
  const project = join(dir, name);
  mkdirSync(project);
  for (const t of [tarballs.main, tarballs.platform]) cpSync(t, join(project, basename(t)));
  const repoLock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const root = repoLock.packages['']!;
  const dependencies = { [MAIN.name]: `file:${basename(tarballs.main)}` };
  const packages: Record<string, LockEntry> = {
    '': { name: 'consumer', dependencies },
    [`node_modules/${MAIN.name}`]: {
      version: MAIN.version,
      resolved: `file:${basename(tarballs.main)}`,
      integrity: integrityOf(tarballs.main),
      hasInstallScript: true,
      license: MAIN.license,
      dependencies: root.dependencies,
      optionalDependencies: { [platformName]: MAIN.version },
      bin: root.bin,
      engines: root.engines,
    },
    // What npm records for a matching optional platform package.
    [`node_modules/${platformName}`]: {
      ...(JSON.parse(
        readFileSync(join(REPO_ROOT, 'npm', platformSuffix, 'package.json'), 'utf8'),
      ) as LockEntry),
      resolved: `file:${basename(tarballs.platform)}`,
      integrity: integrityOf(tarballs.platform),
      optional: true,
    },
    ...dependencyEntries,
  };
  for (const key of ['name', 'main', 'files', 'description'])
    delete (packages[`node_modules/${platformName}`] as Record<string, unknown>)[key];
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, dependencies }, null, 2),
  );
  writeFileSync(
    join(project, 'package-lock.json'),
    JSON.stringify({ name: 'consumer', lockfileVersion: 3, requires: true, packages }, null, 2),
  );
  return project;
}

beforeAll(() => {
  cli = npmCli();
  dir = mkdtempSync(join(tmpdir(), 'noderag-prebuilt-'));

  // A PATH with node and sh only: no cargo, no rustc, whatever the machine has in /usr/bin.
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, 'node'));
  symlinkSync('/bin/sh', join(bin, 'sh'));
  const cacheRun = spawnSync(process.execPath, [cli.npm, 'config', 'get', 'cache'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  if (cacheRun.status !== 0) throw new Error(`npm config get cache failed\n${output(cacheRun)}`);
  const cache = cacheRun.stdout.trim();
  env = {
    HOME: process.env.HOME,
    TMPDIR: process.env.TMPDIR,
    PATH: bin,
    CI: 'true',
    NO_COLOR: '1',
    npm_config_cache: cache,
    npm_config_update_notifier: 'false',
  };

  // Every runtime dependency's tarball must already be in the cache (no network here).
  const repoLock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  dependencyEntries = {};
  for (const [key, entry] of Object.entries(repoLock.packages)) {
    if (key === '' || entry.dev || entry.link || key === `node_modules/${MAIN.name}`) continue;
    dependencyEntries[key] = entry;
    if (entry.optional || skipReason !== null) continue;
    const content = entry.integrity ? cachedContent(cache, entry.integrity) : null;
    if (content === null || !existsSync(content))
      skipReason = `the npm cache ${cache} does not hold ${key}@${entry.version} (${entry.integrity ?? 'no sha512 integrity'}), which the repository's \`npm ci\` normally puts there; this test installs offline only`;
  }
  if (skipReason !== null) {
    console.warn(`tests/e2e/install-prebuilt.test.ts skipped: ${skipReason}`);
    return;
  }

  // The compiled TypeScript, into a folder of this test (`npm run build:ts` without touching
  // dist/, which other tests compile too), then both packages.
  const dist = join(dir, 'dist');
  const tsc = spawnSync(
    process.execPath,
    [
      join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      'tsconfig.build.json',
      '--outDir',
      dist,
    ],
    { cwd: REPO_ROOT, encoding: 'utf8', timeout: 240_000 },
  );
  if (tsc.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed\n${output(tsc)}`);
  cpSync(join(REPO_ROOT, 'ts', 'ui', 'public'), join(dist, 'ui', 'public'), { recursive: true });
  const packed = spawnSync(
    process.execPath,
    [join(REPO_ROOT, 'scripts', 'pack-prebuilt.mjs'), '--out', join(dir, 'packed'), '--dist', dist],
    { cwd: REPO_ROOT, encoding: 'utf8', timeout: 240_000 },
  );
  if (packed.status !== 0) throw new Error(`scripts/pack-prebuilt.mjs failed\n${output(packed)}`);
  tarballs = JSON.parse(packed.stdout.trim().split('\n').at(-1)!) as typeof tarballs;
  platformName = basename(tarballs.platform).replace(`-${MAIN.version}.tgz`, '');
  platformSuffix = platformName.slice(MAIN.name.length + 1);
}, 600_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('installing the packed packages without Rust', () => {
  it('the sandboxed PATH has no cargo', (ctx) => {
    if (skipReason !== null) ctx.skip(skipReason);
    const r = spawnSync('cargo', ['--version'], { env, encoding: 'utf8' });
    expect(r.error?.message ?? `cargo ran: ${r.stdout}`).toMatch(/ENOENT/);
  });

  it('installs the prebuilt addon without compiling, then builds the example and answers', (ctx) => {
    if (skipReason !== null) ctx.skip(skipReason);
    const project = consumer('with-prebuilt');
    const install = npm(['ci', '--offline', '--no-audit', '--no-fund', '--foreground-scripts'], project);
    expect(install.status, output(install)).toBe(0);
    expect(install.stdout).toContain(
      `noderag: using the prebuilt native addon from ${platformName}@${MAIN.version} (nothing to compile).`,
    );
    const installed = join(project, 'node_modules', MAIN.name);
    // Nothing was compiled: no addon in bindings/, no cargo target folder.
    expect(readdirSync(join(installed, 'bindings')).filter((f) => f.endsWith('.node'))).toEqual([]);
    expect(existsSync(join(installed, 'target'))).toBe(false);
    expect(existsSync(join(project, 'node_modules', platformName, `noderag.${platformSuffix}.node`))).toBe(
      true,
    );

    const example = join(project, 'observatory');
    cpSync(join(REPO_ROOT, 'examples', 'observatory', 'Node_config.yaml'), join(example, 'Node_config.yaml'));
    cpSync(join(REPO_ROOT, 'examples', 'observatory', 'input'), join(example, 'input'), { recursive: true });
    const build = spawnSync(
      process.execPath,
      [cli.npx, '--offline', 'noderag', 'build', '-f', example, '--yes'],
      { cwd: project, env, encoding: 'utf8', timeout: 240_000 },
    );
    expect(build.status, output(build)).toBe(0);
    expect(build.stdout).toMatch(/Build finished in [\d.]+ s \(generation 1\)/);

    const query = join(project, 'query.mjs');
    writeFileSync(
      query,
      [
        "import { NodeConfig, NodeSearch } from 'noderag';",
        "const search = new NodeSearch(NodeConfig.fromMainFolder('./observatory'));",
        "const r = await search.answer('Who discovered Comet Pryce, and with which telescope?');",
        'console.log(JSON.stringify({ response: r.response, responseTokens: r.responseTokens, retrieval: r.retrievalInfo }));',
        'search.close();',
      ].join('\n'),
    );
    const asked = spawnSync(process.execPath, [query], {
      cwd: project,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(asked.status, output(asked)).toBe(0);
    const answer = JSON.parse(asked.stdout.trim().split('\n').at(-1)!) as {
      response: string;
      responseTokens: number;
      retrieval: string;
    };
    expect(answer.retrieval).toContain('discovered on 14 March 1925 by Edith Pryce');
    expect(answer.retrieval).toContain('Pryce Reflector');
    expect(answer.response).toContain('Comet Pryce');
    expect(answer.responseTokens).toBeGreaterThan(0);
  }, 600_000);

  it('with no matching prebuilt addon and no cargo, the install fails naming both', (ctx) => {
    if (skipReason !== null) ctx.skip(skipReason);
    const project = consumer('without-prebuilt');
    // --omit=optional: what npm does on a platform no platform package matches.
    const install = npm(
      ['ci', '--offline', '--omit=optional', '--no-audit', '--no-fund', '--foreground-scripts'],
      project,
    );
    expect(install.status, output(install)).not.toBe(0);
    expect(install.stderr).toContain(
      `noderag: no prebuilt native addon matches this platform (${platformSuffix}: the optional package ${platformName} is not installed), and building one from source needs Rust's cargo on PATH, which was not found.`,
    );
    expect(existsSync(join(project, 'node_modules', platformName))).toBe(false);
  }, 300_000);
});
