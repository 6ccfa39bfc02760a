import { describe, expect, it, vi } from 'vitest';
import { lineBatch } from '../../ts/server/line-batch.js';

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('lineBatch', () => {
  it('writes the lines of one turn in one write, in order, at the end of the turn', async () => {
    const writes: string[] = [];
    const batch = lineBatch({ write: (t) => writes.push(t) });
    batch.add('a');
    batch.add('b');
    expect(writes).toEqual([]);
    await turn();
    expect(writes).toEqual(['a\nb\n']);
    batch.add('c');
    await turn();
    expect(writes).toEqual(['a\nb\n', 'c\n']);
  });

  it('flush writes what is pending at once, and nothing when nothing is', async () => {
    const writes: string[] = [];
    const batch = lineBatch({ write: (t) => writes.push(t) });
    batch.flush();
    batch.add('x');
    batch.flush();
    expect(writes).toEqual(['x\n']);
    await turn();
    expect(writes).toEqual(['x\n']);
  });

  it('a batch past 64 K characters is written without waiting for the turn to end', () => {
    const writes: string[] = [];
    const batch = lineBatch({ write: (t) => writes.push(t) });
    const line = 'y'.repeat(1023);
    for (let i = 0; i < 64; i++) batch.add(line);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toBe(`${Array(64).fill(line).join('\n')}\n`);
    batch.flush();
  });

  it('with everyMs, writes the lines of several turns together, after that long', async () => {
    const writes: string[] = [];
    const batch = lineBatch({ write: (t) => writes.push(t) }, { everyMs: 300 });
    batch.add('a');
    await turn();
    batch.add('b');
    await turn();
    expect(writes).toEqual([]);
    await new Promise((r) => setTimeout(r, 600));
    expect(writes).toEqual(['a\nb\n']);
    batch.add('c');
    batch.flush();
    expect(writes).toEqual(['a\nb\n', 'c\n']);
  });

  it('clears a timer with clearTimeout and an immediate with clearImmediate only', () => {
    // clearImmediate given a timer corrupts the loop's queue of immediates: a server's
    // retrievals (one per immediate) stopped after a few requests.
    const clearImmediate = vi.spyOn(globalThis, 'clearImmediate');
    try {
      for (const options of [{ everyMs: 30 }, {}]) {
        const batch = lineBatch({ write: () => true }, options);
        batch.add('x');
        batch.flush();
      }
      for (const [arg] of clearImmediate.mock.calls) {
        expect(arg?.constructor?.name).toBe('Immediate');
      }
      expect(clearImmediate).toHaveBeenCalledTimes(1);
    } finally {
      clearImmediate.mockRestore();
    }
  });
});
