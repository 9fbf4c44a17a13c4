import { describe, expect, it } from 'vitest';
import { TtlLruCache } from '../../src/providers/cache.js';

describe('TtlLruCache', () => {
  it('forgets an entry once its TTL has passed', () => {
    let now = 1_000;
    const cache = new TtlLruCache<string>(10, () => now);
    cache.set('a', 'A', 500);
    now = 1_499;
    expect(cache.get('a')).toBe('A');
    now = 1_500;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('evicts the least recently used entry past the cap', () => {
    const cache = new TtlLruCache<number>(2);
    cache.set('a', 1, 60_000);
    cache.set('b', 2, 60_000);
    cache.get('a');
    cache.set('c', 3, 60_000);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([1, undefined, 3]);
    expect(cache.size).toBe(2);
  });

  it('stores nothing with a zero TTL or a zero cap', () => {
    const cache = new TtlLruCache<number>(2);
    cache.set('a', 1, 0);
    expect(cache.get('a')).toBeUndefined();
    const off = new TtlLruCache<number>(0);
    off.set('a', 1, 60_000);
    expect(off.get('a')).toBeUndefined();
  });
});
