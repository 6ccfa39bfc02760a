/**
 * One `runBuild` in a process of its own (bench/build.ts, bench/scale.ts). As a script it runs
 * the build and prints, as one JSON line, its wall and CPU seconds, the process's peak RSS and
 * each stage's seconds from info.log:
 *
 *   node --import tsx bench/lib/timed-build.ts <project folder>
 *
 * `timedBuild(folder)` spawns it and returns that line (throwing when the build fails).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildLogMark, buildLogSince, stageSeconds } from './build-log.js';

export interface TimedBuild {
  /** Wall seconds of `runBuild` in the child (start-up excluded). */
  seconds: number;
  /** CPU seconds of the child, every thread, start-up included. */
  cpuSeconds: number;
  peakRssMb: number;
  /** Seconds per stage, from info.log. */
  stages: Record<string, number>;
}

const SELF = fileURLToPath(import.meta.url);

export function timedBuild(folder: string): TimedBuild {
  const r = spawnSync(process.execPath, ['--import', 'tsx', SELF, folder], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = (r.stdout ?? '').trim().split('\n').at(-1) ?? '';
  const out = JSON.parse(line || '{}') as TimedBuild & { code?: number };
  if (r.status !== 0 || out.code !== 0) throw new Error(`build of ${folder} failed (exit ${r.status})`);
  return out;
}

if (process.argv[1] === SELF) {
  const folder = process.argv[2];
  if (!folder) {
    console.error('usage: timed-build.ts <project folder>');
    process.exit(2);
  }
  const { runBuild } = await import('../../ts/indexing/pipeline.js');
  const mark = buildLogMark(folder);
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
  const stages = Object.fromEntries(stageSeconds(buildLogSince(folder, mark)));
  console.log(
    JSON.stringify({
      code,
      seconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      stages,
    }),
  );
  process.exit(code);
}
