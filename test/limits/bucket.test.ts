import { describe, expect, it } from 'vitest';
import { MemoryBuckets, takeFrom } from '../../src/limits/bucket.js';

const T = 1_700_000_000_000;
const rate = { capacity: 5, refillPerSecond: 2 }; // one token every 500 ms

describe('a token bucket in GCRA form', () => {
  it('starts full: a new bucket gives its capacity at once, then says how long until the next token', () => {
    let tat: number | undefined;
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const taken = takeFrom(tat, T, rate);
      if (taken.type !== 'taken') throw new Error(`request ${i} was limited`);
      tat = taken.tat;
      remaining.push(taken.remaining);
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    expect(takeFrom(tat, T, rate)).toEqual({ type: 'limited', retryAfterMs: 500 });
    expect(takeFrom(tat, T + 200, rate)).toEqual({ type: 'limited', retryAfterMs: 300 });
    expect(takeFrom(tat, T + 500, rate)).toMatchObject({ type: 'taken', remaining: 0 });
  });

  it('refills to its capacity and no further, however long it rested', () => {
    const used = takeFrom(undefined, T, rate);
    if (used.type !== 'taken') throw new Error('limited');
    expect(takeFrom(used.tat, T + 3_600_000, rate)).toMatchObject({ type: 'taken', remaining: 4 });
  });

  it('takes several tokens at once and refuses a cost above its capacity', () => {
    expect(takeFrom(undefined, T, rate, 5)).toMatchObject({ type: 'taken', remaining: 0 });
    expect(takeFrom(undefined, T, rate, 6).type).toBe('limited');
  });
});

describe('buckets kept in memory', () => {
  it('keeps one bucket per key', () => {
    const buckets = new MemoryBuckets();
    for (let i = 0; i < 5; i++) buckets.take('a', T, rate);
    expect(buckets.take('a', T, rate).type).toBe('limited');
    expect(buckets.take('b', T, rate)).toMatchObject({ type: 'taken', remaining: 4 });
  });

  it('sweeps buckets that are full again and keeps the others', () => {
    const buckets = new MemoryBuckets();
    buckets.take('rested', T, rate);
    for (let i = 0; i < 5; i++) buckets.take('busy', T + 400, rate);
    expect(buckets.sweep(T + 600)).toBe(1);
    expect(buckets.size).toBe(1);
    expect(buckets.take('busy', T + 600, rate).type).toBe('limited');
  });

  it('holds at most maxKeys buckets, dropping the least recently used (which starts full again)', () => {
    const buckets = new MemoryBuckets({ maxKeys: 2 });
    for (let i = 0; i < 5; i++) buckets.take('old', T, rate);
    buckets.take('new-1', T, rate);
    buckets.take('new-2', T, rate);
    expect(buckets.size).toBe(2);
    expect(buckets.take('old', T, rate)).toMatchObject({ type: 'taken', remaining: 4 });
  });
});
