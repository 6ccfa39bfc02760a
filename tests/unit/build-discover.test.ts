import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  allowedExtensions,
  classifyDocuments,
  compareCodePoints,
  discoverDocuments,
  hashFiles,
  listInputFiles,
  readableNow,
} from '../../ts/indexing/discover.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('compareCodePoints', () => {
  it('orders by code point, not UTF-16 unit', () => {
    const paths = ['\uFFFD.txt', '😀.txt', 'b.txt', 'a/b.txt', 'a-c.txt', 'A.txt', 'a.txt'];
    expect([...paths].sort(compareCodePoints)).toEqual([
      'A.txt',
      'a-c.txt',
      'a.txt',
      'a/b.txt',
      'b.txt',
      '\uFFFD.txt',
      '😀.txt', // U+1F600 > U+FFFD although its first UTF-16 unit (0xD83D) is smaller
    ]);
    // Plain JS sort gets the astral case wrong: this is why the comparator exists.
    expect(['\uFFFD', '😀'].sort()).toEqual(['😀', '\uFFFD']);
    expect(compareCodePoints('ab', 'a')).toBeGreaterThan(0);
    expect(compareCodePoints('same', 'same')).toBe(0);
  });
});

describe('allowedExtensions', () => {
  it('maps docu_type to extensions', () => {
    expect([...allowedExtensions('mixed')].sort()).toEqual(
      ['.doc', '.docx', '.htm', '.html', '.md', '.pdf', '.txt'].sort(),
    );
    expect([...allowedExtensions('html')].sort()).toEqual(['.htm', '.html']);
    expect([...allowedExtensions('txt')]).toEqual(['.txt']);
    expect(() => allowedExtensions('rtf' as never)).toThrow(/config\.docu_type/);
  });
});

