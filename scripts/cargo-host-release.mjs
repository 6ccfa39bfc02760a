#!/usr/bin/env node
// `node scripts/cargo-host-release.mjs <cargo args…>` runs `cargo <args…> --release --target
// <host triple>`: the profile and target folder of the release addon, which `napi build`
// (scripts/build-native.mjs) always builds with an explicit --target, into
// target/<host triple>/release/. `npm run test:rust`, `npm run lint:rust` (clippy) and the
// testing addon (scripts/build-testing-addon.mjs) build there so that they reuse the addon's
// dependency builds (arrow, parquet, hnsw_rs …), build scripts (zstd's C library) and proc
// macros instead of compiling them a second time in the dev profile.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The host triple rustc reports (`host: x86_64-unknown-linux-gnu`), as napi build uses it. */
export function hostTriple() {
  const r = spawnSync('rustc', ['-vV'], { encoding: 'utf8' });
  const line = r.status === 0 ? r.stdout.split('\n').find((l) => l.startsWith('host: ')) : undefined;
  if (!line) {
    console.error("noderag: `rustc -vV` did not report a host triple (Rust's rustc must be on PATH).");
    process.exit(1);
  }
  return line.slice('host: '.length).trim();
}

/**
 * Runs cargo with `args` in the release profile for the host target; returns the exit status.
 * The flags go before a `--` in `args` (`clippy … -- -D warnings`), so cargo reads them.
 */
export function cargoHostRelease(args) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const flags = ['--release', '--target', hostTriple()];
  const end = args.includes('--') ? args.indexOf('--') : args.length;
  const r = spawnSync('cargo', [...args.slice(0, end), ...flags, ...args.slice(end)], {
    cwd: root,
    stdio: 'inherit',
  });
  if (r.error) console.error(`noderag: cannot run cargo (${r.error.message}); Rust's cargo must be on PATH.`);
  return r.status ?? 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(cargoHostRelease(process.argv.slice(2)));
