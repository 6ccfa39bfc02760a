/**
 * Reading Node_config.yaml: a regular file of UTF-8 text. Anything else is one ConfigError
 * naming the file and what it is instead (a FIFO would block the read forever, a UTF-16
 * file would parse as one garbled string, a Latin-1 byte would become U+FFFD silently).
 */
import { lstatSync, readFileSync, type Stats, statSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { decodeUtf8Text } from '../utf8-text.js';

function fail(msg: string, cause?: unknown): never {
  throw new ConfigError(msg, [msg], cause === undefined ? undefined : { cause });
}

/** Whether anything (a file, a folder, a link, even a broken one) is at `path`. */
export function configPresent(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function kindOf(s: Stats): string {
  if (s.isDirectory()) return 'a folder';
  if (s.isFIFO()) return 'a named pipe (FIFO)';
  if (s.isSocket()) return 'a socket';
  if (s.isCharacterDevice() || s.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/** The text of the config file at `path` (a UTF-8 byte-order mark removed). */
export function readConfigText(path: string): string {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && configPresent(path))
      fail(`${path} is a symbolic link to a file that does not exist`, e);
    if (code === 'ELOOP') fail(`${path} is a symbolic link that leads back to itself`, e);
    fail(`cannot read ${path}: ${code ?? String(e)}`, e);
  }
  if (!stats.isFile()) fail(`${path} is ${kindOf(stats)}, not a file; it should be the YAML config`);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    fail(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, e);
  }
  const decoded = decodeUtf8Text(bytes, path);
  if (!decoded.ok) fail(decoded.problem, decoded.cause);
  return decoded.text;
}
