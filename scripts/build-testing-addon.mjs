#!/usr/bin/env node
// Builds the addon with the `testing` cargo feature, which adds test-only entry points
// (`debugPanic`, see bindings/src/error.rs), to target/testing-addon/noderag.node. The
// installed addon (bindings/*.node) is never built with it. Debug profile, plain cargo: the
// build reuses the dependencies `cargo test` compiled (npm run test:rust) and leaves the
// release build of the addon alone. tests/native/addon.test.ts loads it.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const cargo = spawnSync('cargo', ['build', '--package', 'noderag-bindings', '--features', 'testing'], {
  cwd: root,
  stdio: 'inherit',
});
if (cargo.error || cargo.status !== 0) {
  console.error(
    "noderag: building the testing addon failed (see the cargo output above; it needs Rust's cargo on PATH).",
  );
  process.exit(cargo.status ?? 1);
}

const library = { darwin: 'libnoderag.dylib', win32: 'noderag.dll' }[process.platform] ?? 'libnoderag.so';
const outDir = join(root, 'target', 'testing-addon');
mkdirSync(outDir, { recursive: true });
// Copy then rename: a test process that has the previous file loaded keeps its mapping.
const out = join(outDir, 'noderag.node');
copyFileSync(join(root, 'target', 'debug', library), `${out}.tmp`);
renameSync(`${out}.tmp`, out);
console.log(`noderag: testing addon at ${out}`);
