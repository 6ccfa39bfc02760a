/**
 * info/indices.json (human-readable id counters, docs/method.md §2.2) and
 * info/document_hash.json (indexed path → content hash, §5): parse, validate, serialise.
 * Both are written inside stage commits (commit.ts), so only text is produced here.
 */
import { IndexFileError } from '../errors.js';
import { type Counters, emptyCounters } from '../model/types.js';
import { INFO_FILES, resolveInProject } from '../project/layout.js';
import { readTextIfExists } from '../project/read-optional.js';
import { compareCodePoints } from './discover.js';

/** Counter keys in the order of §2.2, which is also the order they are written in. */
const COUNTER_KEYS: readonly (keyof Counters)[] = [
  'document_index',
  'text_unit_index',
  'semantic_unit_index',
  'entity_index',
  'relation_index',
  'attribute_index',
  'community_summary_index',
  'high_level_element_index',
];

function parseObject(text: string, label: string): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new IndexFileError('index_damaged', `${label} is not valid JSON (${(error as Error).message})`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new IndexFileError('index_damaged', `${label} must hold a JSON object`);
  }
  return raw as Record<string, unknown>;
}

export function parseIndices(text: string, label: string = INFO_FILES.indices): Counters {
  const o = parseObject(text, label);
  const counters = emptyCounters();
  const problems: string[] = [];
  for (const key of COUNTER_KEYS) {
    const v = o[key];
    // A missing or reset counter would reissue numbers already in the tables: refuse it.
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      problems.push(`${key}: expected an integer ≥ 0, got ${JSON.stringify(v) ?? 'nothing'}`);
    } else counters[key] = v;
  }
  if (problems.length > 0)
    throw new IndexFileError('index_damaged', `${label} is invalid: ${problems.join('; ')}`);
  return counters;
}

export function serializeIndices(counters: Counters): string {
  const ordered: Record<string, number> = {};
  for (const key of COUNTER_KEYS) ordered[key] = counters[key];
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

/** The counters of a project; all zero before the first commit. */
export async function readIndices(root: string): Promise<Counters> {
  const text = await readTextIfExists(resolveInProject(root, INFO_FILES.indices));
  return text === null ? emptyCounters() : parseIndices(text);
}

/** Indexed path (relative to input/, `/` separated) → SHA-256 hex of its bytes when indexed. */
export type DocumentHashes = Record<string, string>;

const SHA256_HEX = /^[0-9a-f]{64}$/;

export function parseDocumentHashes(text: string, label: string = INFO_FILES.documentHash): DocumentHashes {
  const o = parseObject(text, label);
  // A null-prototype map: paths such as "__proto__" or "constructor" stay plain keys.
  const out: DocumentHashes = Object.create(null);
  const problems: string[] = [];
  for (const [path, hash] of Object.entries(o)) {
    if (typeof hash !== 'string' || !SHA256_HEX.test(hash)) {
      problems.push(
        `${JSON.stringify(path)}: expected a lowercase SHA-256 hex string, got ${JSON.stringify(hash)}`,
      );
    } else out[path] = hash;
  }
  if (problems.length > 0)
    throw new IndexFileError('index_damaged', `${label} is invalid: ${problems.join('; ')}`);
  return out;
}

/**
 * Keys sorted in code-point order, indent 2. Written by hand rather than through
 * JSON.stringify of an object, whose key order puts integer-like keys first.
 */
export function serializeDocumentHashes(hashes: Readonly<DocumentHashes>): string {
  const keys = Object.keys(hashes).sort(compareCodePoints);
  if (keys.length === 0) return '{}\n';
  const lines = keys.map((k) => `  ${JSON.stringify(k)}: ${JSON.stringify(hashes[k])}`);
  return `{\n${lines.join(',\n')}\n}\n`;
}

/** The indexed map of a project; empty before the first Document pipeline commit. */
export async function readDocumentHashes(root: string): Promise<DocumentHashes> {
  const text = await readTextIfExists(resolveInProject(root, INFO_FILES.documentHash));
  return text === null ? Object.create(null) : parseDocumentHashes(text);
}

/**
 * The map after a cycle's Document pipeline: new and duplicate paths added with their
 * hashes, renamed paths moved (the old key removed). Changed and deleted paths keep their
 * old entries (docs/method.md §3.1).
 */
export function withCycleDocuments(
  hashes: Readonly<DocumentHashes>,
  added: readonly { path: string; hash: string }[],
  renamed: readonly { path: string; from: string }[] = [],
): DocumentHashes {
  const out: DocumentHashes = Object.assign(Object.create(null), hashes);
  for (const { path, from } of renamed) {
    const hash = out[from];
    if (hash === undefined) throw new Error(`renamed document ${path}: ${from} is not in the indexed map`);
    delete out[from];
    out[path] = hash;
  }
  for (const { path, hash } of added) out[path] = hash;
  return out;
}
