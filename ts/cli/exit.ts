/**
 * How the CLI ends. A command throws `CliExit` for an expected, user-facing outcome:
 * main.ts prints its one-line message (stderr when non-zero) and exits with its code.
 * Anything else that escapes is unexpected and printed with its stack.
 *
 * Exit codes (README "Exit codes"): 0 ok, 1 failure (stage failed, server error reply,
 * server not running), 2 usage error / invalid config / refused to prompt / another build
 * running, 3 config file just created, 4 declined at the prompt, 130 interrupted.
 */
import { IndexConfigMismatchError, type IndexNotBuiltError } from '../errors.js';

export const EXIT = {
  OK: 0,
  FAILURE: 1,
  USAGE: 2,
  CONFIG_CREATED: 3,
  DECLINED: 4,
  INTERRUPTED: 130,
} as const;

export class CliExit extends Error {
  readonly exitCode: number;
  constructor(exitCode: number, message = '') {
    super(message);
    this.name = 'CliExit';
    this.exitCode = exitCode;
  }
}

/** The exit code of an index a command cannot use: 2 when the config no longer matches it. */
export function unusableIndexExit(e: IndexNotBuiltError): number {
  return e instanceof IndexConfigMismatchError ? EXIT.USAGE : EXIT.FAILURE;
}
