/**
 * Checksums of the committed index (issue 18 item 1): every commit records the SHA-256 of the
 * files it puts under cache/ in cache/checksums.json, and INIT compares them, so a single
 * flipped byte is found at the start of a build. Damaged vector-index files are moved aside
 * and rebuilt from the stored vectors; any other damaged file stops the build, named, with
 * the way to recover.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHECKSUMS_FILE, readChecksums, verifyCommittedFiles } from '../../ts/index-io/checksums.js';
import { StageCommit } from '../../ts/indexing/commit.js';
import { checkCommittedIndexFiles, STAGE_OUTPUTS } from '../../ts/indexing/init.js';
import { advanceState, type BuildState, initialState, startCycle } from '../../ts/project/state.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'noderag-checksums-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function at(stage: string, from: BuildState = startCycle(initialState())): BuildState {
  let s = from;
  while (s.current_state !== stage) s = advanceState(s);
  return s;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** Every stage's outputs, committed stage by stage as the pipeline does. */
async function commitAllOutputs(): Promise<void> {
  for (const files of Object.values(STAGE_OUTPUTS)) {
    if (files.length === 0) continue;
    const commit = await StageCommit.begin(root);
    for (const f of files) await commit.put(f, `content of ${f}`);
    await commit.put('info/state.json', '{}');
    await commit.commit();
  }
}

async function flipByte(relative: string, at = 3): Promise<void> {
  const path = join(root, relative);
  const bytes = await readFile(path);
  bytes[at] = bytes[at]! ^ 0x01;
  await writeFile(path, bytes);
}

describe('checksums recorded at commit', () => {
  it('every commit records its cache/ files and keeps those of earlier commits', async () => {
    await commitAllOutputs();
    const recorded = await readChecksums(root);
    const all = Object.values(STAGE_OUTPUTS).flat();
    expect([...recorded.keys()].sort()).toEqual([...all].sort());
    for (const f of all) {
      expect(recorded.get(f)).toEqual({ sha256: sha(`content of ${f}`), size: `content of ${f}`.length });
    }
    // state.json is not recorded (it is also written outside commits).
    expect(recorded.has('info/state.json')).toBe(false);
    expect(existsSync(join(root, CHECKSUMS_FILE))).toBe(true);
  });
});

