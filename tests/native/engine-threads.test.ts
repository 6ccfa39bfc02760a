/**
 * The engine threads of `noderag search --workers N` (ts/server/engine-threads.ts), with the
 * real worker threads running a fake engine (tests/fixtures/fake-engine-thread.ts): requests
 * go to the least busy thread (or a question's own, with affinity), replies keep their bytes,
 * errors their class, aborts reach the thread, model calls come back, a thread that stops is
 * replaced, and a thread that cannot start says why.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InternalError, ProviderError } from '../../ts/errors.js';
import { RESULT_JSON } from '../../ts/search/engine-types.js';
import { EngineThreadStartError, ThreadPoolEngine } from '../../ts/server/engine-threads.js';
import { statusFor } from '../../ts/server/http.js';
import type { ProviderCall } from '../../ts/server/provider-metrics.js';

const ENTRY = new URL('../fixtures/fake-engine-thread.ts', import.meta.url);

let pool: ThreadPoolEngine | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

async function start(o: { affinity?: boolean; calls?: ProviderCall[]; log?: string[] } = {}) {
  pool = await ThreadPoolEngine.start({
    entry: ENTRY,
    threads: 2,
    data: {},
    ...(o.affinity ? { affinity: true } : {}),
    ...(o.calls ? { onCall: (c: ProviderCall) => o.calls!.push(c) } : {}),
    ...(o.log ? { log: (line: string) => o.log!.push(line) } : {}),
  });
  return pool;
}

const signal = () => new AbortController().signal;
const text = (pieces: readonly Uint8Array[]) => Buffer.concat(pieces).toString('utf8');

describe('ThreadPoolEngine', () => {
  it('returns the thread’s retrieval as its JSON bytes, parsed only when read, and replays its model calls', async () => {
    const calls: ProviderCall[] = [];
    const p = await start({ calls });
    const r = await p.retrieve('who?', signal());
    const json = r[RESULT_JSON]!;
    expect(text(json.retrievalInfo)).toBe(JSON.stringify(r.retrievalInfo));
    expect(r.retrievalInfo).toMatch(/^thread [01]: who\? "quoted" é$/);
    expect(r.sources).toEqual([{ number: 1, document: 'a.txt', cited: false }]);
    expect(text([json.sources])).toBe(JSON.stringify(r.sources));
    expect(r.retrievalTokens).toBeGreaterThan(0);
    expect(calls).toEqual([{ task: 'query', provider: 'fake', inputTokens: 1, outputTokens: 2 }]);
    expect((await p.status()).generation).toBe(7);
  }, 30_000);

  it('sends each request to the least busy thread, or with affinity a question to its own thread', async () => {
    const p = await start();
    const both = await Promise.all([p.retrieve('wait', signal()), p.retrieve('wait', signal())]);
    expect(new Set(both.map((r) => r.retrievalInfo.slice(0, 8)))).toEqual(new Set(['thread 0', 'thread 1']));
    await p.close();
    const sticky = await start({ affinity: true });
    const again = [];
    for (let i = 0; i < 6; i++)
      again.push((await sticky.retrieve('the same question', signal())).retrievalInfo);
    expect(new Set(again).size).toBe(1);
  }, 30_000);

  it('keeps the class and fields of an error, so the server answers the same status', async () => {
    const p = await start();
    const e = await p.retrieve('provider', signal()).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ProviderError);
    expect((e as ProviderError).status).toBe(429);
    expect((e as ProviderError).retryable).toBe(true);
    expect(statusFor(e)).toMatchObject({ status: 502, code: 'upstream_error' });
  }, 30_000);

  it('rejects an aborted request with the signal’s reason at once, and aborts it on the thread', async () => {
    const p = await start({ affinity: true });
    const controller = new AbortController();
    const pending = p.retrieve('slow', controller.signal);
    await new Promise((r) => setTimeout(r, 100));
    const reason = new Error('client left');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    // The thread saw it (its status counts aborts; both threads are asked in turn).
    let seen = 0;
    for (let i = 0; i < 50 && seen === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      seen = Math.max((await p.status()).vectors, (await p.status()).vectors);
    }
    expect(seen).toBe(1);
  }, 30_000);

  it('streams the deltas, then the whole answer', async () => {
    const p = await start();
    const events = [];
    for await (const e of p.answerStream('why?', signal())) events.push(e);
    expect(events).toEqual([
      { type: 'delta', text: 'answer ' },
      { type: 'delta', text: 'to why?' },
      { type: 'done', result: expect.objectContaining({ response: 'answer to why?' }) },
    ]);
    expect((await p.answer('why?', signal())).response).toBe('answer to why?');
  }, 30_000);

  it('fails the requests of a thread that stops and starts a replacement', async () => {
    const log: string[] = [];
    const p = await start({ log });
    const e = await p.retrieve('exit', signal()).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InternalError);
    expect(statusFor(e).status).toBe(500);
    for (let i = 0; i < 200 && !log.some((l) => l.includes('starting a replacement')); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(log.join('\n')).toMatch(/Search thread [12] stopped \(exit code 3\); starting a replacement/);
    // Both threads answer again.
    let replies: string[] = [];
    for (let i = 0; i < 100; i++) {
      replies = (await Promise.all([p.retrieve('wait', signal()), p.retrieve('wait', signal())])).map((r) =>
        r.retrievalInfo.slice(0, 8),
      );
      if (new Set(replies).size === 2) break;
    }
    expect(new Set(replies)).toEqual(new Set(['thread 0', 'thread 1']));
  }, 30_000);

  it('a thread that cannot start rejects the start with its message and code', async () => {
    const e = await ThreadPoolEngine.start({
      entry: ENTRY,
      threads: 2,
      data: { failStart: true },
    }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EngineThreadStartError);
    expect((e as EngineThreadStartError).message).toBe('cannot serve /projects/x: the index is damaged');
    expect((e as EngineThreadStartError).exitCode).toBe(1);
  }, 30_000);
});
