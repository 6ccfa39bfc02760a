import { describe, expect, it } from 'vitest';
import { LeastConnections } from '../../ts/cli/least-connections.js';

describe('LeastConnections', () => {
  it('alternates while the workers are even and fills the emptier one first', () => {
    const pool = new LeastConnections<string>();
    pool.add('a');
    pool.add('b');
    expect(Array.from({ length: 6 }, () => pool.pick())).toEqual(['a', 'b', 'a', 'b', 'a', 'b']);
    expect(pool.counts()).toEqual([3, 3]);
    // Three of a's connections close: the next three go to a, whatever the turn was.
    for (let i = 0; i < 3; i++) pool.closed('a');
    expect(Array.from({ length: 3 }, () => pool.pick())).toEqual(['a', 'a', 'a']);
    expect(pool.counts()).toEqual([3, 3]);
  });

  it('leaves out a removed worker, counts a new one from zero, ignores stray closes', () => {
    const pool = new LeastConnections<string>();
    expect(pool.pick()).toBeUndefined();
    pool.add('a');
    pool.add('b');
    pool.pick();
    pool.pick();
    pool.remove('a');
    expect([pool.pick(), pool.pick()]).toEqual(['b', 'b']);
    pool.add('c'); // a replacement worker
    expect([pool.pick(), pool.pick(), pool.pick()]).toEqual(['c', 'c', 'c']);
    pool.closed('a'); // a close reported by a worker already gone
    pool.closed('c');
    pool.closed('c');
    pool.closed('c');
    pool.closed('c'); // more closes than connections: never below zero
    expect(pool.counts()).toEqual([3, 0]);
    pool.add('b'); // adding twice keeps the count
    expect(pool.counts()).toEqual([3, 0]);
  });
});
