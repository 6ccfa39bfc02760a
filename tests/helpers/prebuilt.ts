/**
 * The published shape of the package, installed as a user without Rust would: shared by
 * tests/e2e/install-prebuilt.test.ts (which asserts on each step) and bench/install.ts (which
 * times them). `PrebuiltSandbox.create(root)` makes a temp folder with a PATH of node and sh
 * only (no cargo, no rustc); `pack()` packs the platform package (the release addon) and the
 * main package with scripts/pack-prebuilt.mjs; `consumer()` writes an empty project that
 * depends on the packed main package, with a lock file derived from the repository's that pins
 * every dependency to the tarball the repository's `npm ci` put in the npm cache, so that
 * `npm ci --offline` there needs no registry; `buildExample()` / `askExample()` run the
 * installed CLI and library on examples/observatory.
 *
 * `root` is the repository whose files are packed (this one for the test; the bench may pass
 * a fresh clone after its `npm ci`).
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';
import { REPO_ROOT } from './project.js';

export interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dev?: boolean;
  optional?: boolean;
  link?: boolean;
  [key: string]: unknown;
}

interface MainManifest {
  name: string;
  version: string;
  license: string;
}

export interface Packed {
  main: string;
  platform: string;
  /** noderag-linux-x64-gnu etc. */
  platformName: string;
  /** linux-x64-gnu etc. */
  platformSuffix: string;
}

/** The question `askExample` asks; the example's input answers it. */
export const EXAMPLE_QUESTION = 'Who discovered Comet Pryce, and with which telescope?';

