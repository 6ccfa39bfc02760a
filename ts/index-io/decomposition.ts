/**
 * cache/text_decomposition.jsonl (docs/method.md §5): one UTF-8 line per chunk in `text_id`
 * order, keys in the documented order, non-ASCII written as is. The file is rewritten whole
 * by each Text pipeline commit (atomically, through the stage commit), so a reader never
 * sees a torn line; a damaged line is an error naming the line.
 */
import { readFile } from 'node:fs/promises';
import { IndexFileError } from '../errors.js';
import type { DecompositionRecord, ParsedUnit } from '../model/types.js';
import { projectOf } from '../project/layout.js';
import { rebuildHint } from '../project/state.js';

/**
 * Lines already built, by record: a sync writes the file twice per cycle (its Document commit
 * drops the removed chunks' records, the Text commit adds the new ones) over the same record
 * objects, which nothing edits in place (a new reply is a new record). A record read from the
 * file keeps the line it was read from when that line has the written form's shape (keys
 * from `text_hash_id` on, no spacing): lines are only ever written by `buildLine`, so the
 * sync's first write costs no serialisation of the ~1,000 records it keeps (35–40 ms CPU
 * of a HotpotQA-100 sync, and their garbage).
 */
const builtLines = new WeakMap<DecompositionRecord, string>();
const WRITTEN_LINE_START = '{"text_hash_id":"';

function recordLine(r: DecompositionRecord): string {
  let line = builtLines.get(r);
  if (line === undefined) {
    line = buildLine(r);
    builtLines.set(r, line);
  }
  return line;
}

function buildLine(r: DecompositionRecord): string {
  // Built key by key: the order of §5, whatever order the object was assembled in.
  return JSON.stringify({
    text_hash_id: r.text_hash_id,
    text_id: r.text_id,
    generation: r.generation,
    status: r.status,
    response: r.response ?? null,
    units: r.units.map((u) => ({
      semantic_unit: u.semantic_unit,
      entities: u.entities,
      relationships: u.relationships.map((x) => ({
        source: x.source,
        relation: x.relation,
        target: x.target,
      })),
    })),
    dropped: r.dropped.map((d) => ({ input: d.input, reason: d.reason })),
    error: r.error ?? null,
  });
}

export function serializeDecompositions(records: Iterable<DecompositionRecord>): string {
  const sorted = [...records].sort((a, b) => a.text_id - b.text_id);
  return sorted.map((r) => `${recordLine(r)}\n`).join('');
}

/**
 * The lines `added` appends to the file of `before` (serializeDecompositions of them), or null
 * when the file must be written whole: an added record replaces one of `before` or does not
 * come after all of them in text_id order. Then the new file is the old one and these lines,
 * the bytes serializeDecompositions would give, without serializing every record again (a
 * sync that adds one chunk to a 10 MB index wrote 50 MB of JSON for it).
 */
export function appendedDecompositions(
  before: ReadonlyMap<string, DecompositionRecord>,
  added: readonly DecompositionRecord[],
): string | null {
  let last = Number.NEGATIVE_INFINITY;
  for (const r of before.values()) if (r.text_id > last) last = r.text_id;
  const sorted = [...added].sort((a, b) => a.text_id - b.text_id);
  const seen = new Set<string>();
  for (const r of sorted) {
    if (r.text_id <= last || before.has(r.text_hash_id) || seen.has(r.text_hash_id)) return null;
    seen.add(r.text_hash_id);
    last = r.text_id;
  }
  return sorted.map((r) => `${recordLine(r)}\n`).join('');
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string');
}

function parseUnit(v: unknown): ParsedUnit | null {
  if (typeof v !== 'object' || v === null) return null;
  const u = v as Record<string, unknown>;
  if (typeof u.semantic_unit !== 'string' || !isStringArray(u.entities) || !Array.isArray(u.relationships))
    return null;
  const relationships: ParsedUnit['relationships'] = [];
  for (const r of u.relationships) {
    const x = r as Record<string, unknown> | null;
    if (
      !x ||
      typeof x.source !== 'string' ||
      typeof x.relation !== 'string' ||
      typeof x.target !== 'string'
    ) {
      return null;
    }
    relationships.push({ source: x.source, relation: x.relation, target: x.target });
  }
  return { semantic_unit: u.semantic_unit, entities: u.entities, relationships };
}

/** `root`: the project folder, named in the way out of damage. */
export function parseDecompositions(text: string, label: string, root?: string): DecompositionRecord[] {
  const out: DecompositionRecord[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    if (line === '') return;
    const bad = (what: string): never => {
      throw new IndexFileError('index_damaged', `${label}, line ${i + 1}: ${what}; ${rebuildHint(root)}`);
    };
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      bad('not valid JSON');
    }
    const o = raw as Record<string, unknown>;
    if (typeof o !== 'object' || o === null) bad('not a JSON object');
    if (typeof o.text_hash_id !== 'string') bad('text_hash_id must be a string');
    if (typeof o.text_id !== 'number' || typeof o.generation !== 'number')
      bad('text_id and generation must be numbers');
    if (o.status !== 'ok' && o.status !== 'failed') bad('status must be "ok" or "failed"');
    if (!Array.isArray(o.units) || !Array.isArray(o.dropped)) bad('units and dropped must be lists');
    const units = (o.units as unknown[]).map((u) => parseUnit(u) ?? bad('a unit is malformed'));
    const dropped = (o.dropped as unknown[]).map((d) => {
      const x = d as Record<string, unknown> | null;
      if (!x || typeof x.input !== 'string' || typeof x.reason !== 'string')
        return bad('a dropped entry is malformed');
      return { input: x.input, reason: x.reason };
    });
    const record: DecompositionRecord = {
      text_hash_id: o.text_hash_id as string,
      text_id: o.text_id as number,
      generation: o.generation as number,
      status: o.status as 'ok' | 'failed',
      response: o.response ?? null,
      units,
      dropped,
      error: typeof o.error === 'string' ? o.error : null,
    };
    if (line.startsWith(WRITTEN_LINE_START) && line.endsWith('}') && !line.includes('\r')) {
      builtLines.set(record, line);
    }
    out.push(record);
  });
  return out;
}

/** The records of a project, or none before the first Text pipeline commit. */
export async function readDecompositions(path: string, label: string): Promise<DecompositionRecord[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return parseDecompositions(text, label, projectOf(path, label));
}
