import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const cli = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'ts/cli/main.ts', ...args], { encoding: 'utf8' });

describe('CLI usage errors', () => {
  it('a missing required flag is one line and exit 2, not a stack trace', () => {
    const r = cli('search');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('Missing required argument: --folder');
    expect(r.stderr).not.toContain('    at ');
  });

  it('an unknown command is exit 2', () => {
    const r = cli('frobnicate', '-f', '/tmp');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('Unknown command');
  });

  it('a missing question is exit 2', () => {
    const r = cli('-f', '/tmp/nowhere');
    expect(r.status).toBe(2);
  });
});
