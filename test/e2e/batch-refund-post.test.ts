import { x402Client } from '@x402/core/client';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createPublicClient } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { annuity } from '../../tools/annuity.js';
import { readOnchainChannel, type BatchSettlementEnvironment } from '../support/chain/batch-settlement.js';
import { BASE_NETWORK } from '../support/chain/batch-settlement-parties.js';
import { BASE_USDC, balanceOf, localTransport, localViemChain } from '../support/chain/token.js';
import type { HttpFacilitator } from '../support/http-facilitator.js';
import { decodeHeader, type TestServer } from '../support/server.js';
import { startBatchTollbooth } from '../support/batch-tollbooth.js';

/**
 * The official client's cooperative refund (`refundChannel`) probes the route with a bare GET and sends the refund with
 * GET: on a paid POST route such as POST /api/annuity, those two GETs are answered; every other GET stays a 405.
 */
const PRICE = 1000n; // annuity: $0.001 in USDC base units
const CALLS = 3;
const ARGS = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });

let env: BatchSettlementEnvironment;
let facilitator: HttpFacilitator;
let server: TestServer;
let lane: ReturnType<typeof payer>;

beforeAll(async () => {
  ({ env, facilitator, server } = await startBatchTollbooth({
    payers: 1,
    price: PRICE,
    tools: [annuity],
    authorizerKey: generatePrivateKey(),
  }));
  lane = payer();
}, 120_000);

afterAll(async () => {
  await server?.close();
  await facilitator?.close();
  await env?.stop();
});

/** The payer's official client scheme (its channel state in memory) and a fetch that pays with it. */
function payer() {
  const account = env.payers[0]!;
  const reader = createPublicClient({ chain: localViemChain(env.chain), transport: localTransport(env.chain) });
  const scheme = new BatchClientScheme(toClientEvmSigner(account, reader), {
    depositStrategy: ({ requestAmount }) => BigInt(requestAmount) * 10n,
  });
  const client = new x402Client().register(BASE_NETWORK, scheme);
  return { account, scheme, client, pay: wrapFetchWithPayment(fetch, client) };
}

const url = () => `${server.url}${annuity.path}`;
const post = (pay: typeof fetch) =>
  pay(url(), { method: 'POST', body: ARGS, headers: { 'content-type': 'application/json' } });

describe('a cooperative refund on a paid POST route (batch settlement on)', () => {
  it('answers a bare GET with the challenge of its batch-settlement entries only', async () => {
    const res = await fetch(url());
    expect(res.status).toBe(402);
    const required = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
    expect(required.x402Version).toBe(2);
    expect(required.accepts.length).toBeGreaterThan(0);
    expect(required.accepts.every((entry) => entry.scheme === 'batch-settlement')).toBe(true);
    // The same entry a POST's challenge carries: a refund built from it matches the route's own offer.
    const posted = await fetch(url(), { method: 'POST' });
    const offered = (decodeHeader(posted.headers.get('payment-required')) as PaymentRequired).accepts;
    expect(offered).toContainEqual(required.accepts[0]);
  });

  it('refunds, through the official client, a channel opened by paying POST /api/annuity', async () => {
    const { account, scheme, pay } = lane;
    const before = await balanceOf(env.chain, BASE_USDC, account.address);
    const settlesBefore = facilitator.calls.settle;
    for (let i = 0; i < CALLS; i++) expect((await post(pay)).status).toBe(200);
    const [channel] = await server.runtime.store.channels!.list();
    const channelId = channel!.channelId as `0x${string}`;
    const charged = BigInt(CALLS) * PRICE;
    expect(channel).toMatchObject({ chargedCumulativeAmount: charged.toString() });
    const deposited = (await readOnchainChannel(env.chain, channelId)).balance;
    expect(deposited).toBe(10n * PRICE);

    const refund = await scheme.refund(url());
    expect(refund.success).toBe(true);
    expect(refund.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    // One deposit and one refund went through the facilitator; the vouchers did not.
    expect(facilitator.calls.settle - settlesBefore).toBe(2);
    expect(await balanceOf(env.chain, BASE_USDC, account.address)).toBe(before - charged);
    expect((await readOnchainChannel(env.chain, channelId)).balance).toBe(charged);
    const receipts = await server.runtime.store.ledger.listReceipts({ limit: 20 });
    expect(receipts.find((r) => r.kind === 'refund')).toMatchObject({
      status: 'settled',
      channelId,
      transaction: refund.transaction,
      amount: (deposited - charged).toString(),
    });
    expect(receipts.filter((r) => r.kind === 'voucher' || r.kind === 'deposit')).toHaveLength(CALLS);
  }, 120_000);

  it('answers a GET carrying any other payment with 405, without reading or charging it', async () => {
    const posted = await fetch(url(), { method: 'POST' });
    const required = decodeHeader(posted.headers.get('payment-required')) as PaymentRequired;
    const batch = required.accepts.find((entry) => entry.scheme === 'batch-settlement') as PaymentRequirements;
    // A voucher (on top of a fresh deposit: the refund emptied the channel) that would pay the POST.
    const voucher = await lane.client.createPaymentPayload({ ...required, accepts: [batch] });
    const [before] = await server.runtime.store.channels!.list();
    const settles = facilitator.calls.settle;
    const answers = await Promise.all([
      fetch(url(), { headers: { 'payment-signature': Buffer.from(JSON.stringify(voucher)).toString('base64') } }),
      fetch(url(), { headers: { 'payment-signature': 'not-a-payment' } }),
      fetch(url(), { method: 'HEAD' }),
    ]);
    expect(answers.map((res) => res.status)).toEqual([405, 405, 405]);
    expect(answers[0]!.headers.get('allow')).toBe('POST, OPTIONS');
    expect(((await answers[0]!.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
    expect(facilitator.calls.settle).toBe(settles);
    expect((await server.runtime.store.channels!.list())[0]).toEqual(before);
  });
});
