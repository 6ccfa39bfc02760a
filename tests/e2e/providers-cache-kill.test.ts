/**
 * Crash safety of the response cache: a writer process is killed with SIGKILL while it
 * appends as fast as it can; on reopening, every entry it wrote is intact, at most the one
 * being written is lost, and new entries append cleanly after the repaired tail.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ResponseCache } from '../../ts/llm/response-cache.js';
import { embeddingKey, replyKey, replyValue, WRITER_DIM } from '../helpers/fake-providers/cache-writer.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'noderag-cache-kill-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function writeUntilKilled(minEntries: number): Promise<number> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, '../helpers/fake-providers/cache-writer.ts'), dir],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let reported = -1;
  await new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`writer exited early with ${code}`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (s: string) => {
      for (const line of s.split('\n')) if (line) reported = Number(line);
      if (reported >= minEntries) {
        child.removeAllListeners('exit');
        child.kill('SIGKILL');
        child.on('exit', () => resolve());
      }
    });
  });
  return reported;
}

it('a SIGKILL mid-write loses at most the entry being written', async () => {
  const reported = await writeUntilKilled(600);
  const cache = ResponseCache.open(dir);
  expect(cache.loadReport.skippedLines).toBe(0);
  // Entries are a complete prefix 0..k-1: all of them intact, nothing after a gap.
  const replies = cache.replyCount;
  const vectors = cache.embeddingCount;
  expect(replies).toBeGreaterThan(reported);
  expect(Math.abs(replies - vectors)).toBeLessThanOrEqual(1);
  for (let i = 0; i < replies; i++) expect(cache.getReply(replyKey(i))).toEqual(replyValue(i));
  for (const i of [0, Math.floor(vectors / 2), vectors - 1]) {
    const v = cache.getEmbedding(embeddingKey(i)) as Float32Array;
    expect(v).toHaveLength(WRITER_DIM);
    expect(v.every((x) => x === i)).toBe(true);
  }
  expect(cache.getReply(replyKey(replies))).toBeUndefined();
  // Appending after the repaired tail works and survives a reopen.
  cache.putReply(replyKey(1e9), { provider: 'openai', model: 'm', kind: 'chat' }, 'after the crash');
  cache.close();
  const again = ResponseCache.open(dir);
  expect(again.getReply(replyKey(1e9))).toBe('after the crash');
  expect(again.replyCount).toBe(replies + 1);
  expect(again.loadReport.truncatedBytes).toEqual({ replies: 0, embeddings: 0 });
  again.close();
});
