#!/usr/bin/env node
// Builds the napi-rs addon from source (there are no prebuilt binaries: this *is* the
// install path). Run by `npm install` / `npm ci` through the "install" script.
// `--release` builds optimised; without it a debug build (deps still optimised, see Cargo.toml).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const release = process.argv.includes('--release');

const cargo = spawnSync('cargo', ['--version'], { encoding: 'utf8' });
if (cargo.error || cargo.status !== 0) {
  console.error(
    "noderag: building the native addon needs Rust's cargo on PATH, and it was not found. Install Rust (https://rustup.rs) and run `npm install` again.",
  );
  process.exit(1);
}

const require = createRequire(import.meta.url);
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
