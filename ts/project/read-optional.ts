/** Reading files that older indexes (or a first run) may not have. */
import { readFile } from 'node:fs/promises';
import { IndexFileError } from '../errors.js';

/**
 * The file's UTF-8 text, or null when it does not exist. Any other failure is an
 * IndexFileError naming the file and what was expected there (a bare `EISDIR: illegal
 * operation on a directory, read` named nothing).
 */
export async function readTextIfExists(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    throw unreadableFile(path, error);
  }
}

/** `path` could not be read: named, with why, for an index file the user can fix. */
export function unreadableFile(path: string, error: unknown): IndexFileError {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'EISDIR'
      ? 'is a folder, where a file was expected'
      : code === 'EACCES' || code === 'EPERM'
        ? 'cannot be read (permission denied): fix its permissions'
        : `could not be read (${code ?? (error as Error).message})`;
  return new IndexFileError('index_file_unreadable', `${path} ${why}`, { cause: error });
}
