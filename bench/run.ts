/**
 * `npm run bench -- <name> [args]` runs bench/<name>.ts; `npm run bench` runs them all.
 * Each benchmark prints a table and ends with one line `RESULT <name> key=value ...`; its
 * output starts with the `Measured <date> at commit <hash>.` line that leads its section of
 * RESULTS.md (benchmarks that write their section add it themselves).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measuredLine } from './lib/results-md.js';

const here = dirname(fileURLToPath(import.meta.url));
const ALL = [
  'hnsw',
  'graph',
  'store',
  'providers',
  'build',
  'query',
  'vis',
  'quality',
  'peer',
  'server',
  'crash',
  'update',
  'scale',
  'install',
];

const [name, ...rest] = process.argv.slice(2);
const names = name ? [name] : ALL.filter((n) => existsSync(join(here, `${n}.ts`)));
let failed = 0;
for (const n of names) {
  const file = join(here, `${n}.ts`);
  if (!existsSync(file)) {
    console.error(
      `unknown benchmark "${n}"; available: ${ALL.filter((a) => existsSync(join(here, `${a}.ts`))).join(', ')}`,
    );
    process.exit(2);
  }
  console.log(measuredLine());
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', file, ...rest], {
    stdio: 'inherit',
  });
  if (r.status !== 0) failed++;
}
if (!name) {
  // `npm run bench` (all): refresh the machine header of RESULTS.md, keeping every section.
  const { writeResultsPreamble } = await import('./lib/results-md.js');
  const { machineInfo } = await import('./lib/machine.js');
  writeResultsPreamble(machineInfo());
}
process.exit(failed ? 1 : 0);
