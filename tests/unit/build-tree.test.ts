import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { DiscoveryPlan } from '../../ts/indexing/discover.js';
import {
  buildOutlook,
  changedDeletedNote,
  confirmBuild,
  count,
  decideConfirmation,
  formatNameList,
  isAffirmative,
  renderStateTree,
  upToDateMessage,
} from '../../ts/indexing/tree.js';
import {
  advanceState,
  type BuildState,
  failState,
  initialState,
  startCycle,
} from '../../ts/project/state.js';

const T = new Date('2025-01-01T12:00:00Z');

function plan(partial: Partial<DiscoveryPlan> = {}): DiscoveryPlan {
  const p: DiscoveryPlan = {
    indexed: [],
    new: [],
    duplicate: [],
    renamed: [],
    changed: [],
    deleted: [],
    cycle: [],
    found: 0,
    files: [],
    unreadable: [],
    unindexable: [],
    skipped: [],
    ...partial,
  };
  if (!partial.cycle) {
    p.cycle = [...p.new, ...p.duplicate.map((d) => d.path), ...p.renamed.map((r) => r.path)].sort();
  }
  return p;
}

const finished = (generation: number): BuildState => ({
  ...initialState(T),
  current_state: 'FINISHED',
  generation,
  last_finished_generation: generation,
  is_incremental: generation > 1,
});

function at(state: BuildState, stage: string): BuildState {
  let s = state;
  while (s.current_state !== stage) s = advanceState(s, T);
  return s;
}

