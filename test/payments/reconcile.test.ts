import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestHash } from '../../src/shared/json.js';
import { evmExactRail } from '../../src/payments/rails/evm/exact.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

let paid: PaidEnvironment;
let server: TestServer;
const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
const later = () => new Date(Date.now() + 3_600_000).toISOString();

beforeAll(async () => {
  paid = await startPaidEnvironment(3);
  server = await startTestServer(paid.env);
}, 120_000);
afterAll(async () => {
  await server?.close();
  await paid?.stop();
});

async function localEntry(): Promise<PaymentRequirements> {
  const res = await fetch(server.url + '/api/annuity', { method: 'POST' });
  return (decodeHeader(res.headers.get('payment-required')) as PaymentRequired).accepts.find(
    (a) => a.network === LOCAL_NETWORK,
  )!;
}

/** Leaves a claim behind exactly as a process that stopped mid-call would: claimed, with its details, never ended. */
async function abandonedClaim(
  payment: Awaited<ReturnType<typeof signExactPayment>>,
  entry: PaymentRequirements,
  payer: string,
) {
  const id = evmExactRail.identify(payment, entry);
  if (!id.ok) throw new Error(id.message);
  const store = server.runtime.store;
  expect(
    await store.ledger.claimPayment({
      replayKey: id.replayKey,
      tool: 'annuity',
      network: entry.network,
      payer,
      amount: entry.amount,
      transport: 'http',
      details: { payload: payment, requirements: entry, requestHash: requestHash('annuity', args) },
    }),
  ).toEqual({ type: 'claimed' });
  return id.replayKey;
}

const pay = (payment: Awaited<ReturnType<typeof signExactPayment>>) =>
  fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body: JSON.stringify(args),
  });

describe('reconciling claims abandoned by a stopped process', () => {
  it('records the receipt of a call that was paid on chain before the process stopped, and never sells the payment again', async () => {
    const payer = paid.payers[0]!;
    const entry = await localEntry();
    const payment = await signExactPayment(payer, entry);
    const replayKey = await abandonedClaim(payment, entry, payer.address);
    const settled = await server.runtime.facilitator.client.settle(payment, entry); // the process got this far, then stopped
    expect(settled.success).toBe(true);

    const counts = await server.runtime.serverDeps.broker.reconciler.reconcileAll(later());
    expect(counts).toEqual({ settled: 1, failed: 0, pending: 0 });
    const [receipt] = await server.runtime.store.ledger.listReceipts({ limit: 1 });
    expect(receipt).toMatchObject({ replayKey, status: 'settled', payer: payer.address, amount: '1000' });
    const again = await pay(payment);
    expect(again.status).toBe(402);
    expect(((await again.json()) as { error: string }).error).toBe('payment_already_used');
  });

  it('releases, with a failed receipt, a claim whose authorization expired unused', async () => {
    const payer = paid.payers[1]!;
    const entry = await localEntry();
    const before = await paid.balance(payer.address);
    const payment = await signExactPayment(payer, entry, { validBefore: BigInt(Math.floor(Date.now() / 1000) - 10) });
    const replayKey = await abandonedClaim(payment, entry, payer.address);

    expect(await server.runtime.serverDeps.broker.reconciler.reconcileAll(later())).toEqual({
      settled: 0,
      failed: 1,
      pending: 0,
    });
    const [receipt] = await server.runtime.store.ledger.listReceipts({ limit: 1 });
    expect(receipt).toMatchObject({
      replayKey,
      status: 'failed',
      errorReason: 'abandoned_call: authorization_expired_unused',
    });
    expect(await server.runtime.store.ledger.listStaleClaims(later())).toEqual([]);
    expect(await paid.balance(payer.address)).toBe(before);
  });

  it('leaves alone a claim that is not stale yet, and one whose authorization could still settle', async () => {
    const payer = paid.payers[2]!;
    const entry = await localEntry();
    const payment = await signExactPayment(payer, entry);
    await abandonedClaim(payment, entry, payer.address);
    expect(
      await server.runtime.serverDeps.broker.reconciler.reconcileAll(new Date(Date.now() - 60_000).toISOString()),
    ).toEqual({ settled: 0, failed: 0, pending: 0 });
    expect(await server.runtime.serverDeps.broker.reconciler.reconcileAll(later())).toEqual({
      settled: 0,
      failed: 0,
      pending: 1,
    });
    const res = await pay(payment);
    expect(res.status).toBe(409); // still possibly in flight somewhere: never run twice
    expect(await paid.balance(payer.address)).toBe(10_000_000n);
  });
});
