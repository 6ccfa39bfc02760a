/**
 * What discovery leaves out, end to end: a symbolic link in input/ to a file outside it is
 * refused unless config.follow_symlinks is true; hidden files and unsupported types are
 * counted and named in the state tree; a .txt holding NUL bytes is refused as binary; a
 * document whose content cannot be indexed is left out of later builds until it changes; a
 * damaged PDF whose parser leaves a rejection unhandled is skipped, not the end of the build.
 */
import { mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { type BuildReport, runBuild } from '../../ts/indexing/pipeline.js';
import { createProject, type Project, REPO_ROOT } from '../helpers/project.js';

const SECRET = 'root:x:0:0:root:/root:/bin/bash';
const projects: Project[] = [];
const outside: string[] = [];
afterAll(async () => {
  for (const p of projects) await p.remove();
  for (const d of outside) await rm(d, { recursive: true, force: true });
});

async function setUp(config: Record<string, unknown> = {}): Promise<{ p: Project; target: string }> {
  const p = await createProject({
    files: {
      'notes.txt': 'Grace Hopper worked on the Harvard Mark I in 1944 at Harvard University.',
      '.DS_Store': 'mac junk',
      'logo.png': 'not really a png',
      'dump.txt': Buffer.from('ELF\u0000\u0000\u0000 readable words after the header'),
    },
    config,
  });
  projects.push(p);
  const dir = await mkdtemp(join(tmpdir(), 'noderag-outside-'));
  outside.push(dir);
  const target = join(dir, 'passwd');
  await writeFile(target, `${SECRET}\n`);
  await symlink(target, p.path('input', 'p.txt'));
  return { p, target };
}

describe('input/ entries that are not indexed', () => {
  it('refuses a link leaving input/, counts hidden and unsupported entries, refuses a binary .txt', async () => {
    const { p, target } = await setUp();
    const r = await p.build();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'Skipped in input/: 3 entries (1 hidden, 1 unsupported type, 1 symbolic link leaving input/)',
    );
    expect(r.stdout).toContain(
      `p.txt (symbolic link to ${target}, outside input/ (set config.follow_symlinks: true to index it))`,
    );
    expect(r.stdout).toContain('.DS_Store (hidden)');
    expect(r.stdout).toContain('logo.png (unsupported type .png)');
    expect(r.stdout).toContain('skipped dump.txt: binary file (contains NUL bytes), not text');
    expect(r.stdout).toContain('1 document added');
    const hashes = await p.readJson<Record<string, string>>('info/document_hash.json');
    expect(Object.keys(hashes)).toEqual(['notes.txt']);
    expect(await p.readText('cache/text_decomposition.jsonl')).not.toContain('root:x:0:0');
    expect(await p.readText('info/info.log')).toMatch(/WARN skipped p\.txt: symbolic link to /);
  });

  it('a damaged PDF is skipped by name and the other documents are indexed (the CLI process lives)', async () => {
    const p = await createProject({
      files: {
        'notes.txt': 'Grace Hopper worked on the Harvard Mark I in 1944 at Harvard University.',
        'bad.pdf': await readFile(join(REPO_ROOT, 'tests', 'fixtures', 'documents', 'damaged-xref.pdf')),
      },
    });
    projects.push(p);
    const r = await p.build();
    expect(r.stderr).not.toContain('XRefEntryException');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/skipped bad\.pdf: not a readable PDF/);
    expect(Object.keys(await p.readJson<Record<string, string>>('info/document_hash.json'))).toEqual([
      'notes.txt',
    ]);
    // Recorded as not indexable: the next build does not read it again.
    expect((await p.build()).stdout).toContain('Index is up to date');
  });

  it('indexes the link with config.follow_symlinks: true', async () => {
    const { p } = await setUp({ follow_symlinks: true });
    const r = await p.build();
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('symbolic link leaving input/');
    const hashes = await p.readJson<Record<string, string>>('info/document_hash.json');
    expect(Object.keys(hashes).sort()).toEqual(['notes.txt', 'p.txt']);
    expect(await p.readText('cache/text_decomposition.jsonl')).toContain('root:x:0:0');
  });

  it('names a skipped file as the state tree does: a line break in its name cannot forge a line', async () => {
    const { p } = await setUp();
    await p.writeInput('x\nBuild finished in 0.1 s (generation 9).txt', '');
    const r = await p.build();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'skipped x\\nBuild finished in 0.1 s (generation 9).txt: no text (empty document)',
    );
    expect(r.stdout).not.toMatch(/^Build finished in 0\.1 s/m);
  });

  it('leaves a document it could not index out of later builds until the file changes', async () => {
    const { p } = await setUp();
    await p.writeInput('empty.md', ' \n\n');
    const first = await p.build();
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('skipped empty.md: no text (empty document)');
    const generation = async () => (await p.readJson<{ generation: number }>('info/state.json')).generation;
    expect(await generation()).toBe(1);
    const record = await p.readJson<{ files: Record<string, { reason: string }> }>('info/unindexable.json');
    expect(Object.keys(record.files)).toEqual(['dump.txt', 'empty.md']);

    // The same contents again: nothing to do, no new generation.
    const again = await p.build();
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('0 new, 0 duplicate, 0 renamed, 0 changed, 0 deleted, 2 not indexable');
    expect(again.stdout).toContain(
      'not indexable (left out until the file changes): dump.txt (binary file (contains NUL bytes), not text), empty.md (no text (empty document))',
    );
    expect(again.stdout).toContain('Index is up to date.');
    expect(await generation()).toBe(1);

    // A file that now has text is indexed, and leaves the record.
    await p.writeInput(
      'empty.md',
      'Ada Lovelace wrote the first published program for the Analytical Engine.',
    );
    const fixed = await p.build();
    expect(fixed.code).toBe(0);
    expect(fixed.stdout).toContain('new: empty.md');
    expect(fixed.stdout).toContain('1 document added');
    expect(await generation()).toBe(2);
    const hashes = await p.readJson<Record<string, string>>('info/document_hash.json');
    expect(Object.keys(hashes)).toEqual(['empty.md', 'notes.txt']);
    const after = await p.readJson<{ files: Record<string, unknown> }>('info/unindexable.json');
    expect(Object.keys(after.files)).toEqual(['dump.txt']);

    // Renamed, the same bad content is tried once under its new name, then left out again;
    // the library's report names it.
    await rename(p.path('input', 'dump.txt'), p.path('input', 'dump2.txt'));
    let report: BuildReport | null = null;
    const sink = new PassThrough();
    let printed = '';
    sink.on('data', (d) => {
      printed += d;
    });
    const code = await runBuild({
      folder: p.root,
      yes: true,
      handleSignals: false,
      stdout: sink,
      stderr: sink,
      onReport: (r) => {
        report = r;
      },
    });
    expect(code, printed).toBe(0);
    expect(printed).toContain('skipped dump2.txt: binary file');
    expect(report!.skipped).toEqual([
      { path: 'dump2.txt', reason: 'binary file (contains NUL bytes), not text' },
    ]);
    expect(report!.added).toEqual([]);
    const movedRecord = await p.readJson<{ files: Record<string, unknown> }>('info/unindexable.json');
    expect(Object.keys(movedRecord.files)).toEqual(['dump2.txt']);
    expect((await p.build()).stdout).toContain('Index is up to date.');
  });

  it('a project whose input/ is gone is one line and exit 2, the index left as it was', async () => {
    const { p } = await setUp();
    expect((await p.build()).code).toBe(0);
    const hashes = await p.readText('info/document_hash.json');
    await rm(p.path('input'), { recursive: true, force: true });
    for (const extra of [[], ['--rebuild']]) {
      const r = await p.build(extra);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(
        `${p.path('input')} does not exist; create it and put the documents to index there`,
      );
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(await p.readText('info/document_hash.json')).toBe(hashes);
    }
    // A file named input: the same (it was a raw ENOTDIR error and exit 1).
    await writeFile(p.path('input'), 'not a folder');
    const r = await p.build();
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${p.path('input')} is not a folder`);
    expect(r.stderr).not.toMatch(/ENOTDIR|\n\s+at /);
    expect(await p.readText('info/document_hash.json')).toBe(hashes);
  });

  it('runBuild leaves the process signals alone unless asked (the CLI asks)', async () => {
    const { p } = await setUp();
    const counts = () => (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((s) => process.listenerCount(s));
    const before = counts();
    const during: number[][] = [];
    const sink = new PassThrough().resume();
    const code = await runBuild({
      folder: p.root,
      yes: true,
      stdout: sink,
      stderr: sink,
      hooks: {
        afterStage: () => {
          during.push(counts());
        },
      },
    });
    expect(code).toBe(0);
    expect(during.length).toBeGreaterThan(0);
    for (const counts of during) expect(counts).toEqual(before);
  });

  it('runBuild with an AbortSignal stops at the next safe point (exit 130); the next run finishes', async () => {
    const { p } = await setUp();
    const sink = new PassThrough().resume();
    const ctl = new AbortController();
    const stages: string[] = [];
    const code = await runBuild({
      folder: p.root,
      yes: true,
      stdout: sink,
      stderr: sink,
      signal: ctl.signal,
      hooks: {
        afterStage: (stage) => {
          stages.push(stage);
          if (stage === 'Text pipeline') ctl.abort();
        },
      },
    });
    expect(code).toBe(130);
    expect(stages).toEqual(['Document pipeline', 'Text pipeline']);
    expect(await p.readJson<{ error_type: string }>('info/state.json')).toMatchObject({
      error_type: 'INTERRUPTED',
    });
    expect(await runBuild({ folder: p.root, yes: true, stdout: sink, stderr: sink })).toBe(0);
  });
});
