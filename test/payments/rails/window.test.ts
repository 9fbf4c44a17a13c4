import { describe, expect, it } from 'vitest';
import {
  AUTHORIZATION_SKEW_SECONDS,
  checkExpiry,
  longestWindowRounds,
  longestWindowSeconds,
} from '../../../src/payments/rails/window.js';
import { EXPIRATION_TOLERANCE_LEDGERS, LEDGER_SECONDS } from '../../../src/payments/rails/stellar/network.js';

const NOW_MS = 1_800_000_000_000;
const now = BigInt(NOW_MS / 1000);

describe('the bounded authorization window', () => {
  it('takes an expiry up to maxTimeoutSeconds plus the 60 s of skew from now, and refuses one second more', () => {
    expect(AUTHORIZATION_SKEW_SECONDS).toBe(60);
    expect(longestWindowSeconds(300)).toBe(360);
    expect(checkExpiry(now + 360n, 300, '`validBefore`', NOW_MS)).toBeUndefined();
    expect(checkExpiry((now + 360n).toString(), 300, '`validBefore`', NOW_MS)).toBeUndefined();
    expect(checkExpiry(now + 361n, 300, '`validBefore`', NOW_MS)).toMatchObject({
      ok: false,
      reason: 'authorization_window_too_long',
      message: expect.stringContaining('sign an authorization that expires within 300 seconds'),
    });
  });

  it('compares absurd expiries exactly, without overflow: ten years, 2^53 + 1 and 2^256−1 are refused', () => {
    for (const expiry of [now + 315_360_000n, 2n ** 53n + 1n, (2n ** 256n - 1n).toString()])
      expect(checkExpiry(expiry, 300, '`validBefore`', NOW_MS)?.reason, String(expiry)).toBe(
        'authorization_window_too_long',
      );
    // An expiry already past is not this check's business: the facilitator refuses it as expired.
    expect(checkExpiry(0n, 300, '`validBefore`', NOW_MS)).toBeUndefined();
  });

  it('bounds Algorand windows in ~2.8 s rounds and Stellar expirations with the same skew in ledgers', () => {
    expect(longestWindowRounds(300)).toBe(129n);
    expect(longestWindowRounds(60)).toBe(43n);
    expect(EXPIRATION_TOLERANCE_LEDGERS * LEDGER_SECONDS).toBe(AUTHORIZATION_SKEW_SECONDS);
  });
});
