/** Reading what a build wrote to its project's info/info.log (bench/update.ts, bench/lib/timed-build.ts). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

function logFile(root: string): string {
  return join(root, 'info', 'info.log');
}

/** Where info.log ends now (0 when there is none): the start of the next build's lines. */
export function buildLogMark(root: string): number {
  try {
    return readFileSync(logFile(root), 'utf8').length;
  } catch {
    return 0;
  }
}

/** The lines written since `mark`. */
export function buildLogSince(root: string, mark: number): string {
  return readFileSync(logFile(root), 'utf8').slice(mark);
}

/** Seconds per stage ("Document", "Insert text", …) in `log`, summed over its generations. */
export function stageSeconds(log: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of log.matchAll(/INFO (\S+(?: text)?) pipeline \(generation \d+\) finished in ([\d.]+) s/g)) {
    out.set(m[1]!, (out.get(m[1]!) ?? 0) + Number(m[2]));
  }
  return out;
}
