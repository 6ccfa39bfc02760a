/**
 * cache/community_inputs.json: the high-level elements each summarised community produced,
 * by the SHA-256 of its prompt input (chat model + the ranked member texts of prompt C), and
 * its members, so that a community formed again with the same input is not summarised again
 * and a community a sync dropped can be formed again as it was (docs/method.md §4.5):
 *
 *   { "version": 2, "communities": { "<SHA-256>": {
 *       "elements": [["<title>", "<description>"], …],
 *       "members": ["<member id>", …] } } }
 *
 * `members` are the community's semantic units and attributes in the rank order of prompt C,
 * before trimming to the budget. Version 1 files (`"<SHA-256>": [[title, description], …]`)
 * are read with no members.
 *
 * Written by the Summary stage with the element tables. It keeps the entries of this cycle's
 * communities and of those that still have an element in the index; an entry whose elements
 * all went (a sync dropped its community) is kept until the next Summary stage, which may
 * form the same community again, and is then forgotten.
 */
import { IndexFileError } from '../errors.js';
import { readTextIfExists } from '../project/read-optional.js';

export const COMMUNITY_INPUTS_FILE = 'cache/community_inputs.json';
const VERSION = 2;

/** A produced element: [title, description]. */
export type ProducedPair = [string, string];

export interface RecordedCommunity {
  elements: ProducedPair[];
  /** Members in prompt C's rank order, before trimming (none for version 1 entries). */
  members: string[];
}

export function serializeCommunityInputs(communities: ReadonlyMap<string, RecordedCommunity>): string {
  const out: Record<string, RecordedCommunity> = {};
  for (const hash of [...communities.keys()].sort()) {
    const { elements, members } = communities.get(hash)!;
    out[hash] = { elements, members };
  }
  return `${JSON.stringify({ version: VERSION, communities: out })}\n`;
}

const isPairs = (list: unknown): list is ProducedPair[] =>
  Array.isArray(list) &&
  list.every(
    (p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string' && typeof p[1] === 'string',
  );

export function parseCommunityInputs(text: string, label: string): Map<string, RecordedCommunity> {
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
    (v.version !== 1 && v.version !== VERSION) ||
    communities === null ||
    typeof communities !== 'object' ||
    Array.isArray(communities)
  ) {
    throw new IndexFileError(
      'index_damaged',
      `${label}: expected { "version": ${VERSION}, "communities": { "<input hash>": { "elements": [[title, description], …], "members": [id, …] } } }`,
    );
  }
  const out = new Map<string, RecordedCommunity>();
  for (const [hash, entry] of Object.entries(communities as Record<string, unknown>)) {
    if (v.version === 1) {
      if (!isPairs(entry)) {
        throw new IndexFileError(
          'index_damaged',
          `${label}: communities.${hash} must be a list of [title, description] pairs of strings`,
        );
      }
      out.set(hash, { elements: entry, members: [] });
      continue;
    }
    const e = entry as { elements?: unknown; members?: unknown } | null;
    if (
      e === null ||
      typeof e !== 'object' ||
      !isPairs(e.elements) ||
      !Array.isArray(e.members) ||
      !e.members.every((m) => typeof m === 'string')
    ) {
      throw new IndexFileError(
        'index_damaged',
        `${label}: communities.${hash} must be { "elements": [[title, description], …], "members": [id, …] } of strings`,
      );
    }
    out.set(hash, { elements: e.elements, members: e.members as string[] });
  }
  return out;
}

/** The recorded communities, or none when the file does not exist (older indexes). */
export async function readCommunityInputs(
  path: string,
  label: string,
): Promise<Map<string, RecordedCommunity>> {
  const text = await readTextIfExists(path);
  return text === null ? new Map() : parseCommunityInputs(text, label);
}
