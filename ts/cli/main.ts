/**
 * The `noderag` command. The root command is the terminal client
 * (`noderag -f DIR -q "question" [-r] [-a]`); sub-commands are loaded lazily, one file each.
 * Every expected failure is a CliExit (one line, exit code); anything else prints a stack.
 *
 * `--help` / `-h` goes through citty's own `runMain`, which resolves the sub-command
 * (`noderag build --help` shows build's flags). Colour escapes (citty's help, its error
 * messages) are written only to a terminal, and never when NO_COLOR is set.
 */

import { readFileSync } from 'node:fs';
import { stripVTControlCharacters } from 'node:util';
import { type ArgsDef, type CommandDef, defineCommand, renderUsage, runCommand, runMain } from 'citty';
import { NodeRagError } from '../errors.js';
import { folderArg, folderValue, missingQuestion } from './args.js';
import { SUBCOMMAND_VALUE_FLAGS } from './command-flags.js';
import { CliExit, EXIT } from './exit.js';
import { SUB_COMMAND_METAS } from './metas.js';
import { isOptionOf, nearestName, repeatedOption, strayArgument, unknownOption } from './unknown-options.js';

/** A citty value that may be given as a function or a promise. */
async function resolveValue<T>(v: T | Promise<T> | (() => T | Promise<T>)): Promise<T> {
  return typeof v === 'function' ? await (v as () => T | Promise<T>)() : await v;
}

// One entry per sub-command file; each default-exports a citty command (defineCommand).
// Command args are precisely typed per file, so the loaded module is widened here.
const lazy = (load: () => Promise<{ default: unknown }>) => () => load().then((m) => m.default as CommandDef);
const subCommands: Record<string, () => Promise<CommandDef>> = {
  build: lazy(() => import('./build.js')),
  vis: lazy(() => import('./vis.js')),
  search: lazy(() => import('./search.js')),
  ui: lazy(() => import('./ui.js')),
  eval: lazy(() => import('./eval.js')),
};

const rootArgs = {
  ...folderArg,
  folder: { ...folderArg.folder, required: false },
  question: { type: 'string', alias: 'q', description: 'question to ask the running search server' },
  retrieval: { type: 'boolean', alias: 'r', description: 'print the retrieval context' },
  answer: { type: 'boolean', alias: 'a', description: 'print the answer (with -r: both, as JSON)' },
  stream: {
    type: 'boolean',
    description: 'print the answer as it is written, then its sources (default on a terminal; --no-stream)',
  },
  timeout: { type: 'string', description: 'seconds to wait for the server (default 300)' },
  url: {
    type: 'string',
    description: 'search server to ask: http://host:port or a host name (default: config.url)',
  },
  port: {
    type: 'string',
    description:
      'port of the search server, e.g. the --port given to `noderag search` (default: config.port)',
  },
} as const;

/**
 * The sub-command named on the command line, found as citty finds it: the first argument
 * that is not a flag or the value of one of the root's value flags.
 */
export function subCommandOf(rawArgs: readonly string[]): string | undefined {
  const at = firstPositional(rawArgs);
  const a = at < 0 ? undefined : rawArgs[at]!;
  return a !== undefined && Object.hasOwn(subCommands, a) ? a : undefined;
}

/** Whether `arg` is one of the root command's flags (`-r`, `--port=5000`, `--no-stream`, `-ra`, `--help`). */
function isRootFlag(arg: string): boolean {
  const name = arg.split('=')[0]!;
  if (name === '-h' || name === '--help' || name === '-V' || name === '--version') return true;
  return isOptionOf(arg, rootArgs);
}

/** Index of the first argument that is not a flag or a flag's value, or -1. */
function firstPositional(rawArgs: readonly string[]): number {
  const valueFlags = new Set<string>(SUBCOMMAND_VALUE_FLAGS);
  for (const [name, def] of Object.entries(rootArgs)) {
    if (def.type !== 'string') continue;
    valueFlags.add(`--${name}`);
    if ('alias' in def) valueFlags.add(`-${def.alias}`);
  }
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i]!;
    if (a === '--') return -1;
    if (a.startsWith('-')) {
      if (!a.includes('=') && valueFlags.has(a)) i++;
      continue;
    }
    return i;
  }
  return -1;
}

/**
 * The arguments as citty takes them. Flags given before the command move after it
 * (`noderag -f DIR build` is `noderag build -f DIR`, as the root usage line suggests); a
 * word that is no command is refused here with what was likely meant: an unquoted question
 * (`-q Who founded …`) or a misspelled command.
 */