describe('listInputFiles', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'noderag-discover-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function put(rel: string, content = rel): Promise<void> {
    await mkdir(join(dir, rel, '..'), { recursive: true });
    await writeFile(join(dir, rel), content);
  }

  it('walks recursively, filters and sorts; skips hidden, ~$ and symlinked folders', async () => {
    await put('b.txt');
    await put('A.TXT');
    await put('sub/deeper/c.md');
    await put('sub/page.htm');
    await put('sub/report.pdf');
    await put('notes.rtf');
    await put('.hidden.txt');
    await put('.git/config.txt');
    await put('~$lock.docx');
    await put('sub/~$temp.doc');
    await mkdir(join(dir, 'outside'));
    await writeFile(join(dir, 'outside', 'x.txt'), 'x');
    await symlink(join(dir, 'outside'), join(dir, 'linked-dir'));
    await symlink(join(dir, 'b.txt'), join(dir, 'linked-file.txt'));
    await symlink(join(dir, 'missing.txt'), join(dir, 'broken.txt'));

    const { files, unreadable, skipped } = await listInputFiles(dir, 'mixed');
    expect(files.map((f) => f.path)).toEqual([
      'A.TXT',
      'b.txt',
      'linked-file.txt',
      'outside/x.txt',
      'sub/deeper/c.md',
      'sub/page.htm',
      'sub/report.pdf',
    ]);
    expect(files.find((f) => f.path === 'sub/deeper/c.md')?.absPath).toBe(join(dir, 'sub', 'deeper', 'c.md'));
    // A link inside input/ is read through the target discovery checked.
    expect(files.find((f) => f.path === 'linked-file.txt')?.absPath).toBe(join(dir, 'b.txt'));
    expect(unreadable).toEqual([
      { path: 'broken.txt', reason: 'cannot read: broken symbolic link', lasting: true },
    ]);
    // Nothing is left out silently: every entry not indexed is listed with its reason.
    expect(skipped).toEqual([
      { path: '.git/', kind: 'hidden', reason: 'hidden' },
      { path: '.hidden.txt', kind: 'hidden', reason: 'hidden' },
      { path: 'linked-dir/', kind: 'folder-link', reason: 'symbolic link to a folder (not followed)' },
      { path: 'notes.rtf', kind: 'unsupported', reason: 'unsupported type .rtf' },
      { path: 'sub/~$temp.doc', kind: 'hidden', reason: 'Office lock file' },
      { path: '~$lock.docx', kind: 'hidden', reason: 'Office lock file' },
    ]);

    const onlyMd = await listInputFiles(dir, 'md');
    expect(onlyMd.files.map((f) => f.path)).toEqual(['sub/deeper/c.md']);
    expect(onlyMd.skipped.find((e) => e.path === 'b.txt')?.reason).toBe(
      '.txt files are not indexed with config.docu_type md',
    );
  });

  it('names a file whose name is not UTF-8, and a symbolic link loop, for what they are', async () => {
    await put('good.txt');
    // Not UTF-8: readdir gives the name with U+FFFD, which no file has.
    await writeFile(Buffer.from(`${dir}/bad\xffname.txt`, 'latin1'), 'text');
    await symlink(join(dir, 'loop.txt'), join(dir, 'loop.txt'));
    const { files, unreadable } = await listInputFiles(dir, 'mixed');
    expect(files.map((f) => f.path)).toEqual(['good.txt']);
    expect(unreadable).toEqual([
      { path: 'bad\ufffdname.txt', reason: 'its name is not valid UTF-8 (shown with \ufffd); rename it' },
      { path: 'loop.txt', reason: 'cannot read: symbolic link loop', lasting: true },
    ]);
  });

  it('refuses symbolic links to files outside input/ unless followSymlinks is set', async () => {
    const input = join(dir, 'input');
    await mkdir(input);
    await writeFile(join(dir, 'secret.txt'), 'root:x:0:0');
    await symlink(join(dir, 'secret.txt'), join(input, 'p.txt'));
    await symlink('../secret.txt', join(input, 'relative.txt'));
    await writeFile(join(input, 'own.txt'), 'own');

    const strict = await listInputFiles(input, 'mixed');
    expect(strict.files.map((f) => f.path)).toEqual(['own.txt']);
    expect(strict.skipped.map((e) => [e.path, e.kind])).toEqual([
      ['p.txt', 'outside'],
      ['relative.txt', 'outside'],
    ]);
    expect(strict.skipped[0]?.reason).toBe(
      `symbolic link to ${join(dir, 'secret.txt')}, outside input/ (set config.follow_symlinks: true to index it)`,
    );
    // Classified too: a refused link is not new, and one indexed before (follow_symlinks was
    // on then) leaves the index, as a clean build of the folder would not have it.
    const plan = await discoverDocuments(input, 'mixed', { 'p.txt': sha('root:x:0:0') });
    expect(plan.cycle).toEqual(['own.txt']);
    expect(plan.deleted).toEqual(['p.txt']);
    expect(plan.skipped.map((e) => e.path)).toEqual(['p.txt', 'relative.txt']);

    const followed = await listInputFiles(input, 'mixed', { followSymlinks: true });
    expect(followed.files.map((f) => [f.path, f.absPath])).toEqual([
      ['own.txt', join(input, 'own.txt')],
      ['p.txt', join(dir, 'secret.txt')],
      ['relative.txt', join(dir, 'secret.txt')],
    ]);
    expect(followed.skipped).toEqual([]);
  });

  it('an input/ reached through a symbolic link still keeps links within it', async () => {
    const real = join(dir, 'real-input');
    await mkdir(real);
    await writeFile(join(real, 'a.txt'), 'a');
    await symlink(join(real, 'a.txt'), join(real, 'alias.txt'));
    await symlink(real, join(dir, 'input'));
    const r = await listInputFiles(join(dir, 'input'), 'mixed');
    expect(r.files.map((f) => f.path)).toEqual(['a.txt', 'alias.txt']);
    expect(r.skipped).toEqual([]);
  });

  it('never reads a document through a link created after discovery', async () => {
    await put('a.txt', 'alpha');
    await writeFile(join(dir, '..', `${dir.split('/').pop()}-outside.txt`), 'outside');
    const { files } = await listInputFiles(dir, 'mixed');
    await rm(join(dir, 'a.txt'));
    await symlink(join(dir, '..', `${dir.split('/').pop()}-outside.txt`), join(dir, 'a.txt'));
    const { hashed, unreadable } = await hashFiles(files);
    await rm(join(dir, '..', `${dir.split('/').pop()}-outside.txt`));
    expect(hashed).toEqual([]);
    expect(unreadable).toEqual([
      { path: 'a.txt', reason: 'cannot read: became a symbolic link after discovery' },
    ]);
  });

  it('fails clearly when input/ is missing', async () => {
    await expect(listInputFiles(join(dir, 'nope'), 'mixed')).rejects.toThrow(/does not exist/);
  });

  it('hashes raw bytes and reports unreadable files by name', async () => {
    await put('a.txt', 'alpha');
    await put('b.txt', 'beta');
    const { files } = await listInputFiles(dir, 'txt');
    await rm(join(dir, 'b.txt'));
    const { hashed, unreadable } = await hashFiles(files);
    expect(hashed.map((h) => [h.path, h.hash])).toEqual([['a.txt', sha('alpha')]]);
    // Gone since the listing: for good (an indexed b.txt would be deleted).
    expect(unreadable).toEqual([
      { path: 'b.txt', reason: expect.stringMatching(/cannot read/), lasting: true },
    ]);
  });

  it('hashes small files read synchronously and large ones streamed alike', async () => {
    const big = 'x'.repeat((1 << 20) + 7); // past the synchronous-read limit: streamed
    await put('small.txt', 'small');
    await put('big.txt', big);
    await put('empty.txt', '');
    const { files } = await listInputFiles(dir, 'txt');
    const { hashed, unreadable } = await hashFiles(files);
    expect(unreadable).toEqual([]);
    expect(hashed.map((h) => [h.path, h.hash])).toEqual([
      ['big.txt', sha(big)],
      ['empty.txt', sha('')],
      ['small.txt', sha('small')],
    ]);
  });

  it('reports a FIFO swapped in after discovery without blocking on it', async () => {
    await put('a.txt', 'alpha');
    const { files } = await listInputFiles(dir, 'mixed');
    await rm(join(dir, 'a.txt'));
    if (spawnSync('mkfifo', [join(dir, 'a.txt')]).status !== 0) return; // no mkfifo here
    const { hashed, unreadable } = await hashFiles(files);
    expect(hashed).toEqual([]);
    expect(unreadable).toEqual([{ path: 'a.txt', reason: 'cannot read: not a regular file' }]);
  });

  it('discoverDocuments classifies the folder against the indexed map', async () => {
    await put('kept.txt', 'kept');
    await put('edited.txt', 'new words');
    await put('copy.txt', 'kept');
    await put('moved/there.txt', 'moved content');
    await put('fresh.md', 'fresh');
    await symlink(join(dir, 'gone.txt'), join(dir, 'broken.txt'));
    const indexed = {
      'kept.txt': sha('kept'),
      'edited.txt': sha('old words'),
      'here.txt': sha('moved content'),
      'removed.txt': sha('removed'),
    };
    const plan = await discoverDocuments(dir, 'mixed', indexed);
    expect(plan.found).toBe(6);
    expect(plan.indexed).toEqual(['kept.txt']);
    expect(plan.changed).toEqual(['edited.txt']);
    expect(plan.duplicate).toEqual([{ path: 'copy.txt', of: 'kept.txt' }]);
    expect(plan.renamed).toEqual([{ path: 'moved/there.txt', from: 'here.txt' }]);
    expect(plan.new).toEqual(['fresh.md']);
    expect(plan.deleted).toEqual(['removed.txt']);
    // A changed file is indexed again (its old version is removed by the Document pipeline).
    expect(plan.cycle).toEqual(['copy.txt', 'edited.txt', 'fresh.md', 'moved/there.txt']);
    expect(plan.unreadable.map((u) => u.path)).toEqual(['broken.txt']);
    expect(plan.files.map((f) => f.path)).toEqual([
      'copy.txt',
      'edited.txt',
      'fresh.md',
      'kept.txt',
      'moved/there.txt',
    ]);
  });

  it('discoverDocuments deletes an indexed file that is no document any more, keeps one it cannot read now', async () => {
    // A broken link in place of an indexed file, an indexed folder now a link to a folder
    // (never descended), an indexed .md file under a docu_type that no longer admits it: no
    // documents any more, deleted (a clean build of the folder would not have them). A file
    // that cannot be read right now (permission denied, which a test running as root cannot
    // make; an unlisted folder takes the same path) keeps its rows: see readableNow below.
    await put('kept.txt', 'kept');
    await put('notes.md', 'md');
    await symlink(join(dir, 'nowhere.txt'), join(dir, 'gone-link.txt'));
    await mkdir(join(dir, '..', `${dir.split('/').pop()}-elsewhere`), { recursive: true });
    await symlink(join(dir, '..', `${dir.split('/').pop()}-elsewhere`), join(dir, 'sub'));
    const indexed = {
      'kept.txt': sha('kept'),
      'notes.md': sha('md'),
      'gone-link.txt': sha('was here'),
      'sub/deep/a.txt': sha('a'),
      'subway.txt': sha('not under sub/'),
    };
    const plan = await discoverDocuments(dir, 'txt', indexed);
    expect(plan.unreadable).toEqual([
      { path: 'gone-link.txt', reason: 'cannot read: broken symbolic link', lasting: true },
    ]);
    expect(plan.skipped.map((s) => s.path)).toEqual(['notes.md', 'sub/']);
    expect(plan.indexed).toEqual(['kept.txt']);
    expect(plan.changed).toEqual([]);
    expect(plan.deleted).toEqual(['gone-link.txt', 'notes.md', 'sub/deep/a.txt', 'subway.txt']);
    await rm(join(dir, '..', `${dir.split('/').pop()}-elsewhere`), { recursive: true, force: true });
  });

  it('readableNow keeps out of the classification only files that cannot be read right now', () => {
    const indexed = {
      'a.txt': 'h1',
      'locked.txt': 'h2',
      'shut/b.txt': 'h3',
      'shutter.txt': 'h4',
      'link.txt': 'h5',
    };
    expect(
      readableNow(indexed, [
        { path: 'locked.txt', reason: 'cannot read: permission denied' },
        { path: 'shut/', reason: 'cannot list folder: permission denied' },
        { path: 'link.txt', reason: 'cannot read: broken symbolic link', lasting: true },
      ]),
    ).toEqual({ 'a.txt': 'h1', 'shutter.txt': 'h4', 'link.txt': 'h5' });
  });

  it('discoverDocuments leaves out a content an earlier cycle could not index, until it changes', async () => {
    await put('kept.txt', 'kept');
    await put('empty.md', '');
    await put('broken.txt', 'now readable');
    await put('copy-of-empty.md', '');
    const unindexable = new Map([
      ['empty.md', { hash: sha(''), reason: 'no text (empty document)' }],
      // Recorded for other bytes: the file changed since, so it is tried again.
      ['broken.txt', { hash: sha('binary'), reason: 'binary file (contains NUL bytes), not text' }],
      // An indexed path is classified as usual whatever the record says.
      ['kept.txt', { hash: sha('kept'), reason: 'stale entry' }],
      ['gone.md', { hash: sha(''), reason: 'no text (empty document)' }],
    ]);
    const plan = await discoverDocuments(dir, 'mixed', { 'kept.txt': sha('kept') }, { unindexable });
    expect(plan.unindexable).toEqual([
      { path: 'empty.md', hash: sha(''), reason: 'no text (empty document)' },
    ]);
    expect(plan.indexed).toEqual(['kept.txt']);
    expect(plan.new).toEqual(['broken.txt', 'copy-of-empty.md']);
    expect(plan.cycle).toEqual(['broken.txt', 'copy-of-empty.md']);
    expect(plan.found).toBe(4);
    expect(plan.files.map((f) => f.path)).toEqual(['broken.txt', 'copy-of-empty.md', 'empty.md', 'kept.txt']);
  });
});

