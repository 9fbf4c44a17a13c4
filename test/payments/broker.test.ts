import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookalikeFor, type LookalikeFacilitator } from '../support/facilitator.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { settledOnChain } from '../support/settlements.js';

const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };

let paid: PaidEnvironment;
let facilitator: LookalikeFacilitator;
let server: TestServer;

beforeAll(async () => {
  paid = await startPaidEnvironment(1);
  // The settlement key moves to the facilitator: Tollbooth only learns what it answers.
  const moved = await lookalikeFor(paid, LOCAL_NETWORK);
  facilitator = moved.facilitator;
  server = await startTestServer(moved.serverEnv);
}, 120_000);
afterAll(async () => {
  await server?.close();
  await facilitator?.close();
  await paid?.stop();
});

async function entry(): Promise<PaymentRequirements> {
  const res = await fetch(server.url + '/api/annuity', { method: 'POST' });
  return (decodeHeader(res.headers.get('payment-required')) as PaymentRequired).accepts.find(
    (a) => a.network === LOCAL_NETWORK,
  )!;
}

const pay = (payment: PaymentPayload) =>
  fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body: JSON.stringify(args),
  });

describe('a facilitator that reports a settlement without its transaction', () => {
  it('answers the outcome as not known yet (never "settled" with an empty transaction), and the retry gets the hash', async () => {
    const payment = await signExactPayment(paid.payers[0]!, await entry());
    facilitator.setRewrite((kind, answer) => (kind === 'settle' ? { ...answer, transaction: '' } : answer));
    const first = await pay(payment);
    expect(first.status).toBe(503);
    const receipt = decodeHeader(first.headers.get('payment-response')) as { success: boolean; errorReason: string };
    expect(receipt).toMatchObject({ success: false, errorReason: 'settlement_outcome_unknown' });
    expect(await server.runtime.store.ledger.listReceipts()).toEqual([]);
    expect(await server.runtime.store.ledger.listPending()).toHaveLength(1);

    facilitator.setRewrite(undefined);
    const [onChain] = await settledOnChain(paid);
    const again = await pay(payment); // reconciled from the chain: the output, with the transaction that paid it
    expect(again.status).toBe(200);
    expect(decodeHeader(again.headers.get('payment-response'))).toMatchObject({ success: true, transaction: onChain });
    expect(await server.runtime.store.ledger.listReceipts()).toMatchObject([
      { status: 'settled', transaction: onChain },
    ]);
  });
});
