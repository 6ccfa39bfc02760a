#!/usr/bin/env node
// Builds the napi-rs addon from source into bindings/noderag.<platform>.node.
// `--release` builds optimised; without it a debug build (deps still optimised, see Cargo.toml).
//
// `--if-needed` is the package's "install" script (`npm install` / `npm ci`): it compiles only
// when no prebuilt addon matches this platform, i.e. when the optional platform package
// (noderag-linux-x64-gnu etc., see scripts/pack-prebuilt.mjs) is not installed beside this
// package. In a clone of the repository it never is, so `npm ci` there always compiles.
// NODERAG_BUILD_FROM_SOURCE=1 compiles even when a prebuilt addon matches.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const release = process.argv.includes('--release');
const ifNeeded = process.argv.includes('--if-needed');
const require = createRequire(import.meta.url);

/** napi-rs platform name: linux-x64-gnu, linux-arm64-musl, darwin-arm64, win32-x64-msvc. Same rule as ts/native.ts. */
function platformSuffix() {
  const { platform, arch } = process;
  if (platform === 'linux') {
    const report = process.report?.getReport();
    return `${platform}-${arch}-${report?.header?.glibcVersionRuntime ? 'gnu' : 'musl'}`;
  }
  if (platform === 'win32') return `${platform}-${arch}-msvc`;
  return `${platform}-${arch}`;
}

const suffix = platformSuffix();
const prebuiltPackage = `noderag-${suffix}`;
/** Why no prebuilt addon is used, for the messages below; null when one is. */
let missing = null;

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
/** The platform packages this copy of the package lists (none in a clone of the repository). */
const offered = Object.keys(pkg.optionalDependencies ?? {}).filter((name) => name.startsWith('noderag-'));

if (ifNeeded) {
  const version = pkg.version;
  let manifest = null;
  try {
    manifest = require.resolve(`${prebuiltPackage}/package.json`, { paths: [root] });
  } catch {
    missing = `the optional package ${prebuiltPackage} is not installed`;
  }
  if (manifest !== null) {
    const found = JSON.parse(readFileSync(manifest, 'utf8')).version;
    const file = join(dirname(manifest), `noderag.${suffix}.node`);
    if (found !== version) missing = `${prebuiltPackage} is version ${found}, this package ${version}`;
    else if (!existsSync(file)) missing = `${prebuiltPackage} has no noderag.${suffix}.node`;
  }
  if (missing === null && process.env.NODERAG_BUILD_FROM_SOURCE !== '1') {
    console.log(
      `noderag: using the prebuilt native addon from ${prebuiltPackage}@${version} (nothing to compile).`,
    );
    process.exit(0);
  }
}

const cargo = spawnSync('cargo', ['--version'], { encoding: 'utf8' });
if (cargo.error || cargo.status !== 0) {
  console.error(
    missing === null
      ? "noderag: building the native addon needs Rust's cargo on PATH, and it was not found. Install Rust (https://rustup.rs) and run `npm install` again."
      : `noderag: no prebuilt native addon matches this platform (${suffix}: ${missing}), and building one from source needs Rust's cargo on PATH, which was not found. Prebuilt addons of this version: ${offered.length ? offered.join(', ') : 'none'}. Install Rust (https://rustup.rs) and run \`npm install\` again.`,
  );
  process.exit(1);
}
if (ifNeeded) {
  console.log(
    missing === null
      ? 'noderag: NODERAG_BUILD_FROM_SOURCE=1: building the native addon from source.'
      : `noderag: no prebuilt native addon for ${suffix} (${missing}); building it from source with cargo.`,
  );
}

let napiCli;
try {
  napiCli = join(dirname(require.resolve('@napi-rs/cli/package.json')), 'dist', 'cli.js');
} catch {
  console.error('noderag: @napi-rs/cli is not installed; run `npm install` first.');
  process.exit(1);
}
if (!existsSync(napiCli)) {
  console.error(`noderag: @napi-rs/cli entry not found at ${napiCli}`);
  process.exit(1);
}

const args = [
  napiCli,
  'build',
  '--platform',
  '--no-js',
  '--manifest-path',
  'bindings/Cargo.toml',
  '--package-json-path',
  'package.json',
  '--output-dir',
  'bindings',
  '--dts',
  'index.d.ts',
];
if (release) args.push('--release');
console.log(`noderag: building the native addon (${release ? 'release' : 'debug'}) with cargo…`);
const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
if (r.status !== 0) {
  console.error('noderag: native build failed (see the cargo output above).');
  process.exit(r.status ?? 1);
}
