import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { signCredential } from '../support/mpp.js';
import { countingTools, LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

// One paid call per payer, then one more every 5 s: a second call right after the first is always over the limit.
const PAYER_LIMITED = { RATE_LIMIT_PAYER_BURST: '1', RATE_LIMIT_PAYER_PER_MINUTE: '12' };
const body = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });
const url = (server: TestServer) => `${server.url}/api/annuity`;
const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body } as const;

let paid: PaidEnvironment;
let server: TestServer;
let runs: Map<string, number>;

beforeAll(async () => {
  paid = await startPaidEnvironment(2);
  const counted = countingTools([annuity] as AnyToolDefinition[]);
  runs = counted.runs;
  server = await startTestServer({ ...paid.env, ...PAYER_LIMITED }, { tools: counted.tools });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await paid?.stop();
});

/** Pays with MPP: the official mppx client signs a credential for a fresh challenge of the route. */
async function payMpp(payer: PaidEnvironment['payers'][number]): Promise<Response> {
  const credential = await signCredential(payer, url(server), { method: 'POST' });
  return fetch(url(server), { ...post, headers: { ...post.headers, authorization: credential } });
}

/** Pays with x402: an EIP-3009 payment for the local option of the route's challenge. */
async function payX402(payer: PaidEnvironment['payers'][number]): Promise<Response> {
  const challenge = decodeHeader(
    (await fetch(url(server), { method: 'POST' })).headers.get('payment-required'),
  ) as PaymentRequired;
  const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
  return fetch(url(server), {
    ...post,
    headers: { ...post.headers, 'payment-signature': encodePayment(await signExactPayment(payer, entry)) },
  });
}

describe('abuse limits on MPP payments', () => {
  it('count an MPP payer like an x402 one: over the limit, either protocol is refused with 429, nothing runs, nothing is charged', async () => {
    const payer = paid.payers[0]!;
    const first = await payMpp(payer);
    expect(first.status).toBe(200);
    const afterFirst = await paid.balance(payer.address);
    const ran = runs.get('annuity') ?? 0;

    const again = await payMpp(payer);
    expect(again.status).toBe(429);
    // A limit is not a payment failure: the one error body, as for x402, says which limit and how long to wait.
    expect(((await again.json()) as { error: { code: string; details: { limit: string } } }).error).toMatchObject({
      code: 'rate_limited',
      details: { limit: 'payer' },
    });
    expect(again.headers.get('payment-receipt')).toBeNull();
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const viaX402 = await payX402(payer);
    expect(viaX402.status).toBe(429);

    expect(runs.get('annuity')).toBe(ran);
    expect(await paid.balance(payer.address)).toBe(afterFirst);
    // Another payer is not held back.
    expect((await payMpp(paid.payers[1]!)).status).toBe(200);
  }, 60_000);
});
