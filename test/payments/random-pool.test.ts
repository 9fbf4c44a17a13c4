import { describe, expect, it } from 'vitest';
import { randomText } from '../../src/payments/random-pool.js';

describe('the random pool', () => {
  it('hands out fresh bytes every time, across refills of its block, in the encoding asked for', () => {
    const drawn = Array.from({ length: 400 }, () => randomText(32, 'hex')); // 12,800 bytes: three refills
    expect(new Set(drawn).size).toBe(drawn.length);
    for (const text of drawn) expect(text).toMatch(/^[0-9a-f]{64}$/);
    expect(randomText(16, 'base64url')).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('serves a draw larger than what is left in the block from a new block', () => {
    randomText(4000, 'hex');
    expect(randomText(200, 'hex')).toMatch(/^[0-9a-f]{400}$/);
  });
});
