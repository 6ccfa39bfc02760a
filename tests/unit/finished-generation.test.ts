/**
 * cache/finished/ (ts/index-io/finished-generation.ts): the last finished generation's search
 * files, kept by hard links while a build cycle replaces them.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  discardFinishedGeneration,
  FINISHED_DIR,
  finishedGenerationFiles,
  keepFinishedGeneration,
} from '../../ts/index-io/finished-generation.js';
import { writeFileAtomic } from '../../ts/project/atomic.js';

// rm() made to fail on chosen paths (a file a reader holds open, on some systems).
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  return { ...real, rm: vi.fn(real.rm) };
});

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'noderag-finished-'));
  await mkdir(join(root, 'cache'));
  await writeFile(join(root, 'cache', 'text.parquet'), 'generation 1 text');
  await writeFile(join(root, 'cache', 'HNSW.bin'), 'generation 1 vectors');
  await writeFile(join(root, 'cache', 'documents.parquet'), 'generation 1 documents');
});
afterEach(async () => {
  vi.mocked(rm).mockRestore();
  await rm(root, { recursive: true, force: true });
});

describe('the kept finished generation', () => {
  it('keeps the old contents while the build renames new files over the originals', async () => {
    expect(await keepFinishedGeneration(root, 1)).toBeNull();
    const files = (await finishedGenerationFiles(root, 1))!;
    // Every search file maps into the set; those the generation did not have do not exist
    // there (read from cache/, they would be the cycle's).
    expect(files.get('cache/graph_delta.json')).toBe(join(root, FINISHED_DIR, 'graph_delta.json'));
    const present = [];
    for (const [relative, path] of files) if (await stat(path).catch(() => null)) present.push(relative);
    expect(present.sort()).toEqual(['cache/HNSW.bin', 'cache/documents.parquet', 'cache/text.parquet']);
    // A hard link: no second copy on disk.
    expect((await stat(join(root, 'cache', 'text.parquet'))).nlink).toBe(2);
    await writeFileAtomic(join(root, 'cache', 'text.parquet'), 'generation 2 text');
    expect(await readFile(files.get('cache/text.parquet')!, 'utf8')).toBe('generation 1 text');
    expect(await readFile(join(root, 'cache', 'text.parquet'), 'utf8')).toBe('generation 2 text');
  });

  it('is used only for the generation it names, and only when complete', async () => {
    await keepFinishedGeneration(root, 3);
    expect(await finishedGenerationFiles(root, 2)).toBeNull();
    expect(await finishedGenerationFiles(root, 3)).not.toBeNull();
    const marker = join(root, FINISHED_DIR, 'generation.json');
    // A marker naming a file outside the kept list is not trusted.
    await writeFile(marker, JSON.stringify({ generation: 3, files: ['info/state.json'] }));
    expect(await finishedGenerationFiles(root, 3)).toBeNull();
    await rm(marker);
    expect(await finishedGenerationFiles(root, 3)).toBeNull();
  });

  it('a new set replaces the old one; discarding removes it and a half-assembled one', async () => {
    await keepFinishedGeneration(root, 1);
    await writeFileAtomic(join(root, 'cache', 'text.parquet'), 'generation 2 text');
    await keepFinishedGeneration(root, 2);
    const files = (await finishedGenerationFiles(root, 2))!;
    expect(await readFile(files.get('cache/text.parquet')!, 'utf8')).toBe('generation 2 text');
    await mkdir(join(root, 'cache', '.finished.tmp'));
    await discardFinishedGeneration(root);
    await expect(stat(join(root, FINISHED_DIR))).rejects.toThrow(/ENOENT/);
    await expect(stat(join(root, 'cache', '.finished.tmp'))).rejects.toThrow(/ENOENT/);
    expect(await finishedGenerationFiles(root, 2)).toBeNull();
  });

  it('an earlier set that cannot be removed: no set is kept, the reason is returned, nothing is left half-made', async () => {
    expect(await keepFinishedGeneration(root, 1)).toBeNull();
    const real = vi.mocked(rm).getMockImplementation()!;
    vi.mocked(rm).mockImplementation(async (path, options) => {
      if (String(path).endsWith(`${sep}finished`)) throw new Error(`EBUSY: resource busy, rmdir '${path}'`);
      return real(path, options);
    });
    expect(await keepFinishedGeneration(root, 2)).toMatch(/EBUSY/);
    expect(await finishedGenerationFiles(root, 2)).toBeNull();
    await expect(stat(join(root, 'cache', '.finished.tmp'))).rejects.toThrow(/ENOENT/);
    // The earlier set names an older generation: a cycle of this one never reads it.
    expect(await finishedGenerationFiles(root, 1)).not.toBeNull();
  });

  it('a marker that cannot be read is an error, not "no set" (search would read the cycle)', async () => {
    expect(await keepFinishedGeneration(root, 1)).toBeNull();
    const marker = join(root, FINISHED_DIR, 'generation.json');
    await rm(marker);
    await mkdir(marker);
    await expect(finishedGenerationFiles(root, 1)).rejects.toThrow(
      /^cannot read cache\/finished\/generation.json \(the finished generation kept while a build runs\): EISDIR/,
    );
  });
});
