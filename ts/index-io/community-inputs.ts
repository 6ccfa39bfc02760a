/**
 * cache/community_inputs.json: the high-level elements each summarised community produced,
 * by the SHA-256 of its prompt input (chat model + the ranked member texts of prompt C), so
 * that a community formed again with the same input is not summarised again
 * (docs/method.md §4.5):
 *
 *   { "version": 1, "communities": { "<SHA-256>": [["<title>", "<description>"], …] } }
 *
 * Written by the Summary stage with the element tables. It keeps the entries of this cycle's
 * communities and of those that still have an element in the index; an entry whose elements
 * all went (a sync dropped its community) is kept until the next Summary stage, which may
 * form the same community again, and is then forgotten.
 */
import { IndexFileError } from '../errors.js';
import { readTextIfExists } from '../project/read-optional.js';

export const COMMUNITY_INPUTS_FILE = 'cache/community_inputs.json';
const VERSION = 1;

/** A produced element: [title, description]. */
export type ProducedPair = [string, string];

export function serializeCommunityInputs(communities: ReadonlyMap<string, readonly ProducedPair[]>): string {
  const out: Record<string, readonly ProducedPair[]> = {};
  for (const hash of [...communities.keys()].sort()) out[hash] = communities.get(hash)!;
  return `${JSON.stringify({ version: VERSION, communities: out })}\n`;
}

export function parseCommunityInputs(text: string, label: string): Map<string, ProducedPair[]> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new IndexFileError('index_damaged', `${label}: not valid JSON (${(error as Error).message})`);
  }
  const v = value as { version?: unknown; communities?: unknown } | null;
  const communities = v?.communities;
  if (
    v === null ||
    typeof v !== 'object' ||
    v.version !== VERSION ||
    communities === null ||
    typeof communities !== 'object' ||
    Array.isArray(communities)
  ) {
    throw new IndexFileError(
      'index_damaged',
      `${label}: expected { "version": ${VERSION}, "communities": { "<input hash>": [[title, description], …] } }`,
    );
  }
  const out = new Map<string, ProducedPair[]>();
  for (const [hash, list] of Object.entries(communities as Record<string, unknown>)) {
    const ok =
      Array.isArray(list) &&
      list.every(
        (p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && typeof p[1] === 'string',
      );
    if (!ok) {
      throw new IndexFileError(
        'index_damaged',
        `${label}: communities.${hash} must be a list of [title, description] pairs of strings`,
      );
    }
    out.set(hash, list as ProducedPair[]);
  }
  return out;
}

/** The recorded communities, or none when the file does not exist (older indexes). */
export async function readCommunityInputs(path: string, label: string): Promise<Map<string, ProducedPair[]>> {
  const text = await readTextIfExists(path);
  return text === null ? new Map() : parseCommunityInputs(text, label);
}
