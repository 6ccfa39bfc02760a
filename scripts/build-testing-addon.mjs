#!/usr/bin/env node
// Builds the addon with the `testing` cargo feature, which adds test-only entry points
// (`debugPanic`, see bindings/src/error.rs), to target/testing-addon/noderag.node. The
// installed addon (bindings/*.node) is never built with it. Release profile for the host
// target (scripts/cargo-host-release.mjs), like the installed addon: the build reuses the
// dependencies the addon's build compiled, and recompiles only the bindings crate (which
// cargo then links to target/<host>/release/ in place of the installed addon's library; the next
// `npm run build:native` relinks that one before copying it). tests/native/addon.test.ts loads it.
import { copyFileSync, mkdirSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cargoHostRelease, hostTriple } from './cargo-host-release.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const status = cargoHostRelease(['build', '--package', 'noderag-bindings', '--features', 'testing']);
if (status !== 0) {
  console.error(
    "noderag: building the testing addon failed (see the cargo output above; it needs Rust's cargo on PATH).",
  );
  process.exit(status);
}

const library = { darwin: 'libnoderag.dylib', win32: 'noderag.dll' }[process.platform] ?? 'libnoderag.so';
const outDir = join(root, 'target', 'testing-addon');
mkdirSync(outDir, { recursive: true });
// Copy then rename: a test process that has the previous file loaded keeps its mapping.
const out = join(outDir, 'noderag.node');
copyFileSync(join(root, 'target', hostTriple(), 'release', library), `${out}.tmp`);
renameSync(`${out}.tmp`, out);
console.log(`noderag: testing addon at ${out}`);
