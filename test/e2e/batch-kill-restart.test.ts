import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNUITY, PRICE, killDuringVoucherCall, startKillScene, type KillScene } from '../support/batch-kill.js';

/**
 * `kill -9` of `tollbooth serve` (the built CLI, SQLite) while a voucher call holds its channel, then a restart on
 * the same machine: the restarted server knows the killed process is gone (its claim and reservation name it), so
 * it decides the lost call's claim and frees the channel at once — with a lease and a verify timeout far longer
 * than the test, nothing here waits for them. (test/e2e/batch-kill-reservation.test.ts: the reservation's lease.)
 */
const LEASE_SECONDS = 600;
const VERIFY_TIMEOUT_MS = 60_000;

let scene: KillScene;

beforeAll(async () => {
  scene = await startKillScene({ leaseSeconds: LEASE_SECONDS, verifyTimeoutMs: VERIFY_TIMEOUT_MS });
}, 120_000);

afterAll(async () => {
  await scene?.stop();
});

describe('a restart on the same machine after kill -9 while a voucher call holds its channel', () => {
  it('decides the killed call at once: its voucher pays the retry and the channel takes the next calls, without waiting for the lease', async () => {
    await killDuringVoucherCall(scene);

    const left = await scene.stored();
    // Both the claim and the reservation name the killed process, and would hold for minutes by the clock.
    expect(left.channel.pendingRequest?.owner).toMatch(/^proc1:/);
    expect(left.channel.pendingRequest!.expiresAt).toBeGreaterThan(Date.now() + 60_000);
    expect(left.claims).toMatchObject([{ owner: left.channel.pendingRequest!.owner }]);

    const second = await scene.serve();
    // The client sends the lost call's voucher again, then pays on: each paid and answered, none told to wait.
    for (let i = 0; i < 3; i++) expect((await scene.post(second.url, '/api/annuity', ANNUITY)).status).toBe(200);
    second.child.kill('SIGTERM');
    await second.exited;

    const after = await scene.stored();
    expect(after.channel.chargedCumulativeAmount).toBe((4n * PRICE).toString());
    expect(after.channel.pendingRequest).toBeUndefined();
    expect(after.claims).toEqual([]);
    // The killed call's claim ended as failed (nothing was charged for it), its voucher then paying the retry.
    expect(after.abandoned).toMatchObject([{ tool: 'perp-klines', status: 'failed' }]);
  }, 120_000);
});
