#!/usr/bin/env node
// The prebuilt-addon packages, the napi-rs way (what `napi create-npm-dirs`, `napi artifacts`
// and `napi prepublish` of @napi-rs/cli 3 do, in our own few lines):
//
//   node scripts/pack-prebuilt.mjs --npm-dirs
//       (re)writes npm/<platform>/package.json and README.md for every target of
//       package.json "napi.targets" (e.g. npm/linux-x64-gnu: package noderag-linux-x64-gnu,
//       with os/cpu/libc, holding noderag.linux-x64-gnu.node). Committed.
//   node scripts/pack-prebuilt.mjs --out DIR
//       packs, with `npm pack`, into DIR: the platform package of this machine with the addon
//       built by `npm run build:native` (bindings/noderag.<platform>.node), and the main package
//       (after `npm run build:ts`) with every platform package in its "optionalDependencies".
//       Nothing in the repository changes: both are staged in DIR/stage first. Prints
//       {"main": tarball, "platform": tarball} as JSON. `--dist D` takes the compiled
//       TypeScript from D instead of dist/ (tests compile into a folder of their own).
//
// The main package's install script (scripts/build-native.mjs --if-needed) then compiles only
// when no platform package matches; ts/native.ts loads the platform package's addon first.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const binaryName = pkg.napi?.binaryName ?? 'noderag';

/** Rust target triple → napi-rs platform name and the npm os/cpu/libc fields. */
const TARGETS = {
  'x86_64-unknown-linux-gnu': { platform: 'linux-x64-gnu', os: 'linux', cpu: 'x64', libc: 'glibc' },
  'aarch64-unknown-linux-gnu': { platform: 'linux-arm64-gnu', os: 'linux', cpu: 'arm64', libc: 'glibc' },
  'x86_64-unknown-linux-musl': { platform: 'linux-x64-musl', os: 'linux', cpu: 'x64', libc: 'musl' },
  'aarch64-unknown-linux-musl': { platform: 'linux-arm64-musl', os: 'linux', cpu: 'arm64', libc: 'musl' },
  'x86_64-apple-darwin': { platform: 'darwin-x64', os: 'darwin', cpu: 'x64' },
  'aarch64-apple-darwin': { platform: 'darwin-arm64', os: 'darwin', cpu: 'arm64' },
  'x86_64-pc-windows-msvc': { platform: 'win32-x64-msvc', os: 'win32', cpu: 'x64' },
  'aarch64-pc-windows-msvc': { platform: 'win32-arm64-msvc', os: 'win32', cpu: 'arm64' },
};

function fail(message) {
  console.error(`noderag: ${message}`);
  process.exit(1);
}

function targets() {
  const triples = pkg.napi?.targets ?? [];
  if (triples.length === 0) fail('package.json "napi.targets" lists no target triple');
  return triples.map((triple) => {
    const t = TARGETS[triple];
    if (!t)
      fail(
        `package.json "napi.targets": unknown target ${triple} (known: ${Object.keys(TARGETS).join(', ')})`,
      );
    return { triple, ...t };
  });
}

/** Same rule as ts/native.ts and scripts/build-native.mjs. */
function hostPlatform() {
  const { platform, arch } = process;
  if (platform === 'linux') {
    const report = process.report?.getReport();
    return `${platform}-${arch}-${report?.header?.glibcVersionRuntime ? 'gnu' : 'musl'}`;
  }
  if (platform === 'win32') return `${platform}-${arch}-msvc`;
  return `${platform}-${arch}`;
}

function writeAtomic(file, text) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

function platformManifest(t) {
  const file = `${binaryName}.${t.platform}.node`;
  const manifest = {
    name: `${pkg.name}-${t.platform}`,
    version: pkg.version,
    description: `The prebuilt native addon of ${pkg.name} for ${t.triple}`,
    main: file,
    files: [file],
    license: pkg.license,
    engines: pkg.engines,
    os: [t.os],
    cpu: [t.cpu],
  };
  if (t.libc) manifest.libc = [t.libc];
  return manifest;
}

