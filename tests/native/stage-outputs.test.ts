/**
 * StageOutputs.appendToCommitted (ts/indexing/stages/outputs.ts): the committed file and the
 * appended lines staged as one file, committed like any other (the Text stage's
 * text_decomposition.jsonl when its new records all come after the others).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { recoverStaging, StageCommit } from '../../ts/indexing/commit.js';
import { StageOutputs } from '../../ts/indexing/stages/outputs.js';
import { resolveInProject } from '../../ts/project/layout.js';
import { scratchDir } from '../helpers/scratch.js';

const FILE = 'cache/text_decomposition.jsonl';
let root: string;
beforeEach(async () => {
  root = scratchDir('noderag-stage-outputs-');
  await mkdir(join(root, 'cache'));
});

async function append(suffix: string): Promise<string> {
  await recoverStaging(root);
  const commit = await StageCommit.begin(root);
  await new StageOutputs(commit).appendToCommitted(FILE, suffix);
  await commit.commit({ deferGraphSnapshot: true });
  return readFile(resolveInProject(root, FILE), 'utf8');
}

describe('appendToCommitted', () => {
  it('stages the committed file followed by the lines, or the lines alone when there is none', async () => {
    expect(await append('{"a":1}\n')).toBe('{"a":1}\n');
    expect(await append('{"b":2}\n{"c":3}\n')).toBe('{"a":1}\n{"b":2}\n{"c":3}\n');
  });

  it('starts the lines on their own when the committed file lacks its last newline', async () => {
    await writeFile(resolveInProject(root, FILE), '{"a":1}');
    expect(await append('{"b":2}\n')).toBe('{"a":1}\n{"b":2}\n');
  });
});
