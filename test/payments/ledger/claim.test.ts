import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evmExactRail } from '../../../src/payments/rails/evm/exact.js';
import { requestHash } from '../../../src/shared/json.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../../support/paid.js';
import { encodePayment, signExactPayment } from '../../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../../support/server.js';
import { annuity } from '../../../tools/annuity.js';

let paid: PaidEnvironment;
let server: TestServer;
const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
/** The hash the pipeline binds a payment to: of the input as parsed (defaults filled in). */
const HASH = requestHash('annuity', annuity.input.parse(args));

beforeAll(async () => {
  paid = await startPaidEnvironment(2);
  server = await startTestServer(paid.env);
}, 120_000);
afterAll(async () => {
  await server?.close();
  await paid?.stop();
});

async function challenge(): Promise<{ required: PaymentRequired; entry: PaymentRequirements }> {
  const res = await fetch(server.url + '/api/annuity', { method: 'POST' });
  const required = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
  return { required, entry: required.accepts.find((a) => a.network === LOCAL_NETWORK)! };
}

const pay = (payment: PaymentPayload) =>
  fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body: JSON.stringify(args),
  });

/** What a retry was answered: status, error code, and whether a PAYMENT-RESPONSE came with it. */
async function answer(res: Response) {
  const body = (await res.json()) as { error?: { code?: string } | string };
  const code = typeof body.error === 'string' ? body.error : body.error?.code;
  return { status: res.status, code, paymentResponse: res.headers.get('payment-response') };
}

describe('answering a retry of a settled payment', () => {
  it('never answers "settled" without a transaction for an output kept after a late confirmation', async () => {
    const { entry } = await challenge();
    const payer = paid.payers[0]!;
    const payment = await signExactPayment(payer, entry);
    const id = evmExactRail.identify(payment, entry);
    if (!id.ok) throw new Error(id.message);
    const ledger = server.runtime.store.ledger;
    const claim = {
      replayKey: id.replayKey,
      tool: 'annuity',
      network: entry.network,
      payer: payer.address,
      amount: entry.amount,
      transport: 'http' as const,
    };
    expect(await ledger.claimPayment(claim)).toEqual({ type: 'claimed' });
    await ledger.markPaymentPending(id.replayKey, {
      transaction: '',
      payload: payment,
      requirements: entry,
      requestHash: HASH,
      output: { kept: true },
    });
    // Recorded as settled with no transaction, as the stale-claim pass once did.
    await ledger.completePayment({ ...claim, transaction: '', status: 'settled', createdAt: new Date().toISOString() });

    expect(await answer(await pay(payment))).toEqual({
      status: 409,
      code: 'settlement_outcome_unknown',
      paymentResponse: null,
    });
  });

  it('never replays an idempotent result stored as settled without a transaction', async () => {
    const { required, entry } = await challenge();
    const payer = paid.payers[1]!;
    const payment = await signExactPayment(payer, entry);
    const extensions = structuredClone(required.extensions ?? {}) as Record<string, unknown>;
    appendPaymentIdentifierToExtensions(extensions, 'pay_claim_test_00000001');
    payment.extensions = extensions;
    const id = evmExactRail.identify(payment, entry);
    if (!id.ok) throw new Error(id.message);
    const ledger = server.runtime.store.ledger;
    const claimed = await ledger.claimIdempotency({
      id: 'pay_claim_test_00000001',
      tool: 'annuity',
      requestHash: HASH,
      replayKey: id.replayKey,
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(claimed).toEqual({ type: 'new' });
    await ledger.completeIdempotency('pay_claim_test_00000001', {
      output: { kept: true },
      receipt: { success: true, transaction: '', network: entry.network, payer: payer.address },
    });

    expect(await answer(await pay(payment))).toEqual({
      status: 409,
      code: 'settlement_outcome_unknown',
      paymentResponse: null,
    });
  });
});
