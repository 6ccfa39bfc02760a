/**
 * A path or value as it must be typed in a POSIX shell, for the commands messages suggest
 * (`run \`noderag build -f …\``): left as it is when it has no character a shell would read
 * otherwise, else in single quotes. A hint naming `/Users/me/My Docs` unquoted did not work
 * when copied.
 */
export function shellArg(value: string): string {
  if (/^[\w@%+=:,./-]+$/u.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
