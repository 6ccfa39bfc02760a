/**
 * Options a command does not define. citty ignores them silently, so a typo such as
 * `build --rebiuld` ran an ordinary build and `vis --node 3` drew the default size: each is
 * now a usage error naming the option, with the nearest one the command has. So is an
 * option with a value given twice (`-f a -f b`): citty keeps the last one without a word.
 */
import type { ArgsDef } from 'citty';

/** Options meant to be given several times (eval's `--set`, read by `setFlags`). */
const REPEATABLE = new Set(['set']);

/** One spelling of an option: whether it takes a value, and the option it names. */
interface Spelling {
  takesValue: boolean;
  key: string;
}

/** What the command line may spell for each option of `args`. */
function spellings(args: ArgsDef): { long: Map<string, Spelling>; short: Map<string, Spelling> } {
  // Name → whether the option takes a value (the next argument, unless written `--name=value`).
  const long = new Map<string, Spelling>();
  const short = new Map<string, Spelling>();
  for (const [key, def] of Object.entries(args)) {
    const takesValue = def.type === 'string';
    const kebab = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    const camel = key.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    for (const n of new Set([key, kebab, camel])) {
      long.set(n, { takesValue, key });
      if (def.type === 'boolean') long.set(`no-${n}`, { takesValue: false, key });
    }
    const aliases = 'alias' in def && def.alias !== undefined ? [def.alias].flat() : [];
    for (const a of aliases) (a.length === 1 ? short : long).set(a, { takesValue, key });
  }
  return { long, short };
}

/**
 * Whether `arg` is an option of `args`: `--name`, `--name=value`, `--no-name` (booleans), `-x`,
 * or short ones run together (`-ra`).
 */
export function isOptionOf(arg: string, args: ArgsDef): boolean {
  const { long, short } = spellings(args);
  const name = arg.split('=')[0]!;
  if (name.startsWith('--')) return long.has(name.slice(2));
  return name.length > 1 && name.startsWith('-') && [...name.slice(1)].every((c) => short.has(c));
}

/** Edit distance of two short strings (for the suggestion). */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** The name among `known` nearest to `name` when it is close (at most 2 edits), else null. */
export function nearestName(name: string, known: Iterable<string>): string | null {
  let best: string | null = null;
  let bestDistance = 3;
  for (const k of known) {
    const d = distance(name, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best;
}

/**
 * The first option in `rawArgs` that `args` does not define, with the nearest defined long
 * option when one is close (at most 2 edits), or null when every option is known.
 * Arguments after `--`, and the value that follows an option taking one, are not options.
 */
export function unknownOption(
  rawArgs: readonly string[],
  args: ArgsDef,
): { option: string; suggestion: string | null } | null {
  return scan(rawArgs, args).unknown;
}

/**
 * The first argument that is neither an option nor an option's value, when `args` defines
 * no positional argument (citty ignored it: `vis -f DIR 5` drew the default 500 nodes), or
 * null.
 */
export function strayArgument(rawArgs: readonly string[], args: ArgsDef): string | null {
  if (Object.values(args).some((d) => d.type === 'positional')) return null;
  return scan(rawArgs, args).positional;
}

/**
 * The first option with a value given a second time (not one of REPEATABLE), as its two
 * spellings on the command line, or null.
 */
export function repeatedOption(
  rawArgs: readonly string[],
  args: ArgsDef,
): { first: string; second: string } | null {
  return scan(rawArgs, args).repeated;
}

interface Scan {
  unknown: { option: string; suggestion: string | null } | null;
  positional: string | null;
  repeated: { first: string; second: string } | null;
}

function scan(rawArgs: readonly string[], args: ArgsDef): Scan {
  const { long, short } = spellings(args);
  let positional: string | null = null;
  let repeated: Scan['repeated'] = null;
  // Option key → how it was first spelt, for options with a value.
  const given = new Map<string, string>();
  const valueOption = (spelt: string, { key }: Spelling) => {
    const first = given.get(key);
    if (first === undefined) given.set(key, spelt);
    else if (!REPEATABLE.has(key)) repeated ??= { first, second: spelt };
  };
  const found = (unknown: { option: string; suggestion: string | null }) => ({
    unknown,
    positional,
    repeated,
  });
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i]!;
    if (token === '--') break;
    if (!token.startsWith('-') || token === '-') {
      positional ??= token;
      continue;
    }
    if (token.startsWith('--')) {
      const [name, value] = [token.slice(2).split('=')[0]!, token.includes('=')];
      const spelling = long.get(name);
      if (spelling === undefined) {
        const best = nearestName(name, long.keys());
        return found({ option: `--${name}`, suggestion: best === null ? null : `--${best}` });
      }
      if (spelling.takesValue) {
        valueOption(`--${name}`, spelling);
        if (!value) i++;
      }
      continue;
    }
    // -x, -x=value, or grouped flags such as -ra (each a short alias).
    const letters = token.slice(1).split('=')[0]!;
    for (let k = 0; k < letters.length; k++) {
      const spelling = short.get(letters[k]!);
      if (spelling === undefined) return found({ option: `-${letters[k]}`, suggestion: null });
      // A short option taking a value takes the rest of the token, or the next argument.
      if (spelling.takesValue) {
        valueOption(`-${letters[k]}`, spelling);
        if (k === letters.length - 1 && !token.includes('=')) i++;
        break;
      }
    }
  }
  return { unknown: null, positional, repeated };
}
