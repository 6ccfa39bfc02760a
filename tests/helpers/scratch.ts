/**
 * Temporary directories a test file makes and does not need to look at after it: each is
 * removed when the file's tests are over (afterAll at import, so import this from test files
 * only, not from helpers the benchmarks share).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];

afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new directory under the system temp dir, named `prefix` + random suffix. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
