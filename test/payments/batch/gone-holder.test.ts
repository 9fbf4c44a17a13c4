import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentPayload } from '@x402/core/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Config } from '../../../src/config/config.js';
import { ReservationLeases } from '../../../src/payments/batch/lease.js';
import type { ProcessOwner } from '../../../src/payments/batch/owner.js';
import { Reconciler } from '../../../src/payments/ledger/reconcile.js';
import { createLogger } from '../../../src/shared/log.js';
import { SqliteStore } from '../../../src/store/dialects/sqlite/store.js';
import type { ChannelRecord } from '../../../src/store/channels.js';
import { channelRecord, RECORD_ID } from '../../support/batch-channel.js';

/**
 * What a holder known to be gone (src/payments/batch/owner.ts: a killed process on this machine) still holds: its
 * channel reservation has lapsed for the next call's decision (src/payments/batch/lease.ts), and its voucher claim is
 * decided by the channel at once however young (src/payments/ledger/reconcile.ts). A holder that runs, or one that
 * cannot be judged, keeps both until the lease and the claim's age say otherwise.
 */
const ID = RECORD_ID;
const PAYER = channelRecord().channelConfig.payer;
const LEASE_MS = 600_000;
const log = createLogger('error');
/** The judge: `dead` is gone; `alive` and anything else are not. */
const owner: ProcessOwner = { token: 'me', gone: (holder) => holder === 'dead' };

const channel = (over: Partial<ChannelRecord> = {}) =>
  channelRecord({ chargedCumulativeAmount: '1000', signedMaxClaimable: '2000', ...over });

/** A reservation of the voucher for 2000, held by `holder` for ten minutes by the clock. */
const reservedBy = (holder: string) =>
  channel({
    pendingRequest: { pendingId: 'p1', signedMaxClaimable: '2000', expiresAt: Date.now() + LEASE_MS, owner: holder },
  });

/** As the official scheme reserves: only a channel no live reservation holds; `seen` records what it was shown. */
function reserve(seen: Array<ChannelRecord | undefined>) {
  return (current: ChannelRecord | undefined) => {
    seen.push(current);
    if (!current || (current.pendingRequest && current.pendingRequest.expiresAt > Date.now())) return current;
    const pendingRequest = { pendingId: 'p2', signedMaxClaimable: '3000', expiresAt: Date.now() + 300_000 };
    return { ...current, pendingRequest };
  };
}

let dir: string;
let store: SqliteStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollbooth-gone-holder-'));
  store = await SqliteStore.open(join(dir, 'tollbooth.db'));
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a channel reservation whose holder is gone', () => {
  it('has lapsed for the next call, which reserves the channel in its place, naming this process', async () => {
    await store.channels!.updateChannel(ID, () => reservedBy('dead'));
    const seen: Array<ChannelRecord | undefined> = [];
    const storage = new ReservationLeases(store.channels!, LEASE_MS, log, owner).storage();
    await storage.updateChannel(ID, reserve(seen) as never);
    expect(seen[0]?.pendingRequest?.expiresAt).toBe(0);
    const [stored] = await store.channels!.list();
    expect(stored!.pendingRequest).toMatchObject({ pendingId: 'p2', owner: 'me' });
    expect(stored!.pendingRequest!.expiresAt).toBeLessThanOrEqual(Date.now() + LEASE_MS);
  });

  it('still holds when its holder runs, or cannot be judged; a decision to leave it is not written', async () => {
    for (const holder of ['alive', 'proc1:elsewhere']) {
      await store.channels!.updateChannel(ID, () => reservedBy(holder));
      const storage = new ReservationLeases(store.channels!, LEASE_MS, log, owner).storage();
      const outcome = await storage.updateChannel(ID, reserve([]) as never);
      expect(outcome.status).toBe('unchanged');
      const [stored] = await store.channels!.list();
      expect(stored!.pendingRequest).toMatchObject({ pendingId: 'p1', owner: holder });
      expect(stored!.pendingRequest!.expiresAt).toBeGreaterThan(Date.now());
    }
  });
});

describe("a voucher's claim whose holder is gone", () => {
  const network = 'eip155:8453';
  const voucherKey = `batch:${network}:${ID}:2000`;
  const payload = {
    x402Version: 2,
    accepted: { scheme: 'batch-settlement', network },
    payload: {
      type: 'voucher',
      channelConfig: { payer: PAYER },
      voucher: { channelId: ID, maxClaimableAmount: '2000' },
    },
  } as unknown as PaymentPayload;
  const config = { facilitator: { timeoutMs: 60_000 }, batch: { reservationLease: LEASE_MS / 1000 } } as Config;
  const claimed = (holder: string) =>
    store.ledger.claimPayment({
      replayKey: voucherKey,
      tool: 'annuity',
      network,
      payer: PAYER,
      amount: '1000',
      transport: 'http',
      details: { payload, requirements: { network }, requestHash: 'h' },
      syncEarly: false,
      owner: holder,
    });
  const reconciler = () =>
    new Reconciler(config, store.ledger, log, () => Promise.reject(new Error('never')), [], store.channels, owner.gone);

  it('is decided by the channel at once when the same voucher comes again: never charged, so released', async () => {
    await store.channels!.updateChannel(ID, () => reservedBy('dead'));
    await claimed('dead');
    expect(await reconciler().abandonedVoucher(voucherKey)).toMatchObject({ type: 'failed' });
    expect(await store.ledger.listStaleClaims(new Date(Date.now() + 1000).toISOString())).toEqual([]);
    const receipts = await store.ledger.listReceipts({ limit: 5 });
    expect(receipts).toMatchObject([
      { replayKey: voucherKey, status: 'failed', errorReason: expect.stringMatching(/^abandoned_call/) },
    ]);
  });

  it('is decided by a reconciling pass however young, while a live holder’s young claim is left alone', async () => {
    await store.channels!.updateChannel(ID, () => reservedBy('alive'));
    await claimed('alive');
    const longAgo = new Date(Date.now() - 3_600_000).toISOString();
    expect(await reconciler().abandonedVoucher(voucherKey)).toBeUndefined();
    expect(await reconciler().reconcileAll(longAgo)).toEqual({ settled: 0, failed: 0, pending: 0 });
    expect(await store.ledger.listStaleClaims(new Date(Date.now() + 1000).toISOString())).toMatchObject([
      { owner: 'alive' },
    ]);

    await store.ledger.releasePayment(voucherKey);
    await store.channels!.updateChannel(ID, () => reservedBy('dead'));
    await claimed('dead');
    expect(await reconciler().reconcileAll(longAgo)).toEqual({ settled: 0, failed: 1, pending: 0 });
    expect(await store.ledger.listStaleClaims(new Date(Date.now() + 1000).toISOString())).toEqual([]);
  });

  it('is recorded as paid when the channel was charged for it before its holder died', async () => {
    await store.channels!.updateChannel(ID, () => channel({ chargedCumulativeAmount: '2000' }));
    await claimed('dead');
    expect(await reconciler().abandonedVoucher(voucherKey)).toMatchObject({ type: 'settled' });
    const receipts = await store.ledger.listReceipts({ limit: 5 });
    expect(receipts).toMatchObject([{ replayKey: voucherKey, status: 'settled' }]);
  });
});
