/** The `noderag search` flag parsers: a bad value is a usage error (exit 2) naming the flag. */
import { describe, expect, it } from 'vitest';
import { CliExit, EXIT } from '../../ts/cli/exit.js';
import { parseHost } from '../../ts/cli/search.js';

function usageError(run: () => unknown): string {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(CliExit);
    expect((e as CliExit).exitCode).toBe(EXIT.USAGE);
    return (e as CliExit).message;
  }
  throw new Error('expected a usage error');
}

describe('--host', () => {
  it('takes host names and addresses, an IPv6 address also in brackets as the server prints it', () => {
    expect(parseHost(undefined, '127.0.0.1')).toBe('127.0.0.1');
    expect(parseHost(' localhost ', '127.0.0.1')).toBe('localhost');
    expect(parseHost('::1', '127.0.0.1')).toBe('::1');
    expect(parseHost('[::1]', '127.0.0.1')).toBe('::1');
    expect(parseHost('0.0.0.0', '127.0.0.1')).toBe('0.0.0.0');
  });

  it('refuses a URL, a flag or a name with spaces as what it is, not as "not a loopback address"', () => {
    for (const bad of ['http://127.0.0.1', '-x', 'my host', '', '127.0.0.1:8000']) {
      expect(usageError(() => parseHost(bad, '127.0.0.1'))).toBe(
        `--host: expected a host name or IP address (e.g. 127.0.0.1, ::1, localhost), got "${bad}"`,
      );
    }
  });
});