export function output(r: SpawnSyncReturns<string>): string {
  return `exit ${r.status} ${r.error ?? ''}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

/** npm's own entry scripts, run with this node: the sandboxed PATH holds node and sh only. */
export function npmCli(): { npm: string; npx: string } {
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

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

export class PrebuiltSandbox {
  readonly cli = npmCli();
  /** Environment of every step: PATH = node and sh only, the repository's npm cache, CI=true. */
  readonly env: NodeJS.ProcessEnv;
  readonly main: MainManifest;
  /** The runtime dependencies' lock entries, as the repository's package-lock.json has them. */
  readonly dependencyEntries: Record<string, LockEntry> = {};
  /** Why an offline install cannot work here (a dependency's tarball is not in the npm cache), or null. */
  readonly missing: string | null = null;
  packed: Packed | undefined;

  private constructor(
    readonly root: string,
    readonly dir: string,
  ) {
    this.main = readJson<MainManifest>(join(root, 'package.json'));
    // A PATH with node and sh only: no cargo, no rustc, whatever the machine has in /usr/bin.
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, 'node'));
    symlinkSync('/bin/sh', join(bin, 'sh'));
    const cacheRun = spawnSync(process.execPath, [this.cli.npm, 'config', 'get', 'cache'], {
      cwd: root,
      encoding: 'utf8',
    });
    if (cacheRun.status !== 0) throw new Error(`npm config get cache failed\n${output(cacheRun)}`);
    const cache = cacheRun.stdout.trim();
    this.env = {
      HOME: process.env.HOME,
      TMPDIR: process.env.TMPDIR,
      PATH: bin,
      CI: 'true',
      NO_COLOR: '1',
      npm_config_cache: cache,
      npm_config_update_notifier: 'false',
    };
    // Every runtime dependency's tarball must already be in the cache (no network here).
    const repoLock = readJson<{ packages: Record<string, LockEntry> }>(join(root, 'package-lock.json'));
    for (const [key, entry] of Object.entries(repoLock.packages)) {
      if (key === '' || entry.dev || entry.link || key === `node_modules/${this.main.name}`) continue;
      this.dependencyEntries[key] = entry;
      if (entry.optional || this.missing !== null) continue;
      const content = entry.integrity ? cachedContent(cache, entry.integrity) : null;
      if (content === null || !existsSync(content))
        this.missing = `the npm cache ${cache} does not hold ${key}@${entry.version} (${entry.integrity ?? 'no sha512 integrity'}), which the repository's \`npm ci\` normally puts there; an offline install cannot work`;
    }
  }

  static create(root: string = REPO_ROOT): PrebuiltSandbox {
    return new PrebuiltSandbox(root, mkdtempSync(join(tmpdir(), 'noderag-prebuilt-')));
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  /**
   * Packs both packages: the compiled TypeScript goes to a folder of the sandbox (`npm run
   * build:ts` without touching `root`/dist, which other tests compile too).
   */
  pack(): Packed {
    const dist = join(this.dir, 'dist');
    const tsc = spawnSync(
      process.execPath,
      [
        join(this.root, 'node_modules', 'typescript', 'bin', 'tsc'),
        '-p',
        'tsconfig.build.json',
        '--outDir',
        dist,
      ],
      { cwd: this.root, encoding: 'utf8', timeout: 240_000 },
    );
    if (tsc.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed\n${output(tsc)}`);
    cpSync(join(this.root, 'ts', 'ui', 'public'), join(dist, 'ui', 'public'), { recursive: true });
    const run = spawnSync(
      process.execPath,
      [join(this.root, 'scripts', 'pack-prebuilt.mjs'), '--out', join(this.dir, 'packed'), '--dist', dist],
      { cwd: this.root, encoding: 'utf8', timeout: 240_000 },
    );
    if (run.status !== 0) throw new Error(`scripts/pack-prebuilt.mjs failed\n${output(run)}`);
    const tarballs = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { main: string; platform: string };
    const platformName = basename(tarballs.platform).replace(`-${this.main.version}.tgz`, '');
    this.packed = {
      ...tarballs,
      platformName,
      platformSuffix: platformName.slice(this.main.name.length + 1),
    };
    return this.packed;
  }

  /** npm (its own script, run by this node) in the sandbox environment. */
  npm(args: string[], cwd: string, timeout = 240_000): SpawnSyncReturns<string> {
    return spawnSync(process.execPath, [this.cli.npm, ...args], {
      cwd,
      env: this.env,
      encoding: 'utf8',
      timeout,
    });
  }

  /** An empty project that depends on the packed main package only, with its lock file. */
  consumer(name: string): string {
    const packed = this.packed;
    if (!packed) throw new Error('PrebuiltSandbox.consumer: pack() first');
    const { main } = this;
    const project = join(this.dir, name);
    mkdirSync(project);
    for (const t of [packed.main, packed.platform]) cpSync(t, join(project, basename(t)));
    const repoLock = readJson<{ packages: Record<string, LockEntry> }>(join(this.root, 'package-lock.json'));
    const root = repoLock.packages['']!;
    const dependencies = { [main.name]: `file:${basename(packed.main)}` };
    const platformEntry: LockEntry = {
      ...readJson<LockEntry>(join(this.root, 'npm', packed.platformSuffix, 'package.json')),
      resolved: `file:${basename(packed.platform)}`,
      integrity: integrityOf(packed.platform),
      optional: true,
    };
    // What npm records for a matching optional platform package.
    for (const key of ['name', 'main', 'files', 'description']) delete platformEntry[key];
    const packages: Record<string, LockEntry> = {
      '': { name: 'consumer', dependencies },
      [`node_modules/${main.name}`]: {
        version: main.version,
        resolved: `file:${basename(packed.main)}`,
        integrity: integrityOf(packed.main),
        hasInstallScript: true,
        license: main.license,
        dependencies: root.dependencies,
        optionalDependencies: { [packed.platformName]: main.version },
        bin: root.bin,
        engines: root.engines,
      },
      [`node_modules/${packed.platformName}`]: platformEntry,
      ...this.dependencyEntries,
    };
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

  /** `npm ci --offline` in a consumer project (`--omit=optional`: as on a platform with no package). */
  install(project: string, extra: string[] = []): SpawnSyncReturns<string> {
    return this.npm(
      ['ci', '--offline', '--no-audit', '--no-fund', '--foreground-scripts', ...extra],
      project,
    );
  }

  /** Copies examples/observatory into the project and builds it with the installed CLI. */
  buildExample(project: string): SpawnSyncReturns<string> {
    const example = join(project, 'observatory');
    const source = join(this.root, 'examples', 'observatory');
    cpSync(join(source, 'Node_config.yaml'), join(example, 'Node_config.yaml'));
    cpSync(join(source, 'input'), join(example, 'input'), { recursive: true });
    return spawnSync(
      process.execPath,
      [this.cli.npx, '--offline', 'noderag', 'build', '-f', example, '--yes'],
      {
        cwd: project,
        env: this.env,
        encoding: 'utf8',
        timeout: 240_000,
      },
    );
  }

  /**
   * Asks EXAMPLE_QUESTION through the installed library; the last line of stdout is JSON
   * `{ response, responseTokens, retrieval }`.
   */
  askExample(project: string): SpawnSyncReturns<string> {
    const query = join(project, 'query.mjs');
    writeFileSync(
      query,
      [
        "import { NodeConfig, NodeSearch } from 'noderag';",
        "const search = new NodeSearch(NodeConfig.fromMainFolder('./observatory'));",
        `const r = await search.answer(${JSON.stringify(EXAMPLE_QUESTION)});`,
        'console.log(JSON.stringify({ response: r.response, responseTokens: r.responseTokens, retrieval: r.retrievalInfo }));',
        'search.close();',
      ].join('\n'),
    );
    return spawnSync(process.execPath, [query], {
      cwd: project,
      env: this.env,
      encoding: 'utf8',
      timeout: 120_000,
    });
  }
}
