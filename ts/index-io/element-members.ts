/**
 * cache/element_members.json: for each high-level element, the members (semantic-unit and
 * attribute ids) of every community whose summary produced it, sorted, as one JSON object
 * `{ "<element id>": ["<member id>", …] }` with keys in code-point order. Written by the
 * Summary pipeline, read by a sync (ts/model/prune.ts) to drop exactly the elements whose
 * material lost or changed a member. `related_nodes` holds only the members an element is
 * linked to, a subset of this. Indexes built before this file existed have none; a sync
 * then falls back to `related_nodes` (docs/method.md §4.5).
 */
import { IndexFileError } from '../errors.js';
import { readTextIfExists } from '../project/read-optional.js';

export const ELEMENT_MEMBERS_FILE = 'cache/element_members.json';

export function serializeElementMembers(members: ReadonlyMap<string, readonly string[]>): string {
  const out: Record<string, string[]> = {};
  for (const id of [...members.keys()].sort()) out[id] = [...new Set(members.get(id))].sort();
  return `${JSON.stringify(out)}\n`;
}

export function parseElementMembers(text: string, label: string): Map<string, string[]> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new IndexFileError('index_damaged', `${label}: not valid JSON (${(error as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new IndexFileError('index_damaged', `${label}: expected an object of element id → member ids`);
  }
  const out = new Map<string, string[]>();
  for (const [id, list] of Object.entries(value)) {
    if (!Array.isArray(list) || !list.every((m) => typeof m === 'string')) {
      throw new IndexFileError('index_damaged', `${label}: members of ${id} must be a list of ids`);
    }
    out.set(id, list as string[]);
  }
  return out;
}

/** The recorded members, or an empty map when the file does not exist (older indexes). */
export async function readElementMembers(path: string, label: string): Promise<Map<string, string[]>> {
  const text = await readTextIfExists(path);
  return text === null ? new Map() : parseElementMembers(text, label);
}
