import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchBatchChannels } from '../../../src/observe/metrics-batch.js';
import { promClient } from '../../../src/observe/metrics-process.js';
import type { Config } from '../../../src/config/config.js';
import { OperationRows } from '../../../src/payments/batch/op-ledger.js';
import { ROUND_LEASE_MS } from '../../../src/payments/batch/round-lease.js';
import { Reconciler } from '../../../src/payments/ledger/reconcile.js';
import { createLogger } from '../../../src/shared/log.js';
import { buildReceiptsReport } from '../../../src/receipts/receipts.js';
import { SqliteStore } from '../../../src/store/dialects/sqlite/store.js';
import type { ReceiptRecord } from '../../../src/store/ledger.js';
import {
  type BatchSettlementEnvironment,
  readOnchainChannel,
  startBatchSettlementEnvironment,
} from '../../support/chain/batch-settlement.js';
import {
  type BatchParties,
  type BatchPayer,
  batchPayer,
  paidCall,
  payloadChannel,
} from '../../support/chain/batch-settlement-parties.js';
import { claimLoopOn, type FlakyFacilitator, flakyFacilitator, partiesOnStore } from '../../support/batch-claims.js';

const PRICE = 1_000n;
const DAY_MS = 86_400_000;

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-batch-claims-'));
let env: BatchSettlementEnvironment;
let store: SqliteStore;
let parties: BatchParties;
let facilitator: FlakyFacilitator;
let alice: BatchPayer;
let channelId: `0x${string}`;
let deposit: bigint;

beforeAll(async () => {
  env = await startBatchSettlementEnvironment(2);
  store = await SqliteStore.open(join(dir, 'claims.db'));
  parties = await partiesOnStore(env, store, PRICE);
  facilitator = flakyFacilitator(parties.facilitatorClient);
  alice = batchPayer(env, env.payers[0]!);
}, 60_000);

