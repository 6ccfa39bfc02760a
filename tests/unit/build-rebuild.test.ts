/**
 * The moves of `build --rebuild` (ts/indexing/rebuild.ts) on hand-made project folders, and
 * recovery from each state a kill -9 can leave: every one ends with the previous index in
 * place or the new one, never a mix, and the response cache untouched.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  moveIndexAside,
  PREVIOUS_INDEX_DIR,
  rebuildLeftovers,
  recoverRebuild,
} from '../../ts/indexing/rebuild.js';
import { advanceState, initialState, serializeState, startCycle } from '../../ts/project/state.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'noderag-rebuild-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const T = new Date('2025-01-01T00:00:00Z');
const finished = () => {
  let s = startCycle(initialState(T), T);
  while (s.current_state !== 'FINISHED') s = advanceState(s, T);
  return s;
};
const unfinished = () => advanceState(startCycle(initialState(T), T), T);

function put(rel: string, content: string): void {
  const abs = join(root, ...rel.split('/'));
  mkdirSync(join(abs, '..'), { recursive: true });
  writeFileSync(abs, content);
}

/** Every file under the root as relative path → content. */
function tree(): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const abs = join(dir, name);
      if (statSync(abs).isDirectory()) walk(abs);
      else out[relative(root, abs)] = readFileSync(abs, 'utf8');
    }
  };
  walk(root);
  return out;
}

/** A built project: index files, a staging leftover, the response cache, the log and the input. */
function oldIndex(): Record<string, string> {
  put('cache/documents.parquet', 'old documents');
  put('cache/HNSW.bin', 'old hnsw');
  put('cache/text_decomposition.jsonl', 'old decomposition');
  put('cache/response_cache/llm.jsonl', 'paid replies');
  put('cache/response_cache/embeddings.bin', 'paid vectors');
  put('info/state.json', serializeState(finished()));
  put('info/indices.json', 'old counters');
  put('info/document_hash.json', 'old hashes');
  put('info/info.log', 'log line\n');
  put('input/a.txt', 'a document');
  put('Node_config.yaml', 'config: {}\n');
  return tree();
}

const KEPT = [
  'cache/response_cache/llm.jsonl',
  'cache/response_cache/embeddings.bin',
  'info/info.log',
  'input/a.txt',
  'Node_config.yaml',
];

describe('moving the index aside', () => {
  it('leaves only the response cache, the log, the input and the config', async () => {
    const before = oldIndex();
    expect(await moveIndexAside(root)).toBe(true);
    const after = tree();
    const inPlace = Object.keys(after).filter((k) => !k.startsWith(`${PREVIOUS_INDEX_DIR}/`));
    expect(inPlace.sort()).toEqual([...KEPT].sort());
    for (const k of KEPT) expect(after[k]).toBe(before[k]);
    expect(after[`${PREVIOUS_INDEX_DIR}/info/state.json`]).toBe(before['info/state.json']);
    expect(after[`${PREVIOUS_INDEX_DIR}/cache/HNSW.bin`]).toBe('old hnsw');
  });

  it('a project with no index has nothing to move', async () => {
    put('input/a.txt', 'a');
    put('cache/response_cache/llm.jsonl', 'paid');
    expect(await moveIndexAside(root)).toBe(false);
    expect(await rebuildLeftovers(root)).toEqual([]);
  });
});

describe('recovery from every state a kill can leave', () => {
  it('killed while moving aside (before the commit rename): everything goes back', async () => {
    const before = oldIndex();
    // Half of the entries moved into the .moving folder, state.json still in place.
    mkdirSync(join(root, 'cache', '.previous-index.moving', 'cache'), { recursive: true });
    mkdirSync(join(root, 'cache', '.previous-index.moving', 'info'), { recursive: true });
    for (const rel of ['cache/HNSW.bin', 'info/indices.json']) {
      renameSync(join(root, rel), join(root, 'cache', '.previous-index.moving', rel));
    }
    expect(await recoverRebuild(root)).toBe('restored');
    expect(tree()).toEqual(before);
  });

  it('killed during the rebuild (new index unfinished): the new files go, the previous index comes back', async () => {
    const before = oldIndex();
    await moveIndexAside(root);
    put('cache/documents.parquet', 'new documents');
    put('cache/.staging/COMMIT.json', '{}');
    put('info/state.json', serializeState(unfinished()));
    put('cache/response_cache/llm.jsonl', 'paid replies and more');
    expect(await recoverRebuild(root)).toBe('restored');
    const after = tree();
    expect(after).toEqual({ ...before, 'cache/response_cache/llm.jsonl': 'paid replies and more' });
  });

  it('killed before anything new was committed (no state.json yet): the previous index comes back', async () => {
    const before = oldIndex();
    await moveIndexAside(root);
    expect(await recoverRebuild(root)).toBe('restored');
    expect(tree()).toEqual(before);
  });

  it('killed while putting the previous index back: the rest of it goes back too', async () => {
    const before = oldIndex();
    await moveIndexAside(root);
    // restorePrevious had deleted the new files and renamed the folder, then moved one entry.
    renameSync(join(root, PREVIOUS_INDEX_DIR), join(root, 'cache', '.previous-index.moving'));
    renameSync(
      join(root, 'cache', '.previous-index.moving', 'info', 'indices.json'),
      join(root, 'info', 'indices.json'),
    );
    expect(await recoverRebuild(root)).toBe('restored');
    expect(tree()).toEqual(before);
  });

  it('killed after the rebuild finished (new index searchable): the previous index is dropped', async () => {
    oldIndex();
    await moveIndexAside(root);
    put('cache/documents.parquet', 'new documents');
    put('info/state.json', serializeState(finished()));
    const newIndex = tree();
    expect(await recoverRebuild(root)).toBe('dropped');
    const after = tree();
    expect(after).toEqual(
      Object.fromEntries(Object.entries(newIndex).filter(([k]) => !k.startsWith(`${PREVIOUS_INDEX_DIR}/`))),
    );
    expect(after['cache/documents.parquet']).toBe('new documents');
    expect(await rebuildLeftovers(root)).toEqual([]);
  });

  it('killed while deleting the previous index: the deletion finishes', async () => {
    oldIndex();
    await moveIndexAside(root);
    put('info/state.json', serializeState(finished()));
    renameSync(join(root, PREVIOUS_INDEX_DIR), join(root, 'cache', '.previous-index.delete'));
    expect(await recoverRebuild(root)).toBe('dropped');
    expect(existsSync(join(root, 'cache', '.previous-index.delete'))).toBe(false);
    expect(await rebuildLeftovers(root)).toEqual([]);
  });

  it('nothing pending is nothing to do', async () => {
    const before = oldIndex();
    expect(await recoverRebuild(root)).toBe('none');
    expect(tree()).toEqual(before);
  });
});
