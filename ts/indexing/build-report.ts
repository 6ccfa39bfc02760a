/**
 * runBuild's report (`BuildOptions.onReport`): what a run changed between the index it found
 * and the one it left, over all its cycles. A run of several cycles (documents that arrived or
 * changed while one ran are synced by a follow-up cycle) reports each document once, by its
 * net change: a file added and then edited was added; added and then deleted, nothing;
 * renamed twice, one rename from its first name. A changed file that could not be read is
 * `changed` and `skipped` (its old version left the index): read by a later cycle, it is
 * still changed; one this run added, it is only skipped.
 */
import type { CycleSync } from './stages/context.js';

/** What a build run changed, over all its cycles. */
export type BuildReport = CycleSync;

export function emptyReport(): BuildReport {
  return {
    added: [],
    changed: [],
    deleted: [],
    renamed: [],
    removedChunks: [],
    removedUnits: [],
    removedEntities: [],
    removedRelationships: [],
    skipped: [],
  };
}

function remove<T>(list: T[], found: (x: T) => boolean): T | undefined {
  const i = list.findIndex(found);
  return i < 0 ? undefined : list.splice(i, 1)[0];
}

/** Adds one cycle's changes (in cycle order) to the run's report, netting the documents. */
export function addToReport(report: BuildReport, sync: CycleSync): void {
  const is = (path: string) => (p: string) => p === path;
  for (const r of sync.renamed) {
    const earlier = report.renamed.find((x) => x.path === r.from);
    if (remove(report.added, is(r.from)) !== undefined) report.added.push(r.path);
    else if (earlier) {
      remove(report.renamed, (x) => x === earlier);
      // Renamed back to where it was: no rename at all.
      if (earlier.from !== r.path) report.renamed.push({ path: r.path, from: earlier.from });
    } else report.renamed.push(r);
    if (remove(report.changed, is(r.from)) !== undefined) report.changed.push(r.path);
  }
  for (const path of sync.added) {
    // Deleted by an earlier cycle and back now: the file changed (or came back as it was).
    if (remove(report.deleted, is(path)) !== undefined) report.changed.push(path);
    // Changed but unreadable in an earlier cycle (its old version removed), read now: changed.
    else if (!report.changed.includes(path)) report.added.push(path);
  }
  const skippedNow = new Set(sync.skipped.map((s) => s.path));
  for (const path of sync.changed) {
    // Added by this run, then changed but unreadable: not in the index, only skipped.
    if (skippedNow.has(path) && remove(report.added, is(path)) !== undefined) continue;
    if (!report.added.includes(path) && !report.changed.includes(path)) report.changed.push(path);
  }
  for (const path of sync.deleted) {
    if (remove(report.added, is(path)) !== undefined) continue;
    remove(report.changed, is(path));
    const renamed = remove(report.renamed, (x) => x.path === path);
    report.deleted.push(renamed ? renamed.from : path);
  }
  report.removedChunks.push(...sync.removedChunks);
  report.removedUnits.push(...sync.removedUnits);
  report.removedEntities.push(...sync.removedEntities);
  report.removedRelationships.push(...sync.removedRelationships);
  // A file skipped by one cycle and indexed by a later one is no longer skipped.
  const indexed = new Set([...sync.added, ...sync.changed, ...sync.renamed.map((r) => r.path)]);
  report.skipped = report.skipped.filter((s) => !indexed.has(s.path) && !sync.deleted.includes(s.path));
  for (const s of sync.skipped) {
    remove(report.skipped, (x) => x.path === s.path);
    report.skipped.push(s);
  }
}
