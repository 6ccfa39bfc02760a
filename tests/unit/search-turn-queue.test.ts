import { describe, expect, it } from 'vitest';
import { TurnQueue } from '../../ts/search/turn-queue.js';

describe('TurnQueue (retrievals first come, first served, one per event-loop turn)', () => {
  it('lets the callers go in the order they came, each in a turn of its own', async () => {
    const turns = new TurnQueue();
    const order: string[] = [];
    const callers = ['A', 'B', 'C'].map(async (name) => {
      await turns.turn();
      order.push(name);
    });
    // Queued after the three: it runs between the first turn and the second, which it could
    // not if the queue let every waiting caller go in one turn.
    const other = new Promise<void>((resolve) =>
      setImmediate(() => {
        order.push('other work');
        resolve();
      }),
    );
    await Promise.all([...callers, other]);
    expect(order).toEqual(['A', 'other work', 'B', 'C']);
  });

  it('starts again after it has drained', async () => {
    const turns = new TurnQueue();
    const order: number[] = [];
    await turns.turn();
    order.push(1);
    await Promise.all(
      [2, 3].map(async (n) => {
        await turns.turn();
        order.push(n);
      }),
    );
    await turns.turn();
    order.push(4);
    expect(order).toEqual([1, 2, 3, 4]);
  });

  it('does not let a caller go in the turn it asked in', async () => {
    const turns = new TurnQueue();
    let went = false;
    const waiting = turns.turn().then(() => {
      went = true;
    });
    await Promise.resolve();
    await Promise.resolve();
    expect(went).toBe(false);
    await waiting;
    expect(went).toBe(true);
  });
});

describe('TurnQueue under constant load', () => {
  it('keeps the order and lets no caller wait forever when it never drains', async () => {
    const turns = new TurnQueue();
    const order: number[] = [];
    let next = 0;
    // Each caller, in its turn, brings the next one: the queue holds two callers at all times.
    const caller = async (n: number): Promise<void> => {
      await turns.turn();
      order.push(n);
      expect(turns.waiting).toBeLessThanOrEqual(2);
      if (next < 5000) void caller(next++);
    };
    await Promise.all([caller(next++), caller(next++)]);
    // Bounded, so a caller lost by the queue fails the test instead of hanging it.
    for (let t = 0; t < 20_000 && order.length < 5000; t++) await new Promise((r) => setImmediate(r));
    expect(order).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  });
});
