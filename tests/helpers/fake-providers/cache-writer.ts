/**
 * Child process for the crash test: appends replies and embeddings to a response cache as
 * fast as it can, reporting progress on stdout, until it is killed.
 * Usage: node --import tsx cache-writer.ts <dir>
 */
import { createHash } from 'node:crypto';
import { ResponseCache } from '../../../ts/llm/response-cache.js';

export function replyKey(i: number): Buffer {
  return createHash('sha256').update(`reply-${i}`).digest();
}
export function embeddingKey(i: number): Buffer {
  return createHash('sha256').update(`embedding-${i}`).digest();
}
export function replyValue(i: number): unknown {
  return { i, text: `reply ${i} `.repeat(100) };
}
export const WRITER_DIM = 1536;

if (process.argv[1]?.endsWith('cache-writer.ts') && process.argv[2]) {
  const cache = ResponseCache.open(process.argv[2], { fsyncIntervalMs: 50 });
  for (let i = 0; ; i++) {
    cache.putReply(replyKey(i), { provider: 'openai', model: 'm', kind: 'structured' }, replyValue(i));
    cache.putEmbeddings([{ key: embeddingKey(i), vector: new Float32Array(WRITER_DIM).fill(i) }]);
    if (i % 200 === 0) process.stdout.write(`${i}\n`);
  }
}
