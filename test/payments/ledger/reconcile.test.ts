import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../../src/shared/log.js';
import { Reconciler } from '../../../src/payments/ledger/reconcile.js';
import { requestHash } from '../../../src/shared/json.js';
import { evmExactRail } from '../../../src/payments/rails/evm/exact.js';
import { startLogLimitedRpc, type LogLimitedRpc } from '../../support/chain/log-limited-rpc.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../../support/paid.js';
import { encodePayment, signExactPayment } from '../../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../../support/server.js';

let paid: PaidEnvironment;
let server: TestServer;
let rpc: LogLimitedRpc;
const lines: Array<{ level: string; msg: string } & Record<string, unknown>> = [];
const capture: Logger = {
  info: (msg, fields) => void lines.push({ level: 'info', msg, ...fields }),
  warn: (msg, fields) => void lines.push({ level: 'warn', msg, ...fields }),
  error: (msg, fields) => void lines.push({ level: 'error', msg, ...fields }),
};
const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
const later = () => new Date(Date.now() + 3_600_000).toISOString();

beforeAll(async () => {
  paid = await startPaidEnvironment(6);
  server = await startTestServer(paid.env, { log: capture });
  rpc = await startLogLimitedRpc(paid.chain.rpcUrl);
}, 120_000);
afterAll(async () => {
  await rpc?.stop();
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
    expect(receipt!.transaction).toBe(settled.transaction); // found on chain: the token's AuthorizationUsed log
    const line = lines.find((l) => l.key === replayKey && l.transaction === settled.transaction);
    expect(line?.msg).toMatch(
      /left by a stopped process was paid on chain.*whether its answer reached the caller is unknown/,
    );
    const again = await pay(payment);
    expect(again.status).toBe(402);
    expect(((await again.json()) as { error: string }).error).toBe('payment_already_used');
  });

  it('releases, with a failed receipt, a claim whose authorization expired unused', async () => {
    const payer = paid.payers[1]!;
    const entry = await localEntry();
    const before = await paid.balance(payer.address);
    // Past on our clock by over a minute (the idle chain's last block may be older): it can never be used.
    const payment = await signExactPayment(payer, entry, { validBefore: BigInt(Math.floor(Date.now() / 1000) - 120) });
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

describe('a settlement the chain confirms only later', () => {
  it('answers the retry of a payment left pending (outcome unknown) with the transaction the chain names, never an empty one', async () => {
    const payer = paid.payers[3]!;
    const entry = await localEntry();
    const first = await pay(await signExactPayment(payer, entry)); // a real answer, to keep as the undelivered output
    expect(first.status).toBe(200);
    const output = await first.json();
    const payment = await signExactPayment(payer, entry);
    const replayKey = await abandonedClaim(payment, entry, payer.address);
    // The call ended with settlement_outcome_unknown: no transaction was reported, the output is kept.
    await server.runtime.store.ledger.markPaymentPending(replayKey, {
      transaction: '',
      payload: payment,
      requirements: entry,
      requestHash: requestHash('annuity', { ...args, type: 'ordinary' }), // the parsed input, defaults included
      output,
    });
    const settled = await server.runtime.facilitator.client.settle(payment, entry); // it did land, after all
    expect(settled.success).toBe(true);

    const retry = await pay(payment);
    expect(retry.status, await retry.clone().text()).toBe(200);
    expect(await retry.json()).toEqual(output);
    const answer = decodeHeader(retry.headers.get('payment-response')) as { success: boolean; transaction: string };
    expect(answer).toMatchObject({ success: true, transaction: settled.transaction });
    const receipts = await server.runtime.store.ledger.listReceipts();
    expect(receipts.find((r) => r.replayKey === replayKey)).toMatchObject({
      status: 'settled',
      transaction: settled.transaction,
    });
  });

  it('keeps in doubt, listed and logged with the reason, a claim used on chain whose transaction the node cannot name', async () => {
    const payer = paid.payers[4]!;
    const entry = await localEntry();
    const payment = await signExactPayment(payer, entry);
    const replayKey = await abandonedClaim(payment, entry, payer.address);
    expect((await server.runtime.facilitator.client.settle(payment, entry)).success).toBe(true);
    // The same store, read through a node whose log history is pruned.
    rpc.pruned = true;
    const config = server.runtime.config;
    const networks = config.networks.map((n) => (n.id === LOCAL_NETWORK ? { ...n, rpcUrl: rpc.url } : n));
    const blind = new Reconciler({ ...config, networks }, server.runtime.store.ledger, capture, () =>
      Promise.reject(new Error('a stale claim is never settled again')),
    );
    try {
      expect(await blind.reconcileAll(later())).toMatchObject({ settled: 0, failed: 0 });
    } finally {
      rpc.pruned = false;
    }
    const receipts = await server.runtime.store.ledger.listReceipts();
    expect(receipts.filter((r) => r.replayKey === replayKey)).toEqual([]);
    expect((await server.runtime.store.ledger.listStaleClaims(later())).map((c) => c.replayKey)).toContain(replayKey);
    const doubt = lines.filter((l) => l.msg.startsWith('payments still in doubt')).at(-1) as
      { claims: Array<{ key: string; state: string; reason: string }> } | undefined;
    expect(doubt?.claims.find((c) => c.key === replayKey)).toMatchObject({
      state: 'claimed',
      reason: expect.stringMatching(/used, but no AuthorizationUsed log/),
    });
    // Read through the real node, the next pass records it with its transaction.
    expect(await server.runtime.serverDeps.broker.reconciler.reconcileAll(later())).toMatchObject({ settled: 1 });
    const [receipt] = (await server.runtime.store.ledger.listReceipts()).filter((r) => r.replayKey === replayKey);
    expect(receipt?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
  });
});
