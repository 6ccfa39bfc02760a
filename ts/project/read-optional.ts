/** Reading files that older indexes (or a first run) may not have. */
import { readFile } from 'node:fs/promises';

/** The file's UTF-8 text, or null when it does not exist; any other failure is thrown. */
export async function readTextIfExists(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
