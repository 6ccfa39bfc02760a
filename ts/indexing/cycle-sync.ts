/**
 * info/cycle_sync.json: what a cycle's Document stage changed in the document set (files
 * added, changed, deleted, renamed, skipped; chunks and nodes removed), written in that
 * stage's commit. runBuild's report (`onReport`) is read from it when the cycle finishes, so
 * a run that resumes the cycle after an interruption (a Ctrl-C, an aborted signal, a crash
 * after the Document commit) reports the cycle's changes, not an empty cycle.
 *
 * The record names its generation: a record of another cycle is not this cycle's. It only
 * feeds the report, so an unreadable one reads as none.
 */
import { INFO_FILES, resolveInProject } from '../project/layout.js';
import { readTextIfExists } from '../project/read-optional.js';
import type { CycleSync } from './stages/context.js';

export function serializeCycleSync(generation: number, sync: CycleSync): string {
  return `${JSON.stringify({ generation, sync })}\n`;
}

const LISTS = [
  'added',
  'changed',
  'deleted',
  'renamed',
  'removedChunks',
  'removedUnits',
  'removedEntities',
  'removedRelationships',
  'skipped',
] as const satisfies readonly (keyof CycleSync)[];

/** The changes of generation `generation`'s cycle, or null (none recorded, or another's). */
export async function readCycleSync(root: string, generation: number): Promise<CycleSync | null> {
  const text = await readTextIfExists(resolveInProject(root, INFO_FILES.cycleSync)).catch(() => null);
  if (text === null) return null;
  try {
    const raw = JSON.parse(text) as { generation?: unknown; sync?: Record<string, unknown> };
    if (raw.generation !== generation || typeof raw.sync !== 'object' || raw.sync === null) return null;
    const sync = raw.sync;
    if (!LISTS.every((k) => Array.isArray(sync[k]))) return null;
    return sync as unknown as CycleSync;
  } catch {
    return null;
  }
}