export function commandLine(rawArgs: readonly string[]): string[] {
  const at = firstPositional(rawArgs);
  if (at < 0) return [...rawArgs];
  const word = rawArgs[at]!;
  const before = rawArgs.slice(0, at);
  // Not a command: an unknown option before the word may be what took it as a value
  // (`--api-key K`). (Before a command, flags are the command's, checked against it.)
  const unknown = Object.hasOwn(subCommands, word) ? null : unknownOption(before, rootArgs);
  if (unknown) throw unknownOptionExit(undefined, unknown);
  const asked = before.some((a) => /^(-q|--question)(=|$)/.test(a));
  if (asked) {
    throw new CliExit(
      EXIT.USAGE,
      `"${word}" follows the question: a question of several words goes in quotes, e.g. noderag -f DIR -q "Who founded the observatory?"`,
    );
  }
  if (!Object.hasOwn(subCommands, word)) {
    const near = nearestName(word, Object.keys(subCommands));
    throw new CliExit(
      EXIT.USAGE,
      `unknown command "${word}"${near ? ` (did you mean ${near}?)` : ''}; the commands are ${Object.keys(subCommands).join(', ')}; run \`noderag --help\` for usage`,
    );
  }
  // Right after the word: put last, they would follow a `--` and be taken as plain words.
  return at === 0 ? [...rawArgs] : [word, ...before, ...rawArgs.slice(at + 1)];
}

/** The refusal of an option `sub` (undefined: the terminal client) does not define. */
function unknownOptionExit(
  sub: string | undefined,
  unknown: { option: string; suggestion: string | null },
): CliExit {
  const command = sub === undefined ? 'noderag' : `noderag ${sub}`;
  // The terminal client takes its key from the environment (a flag shows in `ps`).
  const keyHint =
    sub === undefined && unknown.option === '--api-key'
      ? '; the client sends the key in NODERAG_API_KEY (export NODERAG_API_KEY=…)'
      : '';
  return new CliExit(
    EXIT.USAGE,
    `${command}: unknown option ${unknown.option}${unknown.suggestion ? ` (did you mean ${unknown.suggestion}?)` : ''}${keyHint}; run \`${command} --help\` for its options`,
  );
}

/** The version of this package (its package.json, two folders up from ts/cli or dist/cli). */
function packageVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

const main = defineCommand({
  meta: {
    name: 'noderag',
    description: 'NodeRAG graph retrieval: build an index, serve it, query it, visualise it',
  },
  args: rootArgs,
  subCommands,
  async run({ args, rawArgs }) {
    // citty also calls the root's run after a sub-command: do nothing then.
    if (subCommandOf(rawArgs) !== undefined) return;
    const { runQuery } = await import('./query.js');
    await runQuery(args);
  },
});

/** Whether `stream` may receive colour escapes: a terminal, NO_COLOR unset, TERM not dumb. */
export function colourAllowed(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && !env.NO_COLOR && env.TERM !== 'dumb';
}

/** `text` as it may be written to `stream` (escapes stripped unless colour is allowed). */
function forStream(stream: { isTTY?: boolean }, text: string): string {
  return colourAllowed(stream) ? text : stripVTControlCharacters(text);
}

/**
 * The usage of `cmd`. The root's lists the sub-commands from their metas (metas.ts), so
 * `noderag` and `noderag --help` import none of them (about 0.4 s → 0.1 s).
 */
async function usageOf<T extends ArgsDef>(cmd: CommandDef<T>, parent?: CommandDef<T>): Promise<string> {
  if ((cmd as unknown) !== main) return renderUsage(cmd, parent);
  const listed = Object.fromEntries(
    Object.entries(SUB_COMMAND_METAS).map(([name, meta]) => [name, { meta }]),
  );
  return renderUsage({ ...main, subCommands: listed });
}

