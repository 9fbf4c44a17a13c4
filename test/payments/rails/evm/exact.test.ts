import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evmExactRail } from '../../../../src/payments/rails/evm/exact.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../../../support/paid.js';
import { encodePayment, signExactPayment } from '../../../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../../../support/server.js';
import {
  expectWindowRefused,
  nowSeconds,
  TEN_YEARS_SECONDS,
  UINT256_MAX,
  watchPaymentPath,
} from '../../../support/window.js';

let paid: PaidEnvironment;
let server: TestServer;
const body = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });

beforeAll(async () => {
  paid = await startPaidEnvironment(6);
  server = await startTestServer(paid.env);
}, 120_000);
afterAll(async () => {
  await server?.close();
  await paid?.stop();
});

async function localEntry(): Promise<PaymentRequirements> {
  const res = await fetch(server.url + '/api/annuity', { method: 'POST' });
  const challenge = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
  return challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
}

describe('the EVM exact rail', () => {
  it('settles six payments from six payers at the same moment with one facilitator key: every call answered and charged once', async () => {
    const entry = await localEntry();
    const before = await Promise.all(paid.payers.map((p) => paid.balance(p.address)));
    const payments = await Promise.all(paid.payers.map((p) => signExactPayment(p, entry)));
    const answers = await Promise.all(
      payments.map((payment) =>
        fetch(server.url + '/api/annuity', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
          body,
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
    const transactions = answers.map(
      (a) => (decodeHeader(a.headers.get('payment-response')) as { transaction: string }).transaction,
    );
    expect(new Set(transactions).size).toBe(6);
    for (const [i, payer] of paid.payers.entries()) expect(await paid.balance(payer.address)).toBe(before[i]! - 1000n);
  });

  it('keys a payment by network, asset, payer and nonce, whatever the letter case', async () => {
    const entry = await localEntry();
    const payment = await signExactPayment(paid.payers[0]!, entry);
    const a = evmExactRail.identify(payment, entry);
    const shouted = {
      ...payment,
      payload: {
        ...payment.payload,
        authorization: {
          ...(payment.payload as { authorization: object }).authorization,
          from: paid.payers[0]!.address.toUpperCase().replace('0X', '0x'),
        },
      },
    };
    const b = evmExactRail.identify(shouted as never, {
      ...entry,
      asset: entry.asset.toUpperCase().replace('0X', '0x'),
    });
    expect(a.ok && b.ok && a.replayKey === b.replayKey).toBe(true);
  });

  it('refuses to key an authorization with a malformed field, so the facilitator never sees it (found by fuzzing: it answered 502)', async () => {
    const entry = await localEntry();
    const payment = await signExactPayment(paid.payers[0]!, entry);
    const inner = payment.payload as { signature: string; authorization: Record<string, unknown> };
    expect(evmExactRail.identify(payment, entry).ok).toBe(true);
    const broken: Array<[string, Record<string, unknown>]> = [
      ['value', { value: '\u0000' }],
      ['value', { value: '-1' }],
      ['validBefore', { validBefore: '1e9' }],
      ['validAfter', { validAfter: null }],
      ['to', { to: 'nobody' }],
    ];
    for (const [field, change] of broken) {
      const tampered = { ...payment, payload: { ...inner, authorization: { ...inner.authorization, ...change } } };
      expect(evmExactRail.identify(tampered as never, entry).ok, field).toBe(false);
    }
    for (const signature of ['', '0x', 'zz', 42]) {
      expect(
        evmExactRail.identify({ ...payment, payload: { ...inner, signature } } as never, entry).ok,
        String(signature),
      ).toBe(false);
    }
  });

  it('refuses an authorization valid for ten years or until 2^256−1 before claiming or verifying it, and takes one within the window', async () => {
    const entry = await localEntry();
    const watch = watchPaymentPath(server.runtime);
    const payer = paid.payers[1]!;
    const balance = await paid.balance(payer.address);
    const pay = (payment: unknown) =>
      fetch(server.url + '/api/annuity', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
        body,
      });
    for (const validBefore of [nowSeconds() + TEN_YEARS_SECONDS, UINT256_MAX]) {
      const before = { ...watch };
      await expectWindowRefused(await pay(await signExactPayment(payer, entry, { validBefore })), 300);
      expect(watch, String(validBefore)).toEqual(before);
    }
    expect(await paid.balance(payer.address)).toBe(balance);
    // At the edge: maxTimeoutSeconds plus the 60 s of skew is still taken (a client whose clock runs a minute ahead).
    const before = { ...watch };
    const edge = nowSeconds() + BigInt(entry.maxTimeoutSeconds) + 55n;
    expect((await pay(await signExactPayment(payer, entry, { validBefore: edge }))).status).toBe(200);
    expect(watch).toEqual({ claims: before.claims + 1, verifies: before.verifies + 1 });
    expect(await paid.balance(payer.address)).toBe(balance - 1000n);
  });

  it('refuses to key a payload without an EIP-3009 authorization', () => {
    const result = evmExactRail.identify(
      { x402Version: 2, payload: { signature: '0x' } } as never,
      { network: LOCAL_NETWORK, asset: '0x' } as never,
    );
    expect(result).toMatchObject({ ok: false });
  });
});
