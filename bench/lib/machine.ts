/** Machine facts for the header of bench/RESULTS.md. */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { runStamp } from './results-md.js';

function version(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8' }).trim().split('\n')[0]!;
  } catch {
    return 'not found';
  }
}

export function machineInfo(): string {
  const cpu = cpus();
  return [
    `Machine, recorded ${runStamp()}:`,
    '',
    `- CPU: ${cpu[0]?.model ?? 'unknown'} × ${cpu.length} cores; memory ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- Node ${process.version}; ${version('rustc', ['--version'])}; ${version('python3', ['--version'])}`,
    `- load average at the end of the run: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}`,
    '',
    'Each section below starts with the date of its run and the commit it measured, and names',
    'the command that produced it.',
  ].join('\n');
}
