import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NoDocumentsError } from '../../ts/indexing/errors.js';
import { serializeDocumentHashes } from '../../ts/indexing/info-files.js';
import { checkCommittedIndex, expectedIndexFiles, runInit, STAGE_OUTPUTS } from '../../ts/indexing/init.js';
import {
  advanceState,
  type BuildState,
  initialState,
  serializeState,
  startCycle,
} from '../../ts/project/state.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'noderag-init-'));
  await mkdir(join(root, 'input'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function at(stage: string, from: BuildState = startCycle(initialState())): BuildState {
  let s = from;
  while (s.current_state !== stage) s = advanceState(s);
  return s;
}

async function put(relative: string, content = 'x'): Promise<void> {
  await mkdir(join(root, relative, '..'), { recursive: true });
  await writeFile(join(root, relative), content);
}

async function writeAllOutputs(except: string[] = []): Promise<void> {
  for (const files of Object.values(STAGE_OUTPUTS))
    for (const f of files) if (!except.includes(f)) await put(f);
}

describe('expectedIndexFiles', () => {
  it('lists the outputs of committed stages only', () => {
    expect(expectedIndexFiles(initialState())).toEqual([]);
    expect(expectedIndexFiles(at('Graph pipeline'))).toEqual([
      'cache/documents.parquet',
      'cache/text.parquet',
      'cache/text_decomposition.jsonl',
    ]);
    const finished = at('FINISHED');
    expect(expectedIndexFiles(finished)).toContain('cache/HNSW.bin');
    // In a later cycle, files of stages not yet re-run this cycle still exist from the last one.
    expect(expectedIndexFiles(startCycle(finished))).toContain('cache/high_level_elements.parquet');
  });
});

describe('checkCommittedIndex', () => {
  it('a missing table is fatal and named', async () => {
    await writeAllOutputs(['cache/entities.parquet']);
    await expect(checkCommittedIndex(root, at('FINISHED'))).rejects.toThrow(
      'index damaged: cache/entities.parquet is missing; restore it or rebuild from scratch',
    );
  });

  it('an unreadable table (per the probe) is fatal too', async () => {
    await writeAllOutputs();
    const probe = async (_abs: string, rel: string) => rel !== 'cache/text.parquet';
    await expect(checkCommittedIndex(root, at('Text pipeline'), probe)).rejects.toThrow(
      'index damaged: cache/text.parquet is unreadable',
    );
  });

  it('unusable vector-index files move a finished index back to the HNSW pipeline', async () => {
    await writeAllOutputs(['cache/HNSW.bin']);
    const finished = at('FINISHED');
    const checked = await checkCommittedIndex(root, finished);
    expect(checked).toMatchObject({ current_state: 'HNSW pipeline', last_finished_generation: 1 });
    await put('cache/HNSW.bin');
    expect(await checkCommittedIndex(root, finished)).toBe(finished);
  });
});

describe('runInit', () => {
  it('first build: initial state, new documents, a cycle to start', async () => {
    await put('input/b.txt', 'bee');
    await put('input/a.md', 'ay');
    const init = await runInit(root, { docuType: 'mixed' });
    expect(init.state.current_state).toBe('INIT');
    expect(init.stateChanged).toBe(false);
    expect(init.plan.new).toEqual(['a.md', 'b.txt']);
    expect(init.outlook).toMatchObject({ hasWork: true, startsCycle: true });
    expect(init.outlook.view.generation).toBe(1);
  });

  it('first build with nothing supported: "no supported documents in input/"', async () => {
    await put('input/notes.rtf');
    await expect(runInit(root, { docuType: 'mixed' })).rejects.toThrow(NoDocumentsError);
    await expect(runInit(root, { docuType: 'mixed' })).rejects.toThrow('no supported documents in input/');
  });

  it('with nothing supported, the message says what was skipped instead (the tree is not printed)', async () => {
    await put('input/notes.rtf');
    await put('input/.hidden.txt');
    await expect(runInit(root, { docuType: 'mixed' })).rejects.toThrow(
      'no supported documents in input/ (skipped 1 hidden, 1 unsupported type: .hidden.txt (hidden), notes.rtf (unsupported type .rtf))',
    );
  });

  it('finished and unchanged: nothing to do', async () => {
    await put('input/a.txt', 'ay');
    await writeAllOutputs();
    await put('info/state.json', serializeState(at('FINISHED')));
    await put(
      'info/document_hash.json',
      serializeDocumentHashes({ 'a.txt': createHash('sha256').update('ay').digest('hex') }),
    );
    const init = await runInit(root, { docuType: 'mixed' });
    expect(init.plan.indexed).toEqual(['a.txt']);
    expect(init.outlook.hasWork).toBe(false);
  });

  it('reports a rewind as a state change to persist', async () => {
    await put('input/a.txt', 'ay');
    await writeAllOutputs(['cache/id_map.parquet']);
    await put('info/state.json', serializeState(at('FINISHED')));
    const init = await runInit(root, { docuType: 'mixed' });
    expect(init.stateChanged).toBe(true);
    expect(init.state.current_state).toBe('HNSW pipeline');
    expect(init.outlook).toMatchObject({ hasWork: true, startsCycle: false });
  });

  it('an index from a newer version is refused before anything else', async () => {
    await put(
      'info/state.json',
      serializeState(initialState()).replace('"format_version": 1', '"format_version": 7'),
    );
    await expect(runInit(root, { docuType: 'mixed' })).rejects.toThrow(/format_version 7/);
  });
});