afterAll(async () => {
  await store?.close();
  await env?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const receipts = async (kind: string): Promise<ReceiptRecord[]> =>
  (await store.ledger.listReceipts({ limit: 1000 })).filter((r) => r.kind === kind);

/** Three official-client calls on one channel: a deposit with its first voucher, then two vouchers. */
async function threeCalls(payer: BatchPayer): Promise<void> {
  const first = await paidCall(parties, payer);
  for (let i = 0; i < 2; i++) await paidCall(parties, payer);
  channelId = payloadChannel(first.payload).channelId;
  deposit = BigInt((first.payload.payload as { deposit: { amount: string } }).deposit.amount);
}

describe('the claim loop over our store, with the official facilitator on the local chain', () => {
  it('claims exactly the charged sum in one tick and settles it to the pay-to, each transaction in the ledger', async () => {
    await threeCalls(alice);
    const [summary] = await store.batchUpkeep.summaries();
    expect(summary).toMatchObject({ charged: (3n * PRICE).toString(), claimed: '0' });
    const payToBefore = await env.balance(env.payTo);
    const [outcome] = (await claimLoopOn(env, parties, store, facilitator).tick())!;
    expect(outcome!.claimed).toBe(3n * PRICE);
    expect((await readOnchainChannel(env.chain, channelId)).totalClaimed).toBe(3n * PRICE);
    expect(await env.balance(env.payTo)).toBe(payToBefore + 3n * PRICE);
    const [claim] = await receipts('claim');
    const [settle] = await receipts('settle');
    expect(claim).toMatchObject({ status: 'settled', amount: '3000', transaction: outcome!.claimTransactions[0] });
    expect(settle).toMatchObject({ status: 'settled', amount: '3000', transaction: outcome!.settleTransaction });
    expect(claim!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await store.batchUpkeep.summaries())[0]).toMatchObject({ claimed: '3000' });
  });

  it('claims nothing more while nothing new was charged', async () => {
    const [outcome] = (await claimLoopOn(env, parties, store, facilitator).tick())!;
    expect(outcome).toMatchObject({ claimed: 0n, claimTransactions: [], refunded: [] });
    expect(await receipts('claim')).toHaveLength(1);
  });

  it('records a failed claim with its own reason, not the facilitator text, and claims at the next tick', async () => {
    await paidCall(parties, alice);
    const loop = claimLoopOn(env, parties, store, facilitator, {
      claimInterval: 3600,
      claimThreshold: PRICE.toString(),
      refundIdle: 7 * 86_400,
    });
    const registry = new promClient.Registry();
    loop.metrics = watchBatchChannels(registry, loop);
    facilitator.refuseNext(1);
    const [failed] = (await loop.tick())!;
    expect(failed!.failures).toEqual(['claim']);
    const text = await registry.metrics();
    expect(text).toContain('tollbooth_batch_operation_failures_total{operation="claim",network="eip155:8453"} 1');
    expect(text).toContain('tollbooth_batch_unclaimed_atomic{network="eip155:8453"} 1000');
    expect(text).toContain('tollbooth_batch_channels_open{network="eip155:8453"} 1');
    const [failure] = (await receipts('claim')).filter((r) => r.status === 'failed');
    expect(failure).toMatchObject({ errorReason: 'claim_failed', amount: PRICE.toString(), transaction: '' });
    expect(JSON.stringify(await store.ledger.listReceipts())).not.toContain('SECRET-FACILITATOR-TEXT');
    const [retried] = (await loop.tick())!;
    expect(retried!.claimed).toBe(PRICE);
    expect(await registry.metrics()).toContain('tollbooth_batch_unclaimed_atomic{network="eip155:8453"} 0');
    expect(await registry.metrics()).toMatch(
      /tollbooth_batch_operation_seconds_count\{operation="claim",network="eip155:8453",outcome="ok"\} 1/,
    );
    expect((await readOnchainChannel(env.chain, channelId)).totalClaimed).toBe(4n * PRICE);
  });

  it('refunds a channel idle longer than the refund time: the payer gets back what was not charged', async () => {
    await paidCall(parties, alice);
    const payerBefore = await env.balance(alice.account.address);
    const payToBefore = await env.balance(env.payTo);
    const [outcome] = (await claimLoopOn(env, parties, store, facilitator).tick(Date.now() + 8 * DAY_MS))!;
    expect(outcome!.refunded).toHaveLength(1);
    expect(await env.balance(alice.account.address)).toBe(payerBefore + deposit - 5n * PRICE);
    // The refund claimed the last voucher; the round's settle moved it to the pay-to.
    expect(await env.balance(env.payTo)).toBe(payToBefore + PRICE);
    expect((await readOnchainChannel(env.chain, channelId)).totalClaimed).toBe(5n * PRICE);
    const [refund] = await receipts('refund');
    expect(refund).toMatchObject({ status: 'settled', channelId, amount: (deposit - 5n * PRICE).toString() });
    expect(refund!.transaction).toBe(outcome!.refunded[0]);
    expect(await store.batchUpkeep.summaries()).toEqual([]);
  });
});

describe('a payer who started a timed withdrawal', () => {
  it('has the charged value of its channel claimed at the next check, interval and threshold notwithstanding', async () => {
    const bob = batchPayer(env, env.payers[1]!);
    const first = await paidCall(parties, bob);
    await paidCall(parties, bob);
    const { channelId: bobs } = payloadChannel(first.payload);
    const loop = claimLoopOn(env, parties, store, facilitator);
    expect((await loop.tick())![0]!.claimed).toBe(0n);
    await store.channels.updateChannel(bobs, (c) => c && { ...c, withdrawRequestedAt: Math.floor(Date.now() / 1000) });
    expect((await loop.tick())![0]!.claimed).toBe(2n * PRICE);
    expect((await readOnchainChannel(env.chain, bobs)).totalClaimed).toBe(2n * PRICE);
  });
});

describe('a claim under way', () => {
  const network = 'eip155:8453';
  let carol: BatchPayer;
  beforeAll(() => {
    carol = batchPayer(env, env.payers[1]!);
  });
  const loopOnThreshold = () =>
    claimLoopOn(env, parties, store, facilitator, {
      claimInterval: 3600,
      claimThreshold: PRICE.toString(),
      refundIdle: 7 * 86_400,
    });
  const listed = async () => {
    const location = { kind: 'sqlite' as const, where: join(dir, 'claims.db') };
    return (await buildReceiptsReport(store.ledger, [], { limit: 1000, json: true }, location)).payments;
  };

  it('is listed pending while the facilitator has not answered, then becomes the settled receipt with its hash', async () => {
    await paidCall(parties, carol);
    const loop = loopOnThreshold();
    const registry = new promClient.Registry();
    loop.metrics = watchBatchChannels(registry, loop);
    const held = facilitator.holdNext();
    const ticking = loop.tick();
    await held.asked;
    const [pending] = await store.ledger.listPending();
    expect(pending).toMatchObject({ tool: 'batch-settlement', amount: PRICE.toString(), transaction: '' });
    expect((await listed()).filter((p) => p.status === 'pending')).toMatchObject([{ kind: 'claim' }]);
    expect(await registry.metrics()).toContain(`tollbooth_batch_operations_in_doubt{network="${network}"} 1`);
    held.release();
    const [outcome] = (await ticking)!;
    const claim = (await receipts('claim')).find((r) => r.replayKey === pending!.replayKey);
    expect(claim).toMatchObject({ status: 'settled', transaction: outcome!.claimTransactions[0], amount: '1000' });
    expect(await store.ledger.listPending()).toEqual([]);
    expect(await registry.metrics()).not.toContain('tollbooth_batch_operations_in_doubt{');
  });

  it('that fails turns its pending row into a failed receipt with our reason only', async () => {
    await paidCall(parties, carol);
    const held = facilitator.holdNext();
    facilitator.refuseNext(1);
    const ticking = loopOnThreshold().tick();
    await held.asked;
    const [pending] = await store.ledger.listPending();
    held.release();
    expect((await ticking)![0]!.failures).toEqual(['claim']);
    const failed = (await receipts('claim')).filter((r) => r.replayKey === pending!.replayKey);
    expect(failed).toMatchObject([{ status: 'failed', errorReason: 'claim_failed', transaction: '' }]);
    expect(JSON.stringify(await store.ledger.listReceipts({ limit: 1000 }))).not.toContain('SECRET-FACILITATOR-TEXT');
    expect(await store.ledger.listPending()).toEqual([]);
  });

  it('left pending by a stopped process stays in doubt, then the next round closes it and claims again', async () => {
    const scope = {
      network,
      token: env.token.toLowerCase(),
      receiver: parties.serverScheme.getReceiverAddress().toLowerCase(),
    };
    const dead = await new OperationRows(store.ledger, scope, createLogger('error')).begin('claim', { amount: PRICE });
    expect((await listed()).find((p) => p.status === 'pending')).toMatchObject({ kind: 'claim', amount: '1000' });
    // The reconciler lists it in doubt and never sends it again (only the loop's next round closes it).
    const resent: unknown[] = [];
    const resettle = async (payload: unknown) => {
      resent.push(payload);
      throw new Error('a batch operation is never sent again by the reconciler');
    };
    const reconciler = new Reconciler({} as Config, store.ledger, createLogger('error'), resettle);
    expect(await reconciler.reconcileAll()).toEqual({ settled: 0, failed: 0, pending: 1 });
    expect(resent).toEqual([]);
    // A round within the lease leaves it alone: it could still be running.
    await loopOnThreshold().tick();
    expect(await store.ledger.listPending()).toHaveLength(1);
    await paidCall(parties, carol);
    const payToBefore = await env.balance(env.payTo);
    const [outcome] = (await loopOnThreshold().tick(Date.now() + ROUND_LEASE_MS + 60_000))!;
    expect(await store.ledger.listPending()).toEqual([]);
    const closed = (await receipts('claim')).find((r) => r.replayKey === dead.replayKey);
    expect(closed).toMatchObject({ status: 'failed', errorReason: 'claim_abandoned', transaction: '' });
    expect(outcome).toMatchObject({ failures: [], claimed: PRICE });
    expect(await env.balance(env.payTo)).toBe(payToBefore + PRICE);
  });

  it('a settle left pending by a stopped process after it landed is closed, and nothing is settled twice', async () => {
    const scope = {
      network,
      token: env.token.toLowerCase(),
      receiver: parties.serverScheme.getReceiverAddress().toLowerCase(),
    };
    await new OperationRows(store.ledger, scope, createLogger('error')).begin('settle', { amount: PRICE });
    const payToBefore = await env.balance(env.payTo);
    const [outcome] = (await loopOnThreshold().tick(Date.now() + ROUND_LEASE_MS + 60_000))!;
    expect(outcome!.failures).toEqual([]);
    expect(await store.ledger.listPending()).toEqual([]);
    const settles = (await receipts('settle')).slice(0, 2).map((r) => r.errorReason);
    expect(settles).toEqual(['settle_nothing_to_settle', 'settle_abandoned']);
    expect(await env.balance(env.payTo)).toBe(payToBefore);
  });
});

describe('the receipts of the claim loop', () => {
  it('are listed with their kind and left out of the totals (they move value already charged)', async () => {
    const location = { kind: 'sqlite' as const, where: join(dir, 'claims.db') };
    const report = await buildReceiptsReport(store.ledger, [], { limit: 100, json: true }, location);
    const kinds = new Set(report.payments.map((p) => p.kind));
    expect(kinds).toEqual(new Set(['claim', 'settle', 'refund']));
    expect(report.totals.byNetwork).toEqual([]);
  });
});