describe('classifyDocuments', () => {
  const f = (path: string, content: string) => ({ path, hash: sha(content) });

  it('first build: everything is new, in path order', () => {
    const c = classifyDocuments([f('b.txt', 'b'), f('a.txt', 'a')], {});
    expect(c.new).toEqual(['a.txt', 'b.txt']);
    expect(c.cycle).toEqual(['a.txt', 'b.txt']);
    expect(c.indexed).toEqual([]);
    expect(c.deleted).toEqual([]);
  });

  it('nothing changed: all indexed, empty cycle', () => {
    const c = classifyDocuments([f('a.txt', 'a')], { 'a.txt': sha('a') });
    expect(c).toEqual({
      indexed: ['a.txt'],
      new: [],
      duplicate: [],
      renamed: [],
      changed: [],
      deleted: [],
      cycle: [],
    });
  });

  it('the same bytes under another format are a new document, not a copy or a rename', () => {
    // An indexed .md copied to .pdf, and a .txt of HTML source renamed to .html: each is read
    // by another loader, so each is new (and the vanished .txt deleted).
    const c = classifyDocuments([f('a.md', 'text'), f('copy.pdf', 'text'), f('page.html', '<p>x</p>')], {
      'a.md': sha('text'),
      'page.txt': sha('<p>x</p>'),
    });
    expect(c.duplicate).toEqual([]);
    expect(c.renamed).toEqual([]);
    expect(c.new).toEqual(['copy.pdf', 'page.html']);
    expect(c.deleted).toEqual(['page.txt']);
    // The same format under another extension's case or spelling still matches.
    const d = classifyDocuments([f('b.HTM', '<p>x</p>'), f('c.MD', 'text')], {
      'page.html': sha('<p>x</p>'),
      'a.md': sha('text'),
    });
    expect(d.renamed).toEqual([
      { path: 'b.HTM', from: 'page.html' },
      { path: 'c.MD', from: 'a.md' },
    ]);
  });

  it('two new files with the same unindexed content are both new', () => {
    const c = classifyDocuments([f('x.txt', 'same'), f('y.txt', 'same')], {});
    expect(c.new).toEqual(['x.txt', 'y.txt']);
    expect(c.duplicate).toEqual([]);
  });

  it('a rename wins over a duplicate and consumes the vanished path', () => {
    // a.txt and b.txt were identical; b.txt moved to c.txt.
    const c = classifyDocuments([f('a.txt', 'x'), f('c.txt', 'x')], { 'a.txt': sha('x'), 'b.txt': sha('x') });
    expect(c.renamed).toEqual([{ path: 'c.txt', from: 'b.txt' }]);
    expect(c.duplicate).toEqual([]);
    expect(c.deleted).toEqual([]);
  });

  it('several copies of a vanished file: the first is the rename, the rest duplicates of it', () => {
    const c = classifyDocuments([f('n1.txt', 'x'), f('n2.txt', 'x'), f('n3.txt', 'x')], {
      'old.txt': sha('x'),
    });
    expect(c.renamed).toEqual([{ path: 'n1.txt', from: 'old.txt' }]);
    expect(c.duplicate).toEqual([
      { path: 'n2.txt', of: 'n1.txt' },
      { path: 'n3.txt', of: 'n1.txt' },
    ]);
    expect(c.cycle).toEqual(['n1.txt', 'n2.txt', 'n3.txt']);
  });

  it('vanished paths sharing content are consumed in path order', () => {
    const c = classifyDocuments([f('z.txt', 'x')], { 'old2.txt': sha('x'), 'old1.txt': sha('x') });
    expect(c.renamed).toEqual([{ path: 'z.txt', from: 'old1.txt' }]);
    expect(c.deleted).toEqual(['old2.txt']);
  });

  it('a changed file keeps its path; a copy of its old content elsewhere is a duplicate', () => {
    // a.txt was "x" and now is "y"; b.txt is a new copy of the old "x", still indexed under a.txt.
    const c = classifyDocuments([f('a.txt', 'y'), f('b.txt', 'x')], { 'a.txt': sha('x') });
    expect(c.changed).toEqual(['a.txt']);
    expect(c.duplicate).toEqual([{ path: 'b.txt', of: 'a.txt' }]);
  });

  it('swapping two files reads as two changes, not renames', () => {
    const c = classifyDocuments([f('a.txt', 'B'), f('b.txt', 'A')], { 'a.txt': sha('A'), 'b.txt': sha('B') });
    expect(c.changed).toEqual(['a.txt', 'b.txt']);
    expect(c.renamed).toEqual([]);
    expect(c.cycle).toEqual(['a.txt', 'b.txt']);
  });

  it('ignores inherited object keys in the indexed map', () => {
    const c = classifyDocuments([f('constructor', 'x'), f('toString', 'y')], {});
    expect(c.new).toEqual(['constructor', 'toString']);
  });
});
