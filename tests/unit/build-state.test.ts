import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IndexFileError } from '../../ts/errors.js';
import {
  advanceState,
  BUILD_STATES,
  failState,
  initialState,
  isCycleDocumentSetFixed,
  isSearchable,
  parseState,
  readState,
  rewindState,
  STAGES,
  serializeState,
  startCycle,
  withEmbedding,
  writeState,
} from '../../ts/project/state.js';

const T = new Date('2025-01-01T12:00:00.123Z');

describe('state transitions', () => {
  it('runs a first cycle from INIT through every stage to FINISHED', () => {
    let s = startCycle(initialState(T), T);
    expect(s).toMatchObject({ current_state: 'Document pipeline', generation: 1, is_incremental: false });
    const seen: string[] = [s.current_state];
    while (s.current_state !== 'FINISHED') {
      expect(isSearchable(s)).toBe(false);
      s = advanceState(s, T);
      seen.push(s.current_state);
    }
    expect(seen).toEqual(BUILD_STATES.slice(1));
    expect(STAGES).toEqual(BUILD_STATES.slice(1, -1));
    expect(s.last_finished_generation).toBe(1);
    expect(isSearchable(s)).toBe(true);
    expect(s.updated_at).toBe('2025-01-01T12:00:00Z');
  });

  it('an incremental cycle increments the generation and keeps last_finished until it finishes', () => {
    let s: ReturnType<typeof initialState> = {
      ...initialState(T),
      current_state: 'FINISHED',
      generation: 1,
      last_finished_generation: 1,
    };
    s = startCycle(s, T);
    expect(s).toMatchObject({ generation: 2, is_incremental: true, last_finished_generation: 1 });
    expect(() => startCycle(s, T)).toThrow(/cannot start a new cycle/);
    expect(() => advanceState(initialState(T), T)).toThrow(/no stage is running/);
  });

  it('errors keep the state; the next commit clears them', () => {
    const running = advanceState(startCycle(initialState(T), T), T); // Text pipeline
    const failed = failState(running, 'ERROR', 'openai returned 503 after 6 attempts', T);
    expect(failed).toMatchObject({ current_state: 'Text pipeline', error_type: 'ERROR' });
    expect(advanceState(failed, T)).toMatchObject({
      current_state: 'Graph pipeline',
      error_type: 'NO_ERROR',
      error_message: null,
    });
  });

  it('the cycle document set is fixed once the Document pipeline committed', () => {
    const doc = startCycle(initialState(T), T);
    expect(isCycleDocumentSetFixed(doc)).toBe(false);
    expect(isCycleDocumentSetFixed(advanceState(doc, T))).toBe(true);
    expect(isCycleDocumentSetFixed(initialState(T))).toBe(false);
  });

  it('rewinds to the HNSW pipeline but never forward', () => {
    const finished = {
      ...initialState(T),
      current_state: 'FINISHED' as const,
      generation: 1,
      last_finished_generation: 1,
    };
    expect(rewindState(finished, 'HNSW pipeline', T)).toMatchObject({
      current_state: 'HNSW pipeline',
      last_finished_generation: 1,
    });
    expect(() => rewindState(startCycle(initialState(T), T), 'HNSW pipeline', T)).toThrow(/forward/);
  });
});

describe('state.json format', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'noderag-state-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('round-trips with lower-case keys in the documented order', async () => {
    expect(await readState(root)).toBeNull();
    const s = withEmbedding(
      failState(startCycle(initialState(T), T), 'INTERRUPTED', 'stopped by SIGINT', T),
      { provider: 'openai', model: 'text-embedding-3-small', dim: 1536 },
      T,
    );
    await writeState(root, s);
    const text = await readFile(join(root, 'info', 'state.json'), 'utf8');
    expect(Object.keys(JSON.parse(text))).toEqual([
      'format_version',
      'current_state',
      'error_type',
      'error_message',
      'is_incremental',
      'generation',
      'last_finished_generation',
      'embedding',
      'updated_at',
    ]);
    expect(text).toBe(serializeState(s));
    expect(await readState(root)).toEqual(s);
    // No temp file is left behind by the atomic write.
    expect(await readdir(join(root, 'info'))).toEqual(['state.json']);
  });

  it('refuses an unknown format_version with a clear message', async () => {
    const text = serializeState(initialState(T)).replace('"format_version": 1', '"format_version": 2');
    expect(() => parseState(text)).toThrow(
      'info/state.json has format_version 2, but this version of noderag reads only format_version 1',
    );
    try {
      parseState(text);
    } catch (error) {
      expect(error).toBeInstanceOf(IndexFileError);
      expect((error as IndexFileError).code).toBe('index_format_unsupported');
    }
  });

  it("recognises the original NodeRAG's capitalised keys", () => {
    expect(() =>
      parseState('{"Current_state": "FINISHED", "Error_type": "NO_ERROR", "Is_incremental": false}'),
    ).toThrow(/original NodeRAG's keys/);
  });

  it('names every invalid key', async () => {
    const bad = {
      ...JSON.parse(serializeState(initialState(T))),
      current_state: 'Graph',
      generation: -1,
      embedding: { provider: 'x', model: '', dim: 0 },
    };
    await mkdir(join(root, 'info'));
    await writeFile(join(root, 'info', 'state.json'), JSON.stringify(bad));
    await expect(readState(root)).rejects.toThrow(
      /current_state: expected one of INIT, .*; generation: expected an integer ≥ 0, got -1; embedding\.model: .*; embedding\.dim/,
    );
    expect(() => parseState('not json')).toThrow(/info\/state\.json is not valid JSON/);
    // Read from a project, the way out names its folder (not a placeholder).
    await writeFile(join(root, 'info', 'state.json'), '[1]');
    await expect(readState(root)).rejects.toThrow(`\`noderag build -f ${root} --rebuild\``);
    // A folder in its place is named as such (it was a bare EISDIR naming no file).
    await rm(join(root, 'info', 'state.json'));
    await mkdir(join(root, 'info', 'state.json'));
    await expect(readState(root)).rejects.toThrow(
      `${join(root, 'info', 'state.json')} is a folder, where a file was expected`,
    );
    expect(() => parseState('{"format_version": "1"}')).toThrow(/format_version must be a positive integer/);
  });
});
