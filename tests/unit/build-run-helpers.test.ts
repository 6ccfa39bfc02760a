/**
 * The run loop's helpers: results applied in input order whatever the completion order,
 * the stop rule of §4.2 (no new work, in-flight work finishes), and the progress styles.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { InterruptedError, StopSignal } from '../../ts/indexing/stages/interrupt.js';
import { mapInOrder, poolSize } from '../../ts/indexing/stages/pool.js';
import { Progress, progressStyle, unitFor } from '../../ts/indexing/stages/progress.js';

describe('mapInOrder', () => {
  it('returns results in input order when later items finish first', async () => {
    const stop = new StopSignal();
    const finished: number[] = [];
    const out = await mapInOrder(
      [30, 1, 20, 5],
      async (ms, i) => {
        await delay(ms);
        finished.push(i);
        return ms * 2;
      },
      { concurrency: 4, stop },
    );
    expect(out).toEqual([60, 2, 40, 10]);
    expect(finished).not.toEqual([0, 1, 2, 3]);
  });

  it('never runs more than `concurrency` at once', async () => {
    let running = 0;
    let peak = 0;
    await mapInOrder(
      Array.from({ length: 20 }, (_, i) => i),
      async () => {
        running++;
        peak = Math.max(peak, running);
        await delay(2);
        running--;
      },
      { concurrency: 3, stop: new StopSignal() },
    );
    expect(peak).toBe(3);
  });

  it('after a stop, starts nothing new, lets in-flight items finish, then throws InterruptedError', async () => {
    const stop = new StopSignal();
    const started: number[] = [];
    const completed: number[] = [];
    const run = mapInOrder(
      Array.from({ length: 10 }, (_, i) => i),
      async (i) => {
        started.push(i);
        if (i === 1) stop.stop('interrupted by SIGINT');
        await delay(10);
        completed.push(i);
      },
      { concurrency: 2, stop },
    );
    await expect(run).rejects.toBeInstanceOf(InterruptedError);
    expect(started).toEqual([0, 1]);
    expect(completed.sort()).toEqual([0, 1]);
    stop.dispose();
  });

  it('throws the first failure in input order once in-flight items settle', async () => {
    const run = mapInOrder(
      [0, 1, 2, 3],
      async (i) => {
        await delay(i === 1 ? 20 : 1);
        if (i === 1 || i === 2) throw new Error(`item ${i}`);
        return i;
      },
      { concurrency: 4, stop: new StopSignal() },
    );
    await expect(run).rejects.toThrow('item 1');
  });

  it('aborts the shared signal only after the grace period', async () => {
    const stop = new StopSignal();
    stop.stop('interrupted by SIGTERM', 30);
    expect(stop.stopping).toBe(true);
    expect(stop.signal.aborted).toBe(false);
    expect(() => stop.check()).toThrow('interrupted by SIGTERM');
    await delay(60);
    expect(stop.signal.aborted).toBe(true);
  });

  it('sizes pools by the rate limit', () => {
    expect(poolSize(40, false)).toBe(40);
    expect(poolSize(1.99, false)).toBe(1);
    expect(poolSize(0.5, false)).toBe(1);
    expect(poolSize(10_000, false)).toBe(256);
  });
});

describe('progress', () => {
  function sink(isTTY: boolean) {
    const chunks: string[] = [];
    return { out: { isTTY, write: (s: string) => chunks.push(s) }, text: () => chunks.join('') };
  }

  it('chooses plain lines off a terminal, and rich or tqdm on one', () => {
    expect(progressStyle({ write: () => true, isTTY: false }, { useRich: true, useTqdm: true })).toBe(
      'plain',
    );
    expect(progressStyle({ write: () => true, isTTY: true }, { useRich: true, useTqdm: true }, {})).toBe(
      'rich',
    );
    // NO_COLOR: a live line without colours.
    expect(
      progressStyle({ write: () => true, isTTY: true }, { useRich: true, useTqdm: false }, { NO_COLOR: '1' }),
    ).toBe('tqdm');
    expect(progressStyle({ write: () => true, isTTY: true }, { useRich: false, useTqdm: true })).toBe('tqdm');
    expect(progressStyle({ write: () => true, isTTY: true }, { useRich: false, useTqdm: false })).toBe(
      'plain',
    );
  });

  it('a count of one takes the singular unit', () => {
    expect(['documents', 'entities', 'batches', 'chunks', 'communities'].map((u) => unitFor(1, u))).toEqual([
      'document',
      'entity',
      'batch',
      'chunk',
      'community',
    ]);
    expect(unitFor(2, 'documents')).toBe('documents');
    const { out, text } = sink(false);
    new Progress(out, 'plain').stage('Document pipeline', 1, 8).begin(1, 'documents');
    expect(text()).toContain('  1 document to process\n');
  });

  it('plain style writes whole lines without escape codes (progress lines at most every 5 s)', () => {
    const s = sink(false);
    const stage = new Progress(s.out, 'plain').stage('Text pipeline', 2, 8);
    stage.begin(3, 'chunks');
    stage.update(1, 'calls 1');
    stage.update(3, 'calls 3');
    stage.finish('0.1 s', '3 chunks');
    expect(s.text()).toBe('[2/8] Text pipeline\n  3 chunks to process\n  finished in 0.1 s (3 chunks)\n');
  });

  it('tqdm style redraws one line with a bar and ends it cleanly', () => {
    const s = sink(true);
    const stage = new Progress(s.out, 'tqdm').stage('Embedding pipeline', 5, 8);
    stage.begin(4, 'vectors');
    stage.update(2);
    stage.update(4);
    stage.finish('0.2 s', '');
    const text = s.text();
    expect(text).toContain('\r\x1b[K   50%|###############               | 2/4 vectors');
    expect(text).toContain('100%|##############################| 4/4 vectors');
    expect(text.endsWith('\r\x1b[K  finished in 0.2 s\n')).toBe(true);
  });
});
