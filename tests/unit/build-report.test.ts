/** runBuild's report over several cycles: each document once, by its net change. */
import { describe, expect, it } from 'vitest';
import { addToReport, type BuildReport, emptyReport } from '../../ts/indexing/build-report.js';
import type { CycleSync } from '../../ts/indexing/stages/context.js';

function cycle(parts: Partial<CycleSync>): CycleSync {
  return { ...emptyReport(), ...parts };
}

function run(...cycles: Partial<CycleSync>[]): BuildReport {
  const report = emptyReport();
  for (const c of cycles) addToReport(report, cycle(c));
  return report;
}

describe('addToReport', () => {
  it('a file added, then edited by a follow-up cycle, was added', () => {
    expect(run({ added: ['a.md'] }, { changed: ['a.md'] })).toMatchObject({ added: ['a.md'], changed: [] });
  });

  it('a file added, then deleted, is no change; an edited file deleted was deleted', () => {
    expect(run({ added: ['a.md'], changed: ['b.md'] }, { deleted: ['a.md', 'b.md'] })).toMatchObject({
      added: [],
      changed: [],
      deleted: ['b.md'],
    });
  });

  it('renames chain to one, from the first name; renamed back is none; a renamed file deleted was its old name', () => {
    expect(
      run({ renamed: [{ path: 'b.md', from: 'a.md' }] }, { renamed: [{ path: 'c.md', from: 'b.md' }] })
        .renamed,
    ).toEqual([{ path: 'c.md', from: 'a.md' }]);
    expect(
      run({ renamed: [{ path: 'b.md', from: 'a.md' }] }, { renamed: [{ path: 'a.md', from: 'b.md' }] })
        .renamed,
    ).toEqual([]);
    expect(run({ renamed: [{ path: 'b.md', from: 'a.md' }] }, { deleted: ['b.md'] })).toMatchObject({
      renamed: [],
      deleted: ['a.md'],
    });
    expect(run({ added: ['a.md'] }, { renamed: [{ path: 'b.md', from: 'a.md' }] })).toMatchObject({
      added: ['b.md'],
      renamed: [],
    });
  });

  it('a file deleted, then back, changed; a file skipped, then indexed, is not skipped', () => {
    expect(run({ deleted: ['a.md'] }, { added: ['a.md'] })).toMatchObject({
      deleted: [],
      added: [],
      changed: ['a.md'],
    });
    expect(run({ skipped: [{ path: 'a.pdf', reason: 'no text' }] }, { added: ['a.pdf'] })).toMatchObject({
      skipped: [],
      added: ['a.pdf'],
    });
  });

  it('a changed file unreadable, then read by a later cycle, changed; one this run added, then unreadable, only skipped', () => {
    const unreadable = { changed: ['a.md'], skipped: [{ path: 'a.md', reason: 'not UTF-8' }] };
    expect(run(unreadable, { added: ['a.md'] })).toMatchObject({ added: [], changed: ['a.md'], skipped: [] });
    expect(run({ added: ['a.md'] }, unreadable)).toMatchObject({
      added: [],
      changed: [],
      skipped: unreadable.skipped,
    });
    expect(run({ added: ['a.md'] }, unreadable, { added: ['a.md'] })).toMatchObject({
      added: ['a.md'],
      changed: [],
      skipped: [],
    });
  });

  it('one cycle is reported as it is, removed ids included', () => {
    const one = cycle({
      added: ['n.md'],
      changed: ['c.md'],
      deleted: ['d.md'],
      renamed: [{ path: 'r2.md', from: 'r1.md' }],
      removedChunks: ['t1'],
      skipped: [{ path: 'x.pdf', reason: 'no text' }],
    });
    expect(run(one)).toEqual(one);
  });
});
