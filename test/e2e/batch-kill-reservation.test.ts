import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNUITY, PRICE, killDuringVoucherCall, startKillScene, type KillScene } from '../support/batch-kill.js';

/**
 * `kill -9` of `tollbooth serve` (the built CLI, SQLite) while a voucher call holds its channel (its upstream request
 * held by a proxy): the dead process's reservation lapses within BATCH_RESERVATION_LEASE, not the scheme's 300 s —
 * what decides for a holder that cannot be judged (another machine or container) — and once it lapsed, a restarted
 * server takes the same channel's next calls. (test/e2e/batch-kill-restart.test.ts: a holder judged gone at once.)
 */
const LEASE_SECONDS = 2;
/** FACILITATOR_TIMEOUT_MS: with the lease, how old a voucher's claim must be before a retry may decide it. */
const VERIFY_TIMEOUT_MS = 2000;

let scene: KillScene;

beforeAll(async () => {
  scene = await startKillScene({ leaseSeconds: LEASE_SECONDS, verifyTimeoutMs: VERIFY_TIMEOUT_MS });
}, 120_000);

afterAll(async () => {
  await scene?.stop();
});

describe('kill -9 while a voucher call holds its channel', () => {
  it('leaves a reservation that lapses within one lease, after which a restarted server takes the channel’s calls', async () => {
    const killedAt = await killDuringVoucherCall(scene);

    const { channel: left } = await scene.stored();
    expect(left.chargedCumulativeAmount).toBe(PRICE.toString());
    expect(left.pendingRequest).toMatchObject({ signedMaxClaimable: (2n * PRICE).toString() });
    // Renewed at most one lease before the process died: never the scheme's 300 s.
    expect(left.pendingRequest!.expiresAt).toBeLessThanOrEqual(killedAt + LEASE_SECONDS * 1000);
    // Once the reservation lapsed and the dead call's claim is older than a live call can be without its channel
    // (verify timeout + one lease), nothing holds the channel any more, whoever judges it.
    const free = Math.max(left.pendingRequest!.expiresAt, killedAt + VERIFY_TIMEOUT_MS + LEASE_SECONDS * 1000);
    await new Promise((resolve) => setTimeout(resolve, free + 100 - Date.now()));

    const second = await scene.serve();
    // The client sends the lost call's voucher again: the claim left by the dead call is decided by the channel
    // (never charged: released) and the voucher pays this call; then two more.
    for (let i = 0; i < 3; i++) expect((await scene.post(second.url, '/api/annuity', ANNUITY)).status).toBe(200);
    second.child.kill('SIGTERM');
    await second.exited;
    const { channel, abandoned } = await scene.stored();
    expect(channel.chargedCumulativeAmount).toBe((4n * PRICE).toString());
    expect(channel.pendingRequest).toBeUndefined();
    // The dead call's claim ended as failed (nothing was charged for it), its voucher then paying the retry.
    expect(abandoned).toMatchObject([{ tool: 'perp-klines', status: 'failed' }]);
  }, 120_000);
});
