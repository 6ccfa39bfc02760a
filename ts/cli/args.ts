/** Argument definitions and checks shared by several commands (citty). */
import { NodeConfig } from '../config/index.js';
import { ConfigError } from '../errors.js';
import { CliExit, EXIT } from './exit.js';

export const folderArg = {
  folder: {
    type: 'string',
    alias: 'f',
    description: 'project folder (holds Node_config.yaml and input/)',
    required: true,
  },
} as const;

/**
 * The value of `-f`. citty turns a bare `-f` (no value, or followed by another flag) into an
 * empty string, which `resolve` would read as the current directory: refuse it instead.
 */
export function folderValue(raw: unknown): string {
  if (typeof raw !== 'string' || raw.trim() === '') {
    throw new CliExit(EXIT.USAGE, '-f/--folder needs a value: the project folder, e.g. -f ./my-project');
  }
  return raw;
}

/**
 * The project's Node_config.yaml for a command: a bad one is a usage error (exit 2). With
 * `warn`, its warnings (unknown keys, ignored sections) go to stderr, as `build` prints them:
 * a misspelt section silently taking the defaults made `vis` refuse the index over config.dim
 * and the client look for the server on the default port.
 */
export function projectConfig(
  folder: string,
  options: { requireApiKeys?: boolean; warn?: boolean } = {},
): NodeConfig {
  let config: NodeConfig;
  try {
    config = NodeConfig.fromMainFolder(folder, { requireApiKeys: options.requireApiKeys ?? true });
  } catch (e) {
    if (e instanceof ConfigError) throw new CliExit(EXIT.USAGE, e.message);
    throw e;
  }
  if (options.warn) for (const w of config.warnings) console.error(`Warning: ${w}`);
  return config;
}

export function missingQuestion(): never {
  throw new CliExit(EXIT.USAGE, 'missing or empty -q "<question>". Run `noderag --help` for usage.');
}

/** A port from 1 to 65535 (`--port`), or `fallback` when the flag is absent. */
export function parsePort(
  raw: string | undefined,
  fallback: number,
  /** Whether 0 (any free port, the system picks) is accepted (`ui`). */
  anyFree = false,
): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  const low = anyFree ? 0 : 1;
  if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(n) || n < low || n > 65535) {
    const expected = anyFree
      ? 'an integer from 1 to 65535, or 0 for any free port'
      : 'an integer from 1 to 65535';
    throw new CliExit(EXIT.USAGE, `--port: expected ${expected}, got "${raw}"`);
  }
  return n;
}
