/**
 * info/unindexable.json: input files whose content the last cycles could not index (no text,
 * or bytes that are not a readable document of their type), each with the SHA-256 of that
 * content and the reason. Discovery leaves such a file out while its content stays the same
 * (ts/indexing/discover.ts), so an empty or broken file no longer starts a cycle, and a new
 * generation that servers reload, on every build: it is reported as "not indexable" until it
 * changes or goes. Written in the Document pipeline's commit (with document_hash.json).
 *
 * Only failures that follow from the bytes are recorded; a file that could not be read
 * (permissions, vanished) is retried on the next run. The record names the version of the
 * loaders that judged it (LOADERS_VERSION): loaders that learn to read more retry them all.
 * The file saves only repeated work, so an unreadable or older one is read as empty.
 */
import { INFO_FILES, resolveInProject } from '../project/layout.js';
import { readTextIfExists } from '../project/read-optional.js';
import { compareCodePoints } from './discover.js';

/**
 * Version of what the loaders (ts/indexing/loaders, ts/indexing/extract.ts) can read. Bump it
 * when a loader reads documents it refused before, so recorded failures are tried again.
 */
export const LOADERS_VERSION = 1;

export interface UnindexableEntry {
  /** SHA-256 (lowercase hex) of the content that failed. */
  hash: string;
  /** Why, as the state tree shows it (e.g. `no text (empty document)`). */
  reason: string;
}

/** Path relative to input/ → the content that failed there and why. */
export type UnindexableRecord = Map<string, UnindexableEntry>;

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The record in `text`; empty when it is not a valid record of this LOADERS_VERSION. */
export function parseUnindexable(text: string): UnindexableRecord {
  const out: UnindexableRecord = new Map();
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return out;
  }
  if (typeof raw !== 'object' || raw === null) return out;
  const { loaders, files } = raw as { loaders?: unknown; files?: unknown };
  if (loaders !== LOADERS_VERSION || typeof files !== 'object' || files === null) return out;
  for (const [path, entry] of Object.entries(files)) {
    const { hash, reason } = (entry ?? {}) as Partial<UnindexableEntry>;
    if (typeof hash === 'string' && SHA256_HEX.test(hash) && typeof reason === 'string') {
      out.set(path, { hash, reason });
    }
  }
  return out;
}

/** Paths in code-point order, indent 2. */
export function serializeUnindexable(record: ReadonlyMap<string, UnindexableEntry>): string {
  const files: Record<string, UnindexableEntry> = Object.create(null);
  for (const path of [...record.keys()].sort(compareCodePoints)) {
    const { hash, reason } = record.get(path)!;
    files[path] = { hash, reason };
  }
  return `${JSON.stringify({ loaders: LOADERS_VERSION, files }, null, 2)}\n`;
}

/** The record of a project; empty before any cycle recorded one. */
export async function readUnindexable(root: string): Promise<UnindexableRecord> {
  const text = await readTextIfExists(resolveInProject(root, INFO_FILES.unindexable));
  return text === null ? new Map() : parseUnindexable(text);
}