async function cli(): Promise<void> {
  const given = process.argv.slice(2);
  if (given.length === 1 && (given[0] === '--version' || given[0] === '-V')) {
    console.log(packageVersion());
    return;
  }
  // With anything else it was refused as "unknown option --version": the rest is the problem.
  const versionAt = given.findIndex((a) => a === '--version' || a === '-V');
  if (versionAt >= 0 && !['-q', '--question'].includes(given[versionAt - 1] ?? '')) {
    process.exitCode = report(
      new CliExit(EXIT.USAGE, '--version takes nothing else: run `noderag --version` alone'),
    );
    return;
  }
  let rawArgs: string[];
  try {
    // `-f -q x` would make citty take "-q" as the folder: a flag is never a folder name.
    const f = given.findIndex((a) => a === '-f' || a === '--folder');
    if (f >= 0 && (given[f + 1] === undefined || given[f + 1]!.startsWith('-'))) folderValue('');
    // Nor is one of the root's own flags a question (`-q -r` would ask "-r"); a question
    // that merely starts with a dash ("-5 degrees?") is still one.
    const q = given.findIndex((a) => a === '-q' || a === '--question');
    if (q >= 0 && given[q + 1] !== undefined && isRootFlag(given[q + 1]!)) missingQuestion();
    rawArgs = commandLine(given);
  } catch (e) {
    process.exitCode = report(e);
    return;
  }
  const help = rawArgs.includes('--help') || rawArgs.includes('-h');
  // (citty, asked for the root's usage, would still load every sub-command to look for aliases.)
  if (rawArgs.length === 0 || (help && subCommandOf(rawArgs) === undefined)) {
    console.log(`${forStream(process.stdout, await usageOf(main))}${help ? '\n' : ''}`);
    return;
  }
  if (help) {
    // citty resolves the sub-command and prints its usage, then exits 0.
    await runMain(main, {
      rawArgs,
      showUsage: async (cmd, parent) => {
        console.log(`${forStream(process.stdout, await usageOf(cmd, parent))}\n`);
      },
    });
    return;
  }
  try {
    // citty ignores options a command does not define: a typo must not run something else.
    const sub = subCommandOf(rawArgs);
    const defined: ArgsDef =
      sub === undefined ? rootArgs : await resolveValue((await subCommands[sub]!()).args ?? {});
    const unknown = unknownOption(
      sub === undefined ? rawArgs : rawArgs.slice(rawArgs.indexOf(sub) + 1),
      defined,
    );
    if (unknown) throw unknownOptionExit(sub, unknown);
    const twice = repeatedOption(
      sub === undefined ? rawArgs : rawArgs.slice(rawArgs.indexOf(sub) + 1),
      defined,
    );
    if (twice) {
      const { first, second } = twice;
      const which = first === second ? first : `${first} / ${second}`;
      throw new CliExit(
        EXIT.USAGE,
        `${sub === undefined ? 'noderag' : `noderag ${sub}`}: ${which} given twice; give it once (only one value is used)`,
      );
    }
    const stray = sub === undefined ? null : strayArgument(rawArgs.slice(rawArgs.indexOf(sub) + 1), defined);
    if (stray !== null) {
      // A number is most likely a value whose option was left out (`vis -f DIR 5`).
      const hint = /^\d+$/.test(stray) && 'nodes' in defined ? ` (did you mean -n ${stray}?)` : '';
      throw new CliExit(
        EXIT.USAGE,
        `noderag ${sub}: unexpected argument "${stray}"${hint}. Run \`noderag ${sub} --help\` for usage.`,
      );
    }
    await runCommand(main, { rawArgs });
  } catch (e) {
    process.exitCode = report(e);
  }
}

/** Prints a failure and returns the exit code. */
function report(e: unknown): number {
  const out = (s: string) => console.log(forStream(process.stdout, s));
  const err = (s: string) => console.error(forStream(process.stderr, s));
  if (e instanceof CliExit) {
    if (e.message) (e.exitCode === EXIT.OK ? out : err)(e.message);
    return e.exitCode;
  }
  if (e instanceof NodeRagError) {
    // The message says what is wrong and names the file or key; the code is for programs.
    err(`error: ${e.message}`);
    return EXIT.FAILURE;
  }
  const code = (e as { code?: unknown })?.code;
  // citty's usage errors (CLIError): EARG for a missing/invalid argument, E_* for commands.
  if (typeof code === 'string' && (code === 'EARG' || code.startsWith('E_'))) {
    err(`${(e as Error).message}\nRun \`noderag --help\` for usage.`);
    return EXIT.USAGE;
  }
  // An operating-system error (a full disk, a read-only folder): its message names the call
  // and the path; a stack would add nothing for the user.
  if (typeof code === 'string' && e instanceof Error && 'syscall' in e) {
    err(`error: ${e.message}`);
    return EXIT.FAILURE;
  }
  console.error(e);
  return EXIT.FAILURE;
}

// A reader that leaves early (`noderag build … | head`) closes the pipe, and a closed terminal
// fails every later write with EIO: the output is dropped and the command goes on, so a build
// finishes its cycle (or, cancelled at its question by the hang-up, puts a --rebuild's index
// back) instead of dying on an unhandled error with its lock left behind.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE' && e.code !== 'EIO') throw e;
  });
}

await cli();