describe('INIT checks the recorded checksums', () => {
  it('an intact index passes', async () => {
    await commitAllOutputs();
    const check = await checkCommittedIndexFiles(root, at('FINISHED'));
    expect(check.state.current_state).toBe('FINISHED');
    expect(check.repaired).toEqual([]);
  });

  it('one flipped byte in a table is found and named, with the way to recover', async () => {
    await commitAllOutputs();
    await flipByte('cache/entities.parquet');
    // The probe (footer check) would let it through: only the checksum sees it.
    const probe = async () => true;
    await expect(checkCommittedIndexFiles(root, at('FINISHED'), probe)).rejects.toThrow(
      /index damaged: cache\/entities\.parquet is damaged \(its SHA-256 differs.*noderag build --rebuild/,
    );
  });

  it('a checksums.json emptied, garbled or made a folder, or gone beside the graph snapshot, is damage, not "no checks"', async () => {
    await commitAllOutputs();
    await flipByte('cache/text.parquet');
    const path = join(root, CHECKSUMS_FILE);
    const whole = await readFile(path);
    const expectDamaged = (reason: RegExp) =>
      expect(checkCommittedIndexFiles(root, at('FINISHED'), async () => true)).rejects.toThrow(reason);
    await writeFile(path, '');
    await expectDamaged(
      /index damaged: cache\/checksums\.json is empty; without it the index files cannot be checked: .*--rebuild/,
    );
    await writeFile(path, '{"version": 1, "fil');
    await expectDamaged(/cache\/checksums\.json is not a checksums file/);
    await rm(path);
    await mkdir(path);
    await expectDamaged(/cache\/checksums\.json is unreadable \(EISDIR\)/);
    await rm(path, { recursive: true });
    // Beside the graph snapshot (written only by versions that record checksums).
    await writeFile(join(root, 'cache', 'search_graph.bin'), 'snapshot');
    await expectDamaged(
      /cache\/checksums\.json is missing, but the index was written by commits that record it/,
    );
    await expect(verifyCommittedFiles(root, ['cache/text.parquet'])).rejects.toThrow(
      /checksums\.json is missing/,
    );
    // An index of a version before checksums (no snapshot either): the probe's checks only.
    await rm(join(root, 'cache', 'search_graph.bin'));
    expect((await checkCommittedIndexFiles(root, at('FINISHED'), async () => true)).state.current_state).toBe(
      'FINISHED',
    );
    // And the file put back: the flipped byte is found again.
    await writeFile(path, whole);
    await expectDamaged(/cache\/text\.parquet is damaged/);
  });

  for (const file of ['cache/HNSW.bin', 'cache/id_map.parquet', 'cache/hnsw_graph.parquet']) {
    it(`one flipped byte in ${file} sends the build back to the HNSW pipeline, the file moved aside`, async () => {
      await commitAllOutputs();
      await flipByte(file);
      const check = await checkCommittedIndexFiles(root, at('FINISHED'), async () => true);
      expect(check.state.current_state).toBe('HNSW pipeline');
      expect(check.repaired).toEqual([
        { file, reason: 'damaged (its SHA-256 differs from the one recorded when it was committed)' },
      ]);
      expect(existsSync(join(root, file))).toBe(false);
      expect(existsSync(join(root, `${file}.damaged`))).toBe(true);
    });
  }

  it('a missing or older record file, index counters or document hashes are found and named', async () => {
    // Files every later build reads back, each missing one taken as empty before: new
    // entities dropped (graph_delta), numbers issued again (indices), documents indexed twice.
    for (const file of ['cache/graph_delta.json', 'info/indices.json', 'info/document_hash.json']) {
      const commit = await StageCommit.begin(root);
      await commit.put(file, `generation 1 of ${file}`);
      await commit.commit();
      expect((await readChecksums(root)).has(file), file).toBe(true);
      const older = await readFile(join(root, file));
      const next = await StageCommit.begin(root);
      await next.put(file, `generation 2 of ${file}`);
      await next.commit();
      await writeFile(join(root, file), older);
      // (A first cycle's state: no stage output is expected, only what checksums.json records.)
      const state = at('Document pipeline');
      await expect(checkCommittedIndexFiles(root, state), file).rejects.toThrow(
        `index damaged: ${file} is damaged (its SHA-256 differs`,
      );
      await rm(join(root, file));
      await expect(checkCommittedIndexFiles(root, state), file).rejects.toThrow(
        `index damaged: ${file} is missing`,
      );
      await rm(join(root, CHECKSUMS_FILE));
    }
  });

  it('a reader checking files while a commit is applied waits for it instead of calling it damage', async () => {
    await commitAllOutputs();
    const file = 'cache/entities.parquet';
    const good = await readFile(join(root, file));
    // Mid-commit: COMMIT.json pending, the file not yet renamed into place.
    await mkdir(join(root, 'cache/.staging'), { recursive: true });
    await writeFile(join(root, 'cache/.staging/COMMIT.json'), '{}');
    await writeFile(join(root, file), 'the previous generation');
    const finish = setTimeout(async () => {
      await writeFile(join(root, file), good);
      await rm(join(root, 'cache/.staging/COMMIT.json'));
    }, 150);
    await expect(verifyCommittedFiles(root, [file])).resolves.toBeUndefined();
    clearTimeout(finish);
    // Damage with no commit under way is reported, naming the file.
    await flipByte(file);
    await expect(verifyCommittedFiles(root, [file])).rejects.toThrow(`index damaged: ${file} is damaged`);
    // An optional file is checked only when recorded.
    await expect(verifyCommittedFiles(root, [], ['cache/not-written.json'])).resolves.toBeUndefined();
  });

  it('a file of another size is reported with both sizes', async () => {
    await commitAllOutputs();
    await writeFile(join(root, 'cache/text.parquet'), 'short');
    await expect(checkCommittedIndexFiles(root, at('FINISHED'))).rejects.toThrow(
      /cache\/text\.parquet is damaged \(5 bytes, \d+ when it was committed\)/,
    );
  });

  it('an index without recorded checksums (an older version) falls back to the probe', async () => {
    await commitAllOutputs();
    await rm(join(root, CHECKSUMS_FILE));
    await flipByte('cache/entities.parquet');
    // Not seen without checksums when the probe accepts it …
    expect((await checkCommittedIndexFiles(root, at('FINISHED'), async () => true)).repaired).toEqual([]);
    // … and reported as unreadable when the probe refuses it.
    const probe = async (_abs: string, rel: string) => rel !== 'cache/entities.parquet';
    await expect(checkCommittedIndexFiles(root, at('FINISHED'), probe)).rejects.toThrow(
      'index damaged: cache/entities.parquet is unreadable',
    );
  });
});
