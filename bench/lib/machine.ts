/** Machine facts for the header of bench/RESULTS.md. */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';

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
    `Measured on ${new Date().toISOString().slice(0, 10)}:`,
    '',
    `- CPU: ${cpu[0]?.model ?? 'unknown'} × ${cpu.length} cores; memory ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- Node ${process.version}; ${version('rustc', ['--version'])}; ${version('python3', ['--version'])}`,
    `- load average at the end of the run: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}`,
    '',
    'Each section below names the command that produced it. Sections written by single runs',
    '(`npm run bench -- <name>`) keep the date and load noted in their own text.',
  ].join('\n');
}
