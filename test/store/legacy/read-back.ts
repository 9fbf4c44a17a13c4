import { expect } from 'vitest';
import type { ReceiptRecord, SpendRecord, Store } from '../../../src/store/store.js';
import { LEGACY_ROWS as R } from './rows.js';

const claimOf = (key: string) => {
  const c = R.claims.find((row) => row.key === key)!;
  return {
    replayKey: c.key,
    tool: c.tool,
    network: c.network,
    payer: c.payer,
    amount: c.amount,
    transport: c.transport as 'http' | 'mcp',
    protocol: c.protocol as 'x402' | 'mpp',
  };
};

const receipts: ReceiptRecord[] = R.receipts.map((r) => ({
  replayKey: r.key,
  tool: r.tool,
  network: r.network,
  payer: r.payer,
  amount: r.amount,
  transaction: r.transaction,
  status: r.status as 'settled' | 'failed',
  ...(r.errorReason ? { errorReason: r.errorReason } : {}),
  transport: r.transport as 'http' | 'mcp',
  protocol: r.protocol as 'x402' | 'mpp',
  createdAt: r.createdAt,
}));

const spends: SpendRecord[] = R.spends.map((s) => {
  const { paymentId, payer, transaction, note, payload, ...rest } = s;
  const optional = { paymentId, payer, transaction, note, payload };
  return {
    ...rest,
    status: s.status as SpendRecord['status'],
    protocol: s.protocol as 'x402' | 'mpp',
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
  };
});

/** Reads every legacy row back through today's store parts and checks it came through the migration unchanged. */
export async function expectLegacyRowsReadBack(store: Store): Promise<void> {
  const { ledger, toolState, spends: ledgerOfSpends, buckets } = store;
  const pending = R.claims[1]!;
  expect(await ledger.listPending()).toEqual([
    {
      ...claimOf('pending-1'),
      transaction: '0xpending',
      ...pending.details,
      output: pending.output,
      createdAt: pending.createdAt,
      updatedAt: pending.updatedAt,
    },
  ]);
  const stale = await ledger.listStaleClaims('2999-01-01T00:00:00.000Z');
  expect(stale.map((c) => [c.replayKey, c.requestHash, c.payload, c.requirements])).toEqual([
    ['claimed-1', 'sha256:c1', R.claims[0]!.details!.payload, R.claims[0]!.details!.requirements],
  ]);
  expect(await ledger.claimPayment(claimOf('claimed-1'))).toEqual({ type: 'in_flight' });
  expect((await ledger.claimPayment(claimOf('pending-1'))).type).toBe('pending');
  expect(await ledger.claimPayment(claimOf('spent-after-pending'))).toEqual({
    type: 'spent',
    transaction: '0xlate',
    undelivered: { requestHash: 'sha256:s1', output: R.claims[2]!.output },
  });
  expect(await ledger.claimPayment(claimOf('spent-1'))).toEqual({ type: 'spent', transaction: '0xspent' });
  expect(await ledger.listReceipts()).toEqual([...receipts].reverse());

  const [inFlight, done] = R.idempotency.map((i) => ({
    id: i.id,
    tool: i.tool,
    requestHash: i.requestHash,
    replayKey: i.paymentKey,
    expiresAt: i.expiresAt,
  }));
  expect(await ledger.claimIdempotency(inFlight!)).toEqual({ type: 'in_flight' });
  expect(await ledger.claimIdempotency(done!)).toEqual({ type: 'done', result: R.idempotency[1]!.result });
  expect(await ledger.claimIdempotency({ ...done!, replayKey: 'other' })).toEqual({
    type: 'conflict',
    reason: 'different_payment',
  });

  const { paymentKey, ...order } = R.orders[0]!;
  expect(await toolState.getOrder(order.orderId)).toEqual({ ...order, replayKey: paymentKey });
  expect(await toolState.claimDrip(R.drips[0]!.subject, R.drips[0]!.day, 2)).toEqual({ type: 'granted', count: 2 });

  expect(await ledgerOfSpends.listSpends()).toEqual([...spends].reverse());
  expect(await ledgerOfSpends.spentOn('2025-03-01')).toBe(5000);
  expect(await ledgerOfSpends.pendingSpend('sha256:spend_pending')).toEqual(spends[1]);

  const bucket = { key: 'ip:legacy', now: R.bucketNow, capacity: 3, refillPerSecond: 1, cost: 1 };
  expect(await buckets.claimTokens(bucket)).toEqual({ type: 'taken', remaining: 0 });
  expect(await buckets.claimTokens(bucket)).toEqual({ type: 'limited', retryAfterMs: 1000 });
}

/** After the legacy rows, new state is written beside them: a new spend is listed first and counted with the others. */
export async function expectNewRowsBesideLegacy(store: Store): Promise<void> {
  const { day, tool, resource, network, asset } = R.spends[0]!;
  const fresh = {
    id: 'spend_new',
    day,
    tool,
    resource,
    requestHash: 'sha256:new',
    network,
    asset,
    amount: '3000',
    usdMicros: 3000,
  };
  expect(await store.spends.claimSpend(fresh, 1_000_000)).toEqual({ type: 'reserved', spentMicros: 8000 });
  expect((await store.spends.listSpends({ limit: 2 })).map((s) => s.id)).toEqual(['spend_new', 'spend_cancelled']);
}
