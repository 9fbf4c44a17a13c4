import { describe, expect, it } from 'vitest';
import { parseRetryAfter, sleep } from '../../src/providers/attempt.js';

describe('parseRetryAfter', () => {
  it('reads delta seconds and HTTP dates', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
  });
});

describe('sleep', () => {
  it('rejects with the reason when its signal aborts first', async () => {
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort(new Error('caller left'));
    await expect(waiting).rejects.toThrow('caller left');
    await expect(sleep(1, AbortSignal.abort(new Error('already gone')))).rejects.toThrow('already gone');
  });
});
