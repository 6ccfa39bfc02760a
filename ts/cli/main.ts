/**
 * The `noderag` command. The root command is the terminal client
 * (`noderag -f DIR -q "question" [-r] [-a]`); sub-commands are loaded lazily, one file each.
 * Every expected failure is a CliExit (one line, exit code); anything else prints a stack.
 */
import { type CommandDef, defineCommand, renderUsage, runCommand } from 'citty';
import { NodeRagError } from '../errors.js';
import { folderArg } from './args.js';
import { CliExit, EXIT } from './exit.js';

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

const main = defineCommand({
  meta: {
    name: 'noderag',
    description: 'NodeRAG graph retrieval: build an index, serve it, query it, visualise it',
  },
  args: {
    ...folderArg,
    folder: { ...folderArg.folder, required: false },
    question: { type: 'string', alias: 'q', description: 'question to ask the running search server' },
    retrieval: { type: 'boolean', alias: 'r', description: 'print the retrieval context' },
    answer: { type: 'boolean', alias: 'a', description: 'print the answer (with -r: both, as JSON)' },
    timeout: { type: 'string', description: 'seconds to wait for the server (default 300)' },
  },
  subCommands,
  async run({ args, rawArgs }) {
    // citty also calls the root's run after a sub-command: do nothing then.
    if (rawArgs.some((a) => a in subCommands)) return;
    const { runQuery } = await import('./query.js');
    await runQuery(args);
  },
});

async function cli(): Promise<void> {
  const rawArgs = process.argv.slice(2);
  if (rawArgs.length === 0 || rawArgs.includes('--help') || rawArgs.includes('-h')) {
    console.log(await renderUsage(main));
    return;
  }
  try {
    await runCommand(main, { rawArgs });
  } catch (e) {
    process.exitCode = report(e);
  }
}

/** Prints a failure and returns the exit code. */
function report(e: unknown): number {
  if (e instanceof CliExit) {
    if (e.message) (e.exitCode === EXIT.OK ? console.log : console.error)(e.message);
    return e.exitCode;
  }
  if (e instanceof NodeRagError) {
    console.error(`${e.code}: ${e.message}`);
    return EXIT.FAILURE;
  }
  const code = (e as { code?: unknown })?.code;
  // citty's usage errors (CLIError): EARG for a missing/invalid argument, E_* for commands.
  if (typeof code === 'string' && (code === 'EARG' || code.startsWith('E_'))) {
    console.error(`${(e as Error).message}\nRun \`noderag --help\` for usage.`);
    return EXIT.USAGE;
  }
  console.error(e);
  return EXIT.FAILURE;
}

await cli();
