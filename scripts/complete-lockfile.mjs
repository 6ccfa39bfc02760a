#!/usr/bin/env node
// The package registry reachable from our machines mirrors only the linux-x64 builds of
// packages that ship per-platform optional dependencies (biome, duckdb, @napi-rs/*). `npm
// install` then leaves those other-platform entries out of package-lock.json, and `npm ci`
// refuses the lock file as out of sync. This script adds a minimal entry (version, optional,
// os/cpu when the package name tells them) for every optional dependency the lock file lacks;
// npm skips them on other platforms and never fetches them here.
// Run it after any `npm install` that changes package-lock.json.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;
const platformOf = (name) => {
  const os = ['android', 'darwin', 'freebsd', 'linux', 'win32', 'wasm32'].find((o) => name.includes(`-${o}`));
  const cpu = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 'riscv64', 's390x', 'wasm32'].find((c) =>
    new RegExp(`-${c}(-|$)`).test(name),
  );
  return { os, cpu };
};
let added = 0;
for (const [key, meta] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const nested = `${key ? `${key}/` : ''}node_modules/${dep}`;
    const hoisted = `node_modules/${dep}`;
    if (packages[nested] || packages[hoisted]) continue;
    const { os, cpu } = platformOf(dep);
    const entry = { version, optional: true };
    if (meta.dev) entry.dev = true;
    if (os && os !== 'wasm32') entry.os = [os];
    if (cpu && cpu !== 'wasm32') entry.cpu = [cpu];
    if (os === 'wasm32') entry.cpu = ['wasm32'];
    packages[hoisted] = entry;
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: added ${added} missing optional platform entries`);