function platformReadme(t) {
  return `# \`${pkg.name}-${t.platform}\`\n\nThe prebuilt native addon of \`${pkg.name}\` for \`${t.triple}\`. Installed by \`${pkg.name}\` as an optional dependency; not meant to be installed alone.\n`;
}

function npmDirs() {
  for (const t of targets()) {
    const dir = join(root, 'npm', t.platform);
    writeAtomic(join(dir, 'package.json'), `${JSON.stringify(platformManifest(t), null, 2)}\n`);
    writeAtomic(join(dir, 'README.md'), platformReadme(t));
    console.log(`noderag: wrote npm/${t.platform}/`);
  }
}

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error || r.status !== 0)
    fail(`\`${cmd} ${args.join(' ')}\` failed in ${cwd}\n${r.stderr ?? r.error}`);
  return r.stdout;
}

/** `npm pack DIR` into `out`; returns the tarball's path. */
function npmPack(dir, out) {
  const [info] = JSON.parse(
    run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], dir),
  );
  return join(out, info.filename);
}

function pack(out, dist) {
  const all = targets();
  const host = hostPlatform();
  const t = all.find((x) => x.platform === host);
  if (!t) fail(`this machine is ${host}, which package.json "napi.targets" does not list`);
  const addon = join(root, 'bindings', `${binaryName}.${t.platform}.node`);
  if (!existsSync(addon)) fail(`${addon} not found: build the addon first (npm run build:native)`);
  if (!existsSync(join(dist, 'index.js')))
    fail(`${join(dist, 'index.js')} not found: run \`npm run build:ts\` first`);
  const committed = join(root, 'npm', t.platform, 'package.json');
  if (!existsSync(committed))
    fail(`npm/${t.platform}/package.json not found: run \`node scripts/pack-prebuilt.mjs --npm-dirs\``);
  const platformPkg = JSON.parse(readFileSync(committed, 'utf8'));
  if (platformPkg.version !== pkg.version)
    fail(
      `npm/${t.platform}/package.json "version" is ${platformPkg.version}, package.json's ${pkg.version}: run \`node scripts/pack-prebuilt.mjs --npm-dirs\``,
    );

  const stage = join(out, 'stage');
  rmSync(stage, { recursive: true, force: true });
  // The platform package (napi artifacts: the addon moved into npm/<platform>/, here a copy).
  const platformDir = join(stage, platformPkg.name);
  mkdirSync(platformDir, { recursive: true });
  copyFileSync(committed, join(platformDir, 'package.json'));
  copyFileSync(join(root, 'npm', t.platform, 'README.md'), join(platformDir, 'README.md'));
  copyFileSync(addon, join(platformDir, `${binaryName}.${t.platform}.node`));

  // The main package: exactly the files `npm pack` would take ("files"), and (napi prepublish)
  // every platform package of this version as an optional dependency.
  const mainDir = join(stage, pkg.name);
  const [listing] = JSON.parse(run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], root));
  for (const { path } of listing.files) {
    if (path.startsWith('dist/')) continue;
    mkdirSync(dirname(join(mainDir, path)), { recursive: true });
    copyFileSync(join(root, path), join(mainDir, path));
  }
  cpSync(dist, join(mainDir, 'dist'), { recursive: true });
  const manifest = { ...pkg, optionalDependencies: { ...(pkg.optionalDependencies ?? {}) } };
  for (const x of all) manifest.optionalDependencies[`${pkg.name}-${x.platform}`] = pkg.version;
  writeFileSync(join(mainDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);

  const result = { main: npmPack(mainDir, out), platform: npmPack(platformDir, out) };
  rmSync(stage, { recursive: true, force: true });
  console.log(JSON.stringify(result));
}

const args = process.argv.slice(2);
if (args.includes('--npm-dirs')) npmDirs();
else {
  const i = args.indexOf('--out');
  if (i < 0 || !args[i + 1]) fail('usage: node scripts/pack-prebuilt.mjs --npm-dirs | --out DIR');
  const out = resolve(args[i + 1]);
  mkdirSync(out, { recursive: true });
  const d = args.indexOf('--dist');
  pack(out, d >= 0 && args[d + 1] ? resolve(args[d + 1]) : join(root, 'dist'));
}
