/**
 * The sub-commands' own flags that take a value (the root command's are read from its
 * definition in main.ts). Flags may come before the command word (`noderag --workers 2 search
 * -f DIR`); without this list the value was taken for the command ("unknown option
 * --workers"). The commands load lazily, so the list is written out here; a unit test keeps
 * it equal to their definitions.
 */
export const SUBCOMMAND_VALUE_FLAGS: ReadonlySet<string> = new Set([
  '--nodes',
  '-n',
  '--host',
  '--workers',
  '--cache-size',
  '--api-key',
  '--max-upload-bytes',
  '--cors',
  '--questions',
  '--set',
]);