describe('renderStateTree', () => {
  it('shows a failed stage of an incremental cycle, the documents summary and the cache', () => {
    const state = failState(
      at(startCycle(finished(1), T), 'Text pipeline'),
      'ERROR',
      'openai returned 503 after 6 attempts',
      T,
    );
    const text = renderStateTree({
      root: '/data/project',
      state,
      plan: plan({
        found: 14,
        indexed: Array.from({ length: 13 }, (_, i) => `doc${i}.txt`),
        unreadable: [{ path: 'broken.txt', reason: 'cannot read: permission denied' }],
      }),
      cache: { replies: 1204, embeddings: 35010 },
    });
    expect(text).toBe(
      [
        'State tree: /data/project (generation 2, incremental)',
        '  [done]     INIT',
        '  [done]     Document pipeline',
        '  [failed]   Text pipeline   <- resumes here: openai returned 503 after 6 attempts',
        '  [pending]  Graph pipeline',
        '  [pending]  Attribute pipeline',
        '  [pending]  Embedding pipeline',
        '  [pending]  Summary pipeline',
        '  [pending]  Insert text pipeline',
        '  [pending]  HNSW pipeline',
        '  [pending]  FINISHED',
        'Documents: 14 found: 13 indexed, 0 new, 0 duplicate, 0 renamed, 0 changed, 0 deleted, 1 skipped (cannot read: permission denied)',
        '  skipped: broken.txt (cannot read: permission denied)',
        'Response cache: 1,204 replies, 35,010 embeddings',
        '',
      ].join('\n'),
    );
  });

  it('counts and names the files left out as not indexable; with nothing else, no work', () => {
    const p = plan({
      found: 3,
      indexed: ['a.txt'],
      unindexable: [
        { path: 'blank.md', hash: '0'.repeat(64), reason: 'no text (empty document)' },
        { path: 'dump.txt', hash: '1'.repeat(64), reason: 'binary file (contains NUL bytes), not text' },
      ],
    });
    const text = renderStateTree({ root: '/p', state: finished(1), plan: p });
    expect(text).toContain(
      'Documents: 3 found: 1 indexed, 0 new, 0 duplicate, 0 renamed, 0 changed, 0 deleted, 2 not indexable\n',
    );
    expect(text).toContain(
      '  not indexable (left out until the file changes): blank.md (no text (empty document)), dump.txt (binary file (contains NUL bytes), not text)\n',
    );
    expect(buildOutlook(finished(1), p).hasWork).toBe(false);
  });

  it('a first build starts at the Document pipeline and lists new documents', () => {
    const text = renderStateTree({
      root: '/p',
      state: initialState(T),
      plan: plan({ found: 2, new: ['a.txt', 'notes/b.md'] }),
    });
    expect(text.split('\n').slice(0, 3)).toEqual([
      'State tree: /p (generation 1, first build)',
      '  [done]     INIT',
      '  [pending]  Document pipeline   <- starts here',
    ]);
    expect(text).toContain(
      'Documents: 2 found: 0 indexed, 2 new, 0 duplicate, 0 renamed, 0 changed, 0 deleted\n  new: a.txt, notes/b.md\n',
    );
    expect(text).not.toContain('Response cache');
  });

  it('an interrupted stage without a message still says why', () => {
    const state = failState(startCycle(initialState(T), T), 'INTERRUPTED', null, T);
    expect(renderStateTree({ root: '/p', state, plan: plan() })).toContain(
      '  [failed]   Document pipeline   <- resumes here: interrupted',
    );
  });

  it('a killed run (NO_ERROR mid-cycle) resumes where it stopped', () => {
    const text = renderStateTree({
      root: '/p',
      state: at(startCycle(initialState(T), T), 'Graph pipeline'),
      plan: plan(),
    });
    expect(text).toContain('  [pending]  Graph pipeline   <- resumes here\n');
  });

  it('changed and deleted documents start a sync cycle, listed with what happens to them', () => {
    const text = renderStateTree({
      root: '/p',
      state: finished(3),
      plan: plan({
        found: 2,
        indexed: ['a.txt'],
        changed: ['b.txt'],
        cycle: ['b.txt'],
        deleted: ['c.txt', 'd.txt'],
      }),
    });
    expect(text).toContain('State tree: /p (generation 4, incremental)');
    expect(text).toContain('Document pipeline   <- starts here');
    expect(text).toContain('  changed: b.txt\n  deleted: c.txt, d.txt\n');
    expect(text).toContain(
      'Sync: 1 changed document is indexed again (the old version is removed; unchanged chunks are kept); 2 deleted documents are removed from the index.',
    );
    expect(text).not.toContain('Warning');
  });

  it('deleted documents alone are work: a cycle starts', () => {
    const text = renderStateTree({
      root: '/p',
      state: finished(3),
      plan: plan({ found: 1, indexed: ['a.txt'], deleted: ['c.txt'] }),
    });
    expect(text).toContain('Document pipeline   <- starts here');
    expect(text).toContain('Sync: 1 deleted document is removed from the index.');
  });

  it('entries that are not documents are counted and named, with their reason', () => {
    const text = renderStateTree({
      root: '/p',
      state: initialState(T),
      plan: plan({
        found: 1,
        new: ['a.txt'],
        skipped: [
          { path: '.DS_Store', kind: 'hidden', reason: 'hidden' },
          { path: 'logo.png', kind: 'unsupported', reason: 'unsupported type .png' },
          {
            path: 'p.txt',
            kind: 'outside',
            reason:
              'symbolic link to /etc/passwd, outside input/ (set config.follow_symlinks: true to index it)',
          },
        ],
      }),
    });
    expect(text).toContain(
      'Skipped in input/: 3 entries (1 hidden, 1 unsupported type, 1 symbolic link leaving input/)\n' +
        '  .DS_Store (hidden), logo.png (unsupported type .png), p.txt (symbolic link to /etc/passwd, outside input/ (set config.follow_symlinks: true to index it))\n',
    );
  });

  it('says "up to date" only when nothing is new, changed or deleted; plurals agree', () => {
    expect(upToDateMessage()).toBe('Index is up to date.');
    expect(changedDeletedNote(0, 1)).toBe('1 deleted document is removed from the index.');
    expect(changedDeletedNote(2, 0)).toMatch(/^2 changed documents are indexed again/);
    expect([count(1, 'batch', 'batches'), count(2, 'batch', 'batches'), count(1200, 'document')]).toEqual([
      '1 batch',
      '2 batches',
      '1,200 documents',
    ]);
  });

  it('documents found during an unfinished cycle are queued', () => {
    const state = at(startCycle(finished(1), T), 'Summary pipeline');
    const p = plan({
      found: 5,
      indexed: ['a', 'b'],
      new: ['late.txt'],
      duplicate: [{ path: 'copy.txt', of: 'a' }],
      renamed: [{ path: 'moved.txt', from: 'gone.txt' }],
    });
    const text = renderStateTree({ root: '/p', state, plan: p });
    expect(text).toContain(
      '  queued (indexed by a follow-up cycle after generation 2): copy.txt, late.txt, moved.txt\n',
    );
    expect(text).not.toContain('  new:');
    expect(buildOutlook(state, p)).toMatchObject({
      hasWork: true,
      startsCycle: false,
      queued: ['copy.txt', 'late.txt', 'moved.txt'],
    });
  });

  it('before the Document pipeline commits, new files join the running cycle', () => {
    const state = failState(startCycle(finished(1), T), 'ERROR', 'x', T);
    expect(buildOutlook(state, plan({ new: ['late.txt'] })).queued).toEqual([]);
  });

  it('lists duplicates and renames with their counterpart', () => {
    const text = renderStateTree({
      root: '/p',
      state: finished(1),
      plan: plan({
        found: 3,
        indexed: ['a.txt'],
        duplicate: [{ path: 'b.txt', of: 'a.txt' }],
        renamed: [{ path: 'n.txt', from: 'o.txt' }],
      }),
    });
    expect(text).toContain('  duplicate: b.txt (copy of a.txt)\n  renamed: o.txt → n.txt\n');
    expect(text).toContain('(generation 2, incremental)');
    // `mv a.txt b.txt` and a new a.txt: b.txt holds the version of a.txt that is indexed.
    const moved = renderStateTree({
      root: '/p',
      state: finished(1),
      plan: plan({ found: 2, duplicate: [{ path: 'b.txt', of: 'a.txt' }], changed: ['a.txt'] }),
    });
    expect(moved).toContain('  duplicate: b.txt (copy of the indexed version of a.txt)\n');
  });

  it('caps name lists at 20', () => {
    const names = Array.from({ length: 23 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`);
    expect(formatNameList(names)).toBe(`${names.slice(0, 20).join(', ')} … and 3 more`);
    expect(formatNameList(names.slice(0, 20))).toBe(names.slice(0, 20).join(', '));
    // A control character in a name would break the tree's line: shown escaped.
    expect(formatNameList(['new\nline.txt', 'tab\there.md', 'bell\u0007.txt'])).toBe(
      'new\\nline.txt, tab\\there.md, bell\\u0007.txt',
    );
    // So would a bidirectional override, which reorders the rest of the terminal line.
    expect(formatNameList(['evil\u202edm.txt', 'a\u2066b\u2069.md', 'c1\u009b.txt', 'café.txt'])).toBe(
      'evil\\u202edm.txt, a\\u2066b\\u2069.md, c1\\u009b.txt, café.txt',
    );
    const text = renderStateTree({
      root: '/p',
      state: initialState(T),
      plan: plan({ found: 23, new: names }),
    });
    expect(text).toContain('… and 3 more\n');
  });
});

describe('outlook and confirmation', () => {
  it('nothing new on a finished index is up to date; a never-built empty project has no work', () => {
    expect(buildOutlook(finished(1), plan()).hasWork).toBe(false);
    // Its tree says so in the first line too, not "first build".
    expect(renderStateTree({ root: '/p', state: finished(1), plan: plan() }).split('\n')[0]).toBe(
      'State tree: /p (generation 1, built)',
    );
    expect(buildOutlook(initialState(T), plan()).hasWork).toBe(false);
    const start = buildOutlook(finished(1), plan({ new: ['x.txt'] }));
    expect(start).toMatchObject({ hasWork: true, startsCycle: true });
    expect(start.view).toMatchObject({ generation: 2, current_state: 'Document pipeline' });
  });

  it('decides per §4.3', () => {
    expect(decideConfirmation({ hasWork: false, yes: false, interactive: false })).toBe('up-to-date');
    expect(decideConfirmation({ hasWork: true, yes: true, interactive: false })).toBe('proceed');
    expect(decideConfirmation({ hasWork: true, yes: false, interactive: false })).toBe('refuse');
    expect(decideConfirmation({ hasWork: true, yes: false, interactive: true })).toBe('ask');
  });

  it('accepts only y or yes, any case', () => {
    for (const a of ['y', 'Y', 'yes', 'YES', 'Yes', ' y ']) expect(isAffirmative(a), a).toBe(true);
    for (const a of ['', 'n', 'no', 'yep', 'ye', 'y y', 'oui', null])
      expect(isAffirmative(a), String(a)).toBe(false);
  });

  function tty(lines: string[] | null) {
    const input = Object.assign(new PassThrough(), { isTTY: true });
    const output = Object.assign(new PassThrough(), { isTTY: true });
    let written = '';
    output.on('data', (d) => {
      written += d;
    });
    if (lines === null) input.end();
    else input.end(lines.join('\n'));
    return { input, output, written: () => written };
  }

  it('asks on a terminal and proceeds on yes', async () => {
    const io = tty(['YES']);
    expect(await confirmBuild({ hasWork: true, yes: false, input: io.input, output: io.output })).toEqual({
      proceed: true,
    });
    expect(io.written()).toBe('Start the build? [y/N] ');
  });

  it('declining (or end of input, whose message starts a line) cancels with exit 4', async () => {
    for (const [lines, message] of [
      [['nope'], 'Build cancelled; nothing changed.'],
      [null, '\nBuild cancelled; nothing changed.'],
    ] as const) {
      const io = tty(lines === null ? null : [...lines]);
      expect(await confirmBuild({ hasWork: true, yes: false, input: io.input, output: io.output })).toEqual({
        proceed: false,
        exitCode: 4,
        message,
      });
    }
  });

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`${signal} at the prompt cancels with exit 130 and says so on a line of its own`, async () => {
      const input = Object.assign(new PassThrough(), { isTTY: true });
      const output = Object.assign(new PassThrough(), { isTTY: true });
      const before = process.listeners(signal);
      const asked = confirmBuild({ hasWork: true, yes: false, input, output });
      // The prompt listens for the signal while it waits (the default action would end the
      // process mid-line, before a --rebuild puts the index back); its listener stands in
      // for the signal here.
      const added = process.listeners(signal).filter((l) => !before.includes(l));
      expect(added).toHaveLength(1);
      (added[0] as () => void)();
      expect(await asked).toEqual({
        proceed: false,
        exitCode: 130,
        message: '\nBuild cancelled; nothing changed.',
      });
      for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
        expect(process.listeners(s).filter((l) => l === added[0])).toHaveLength(0);
    });
  }

  it('without a terminal and without --yes it refuses with exit 2; up to date exits 0', async () => {
    const input = new PassThrough();
    const output = Object.assign(new PassThrough(), { isTTY: true });
    expect(await confirmBuild({ hasWork: true, yes: false, input, output })).toEqual({
      proceed: false,
      exitCode: 2,
      message: 'Refusing to prompt: not a terminal. Re-run with --yes to build non-interactively.',
    });
    expect(await confirmBuild({ hasWork: false, yes: false, input, output })).toEqual({
      proceed: false,
      exitCode: 0,
      message: 'Index is up to date.',
    });
    expect(await confirmBuild({ hasWork: true, yes: true, input, output })).toEqual({ proceed: true });
  });

  it('sync note is absent without changes', () => {
    expect(changedDeletedNote(0, 0)).toBeNull();
  });
});
