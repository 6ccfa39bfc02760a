#!/usr/bin/env node
/**
 * Part of `npm run build:ts`: copies the web UI's page and its files (ts/ui/public: HTML,
 * the checked script, CSS, icon) to dist/ui/public, where the compiled UI serves them from
 * (ts/ui/routes/static.ts reads `../public/` beside itself). tsc emits only the .ts files.
 */
import { cpSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const from = join(root, 'ts', 'ui', 'public');
const to = join(root, 'dist', 'ui', 'public');
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true });
