/**
 * Whether something is at a path, for code that only needs to know (any failure to look,
 * ENOENT or EACCES alike, is "no"). The one copy of what several modules wrote for themselves.
 */
import { lstat, stat } from 'node:fs/promises';

/** A regular file is at `path` (links followed). */
export async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * Anything is at `path`: with `followLinks` false a link counts itself, even a broken one
 * (lstat); by default what it leads to must exist (stat).
 */
export async function pathExists(path: string, options: { followLinks?: boolean } = {}): Promise<boolean> {
  try {
    await (options.followLinks === false ? lstat(path) : stat(path));
    return true;
  } catch {
    return false;
  }
}
