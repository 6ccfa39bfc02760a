/**
 * One `runBuild` in a process of its own (bench/scale.ts): prints, as one JSON line, its wall
 * and CPU seconds, the process's peak RSS and each stage's seconds from info.log.
 *
 *   node --import tsx bench/lib/timed-build.ts <project folder>
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runBuild } from '../../ts/indexing/pipeline.js';

const folder = process.argv[2];
if (!folder) {
  console.error('usage: timed-build.ts <project folder>');
  process.exit(2);
}
const logFile = join(folder, 'info', 'info.log');
const logBefore = (() => {
  try {
    return readFileSync(logFile, 'utf8').length;
  } catch {
    return 0;
  }
})();
const sink = { write: () => true, isTTY: false } as unknown as NodeJS.WritableStream & { isTTY: false };
const started = performance.now();
const code = await runBuild({
  folder,
  yes: true,
  stdout: sink,
  stderr: process.stderr,
  handleSignals: false,
});
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage();
const stages: Record<string, number> = {};
for (const m of readFileSync(logFile, 'utf8')
  .slice(logBefore)
  .matchAll(/INFO (\S+(?: text)?) pipeline \(generation \d+\) finished in ([\d.]+) s/g)) {
  stages[m[1]!] = (stages[m[1]!] ?? 0) + Number(m[2]);
}
console.log(
  JSON.stringify({
    code,
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    stages,
  }),
);
