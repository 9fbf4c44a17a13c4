import { ExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_MAINNET } from '../../src/shared/networks.js';
import { startBaseEnvironment, type BaseEnvironment } from '../support/chain/permit2-env.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { PANEL_KEY, startSmmPanelLookalike, type SmmPanelLookalike } from '../support/upstreams/smm-panel.js';

const ORDER_PRICE = 3_000_000n;

let base: BaseEnvironment;
let panel: SmmPanelLookalike;
/** The default: smm-order advertised as the seed published it. */
let seed: TestServer;
/** SMM_ORDER_CANONICAL_V2=on. */
let canonical: TestServer;

beforeAll(async () => {
  [base, panel] = await Promise.all([startBaseEnvironment(2), startSmmPanelLookalike()]);
  const env = { ...base.env, SMM_PANEL_URL: `${panel.url}/api/v2`, SMM_PANEL_KEY: PANEL_KEY };
  [seed, canonical] = await Promise.all([
    startTestServer(env),
    startTestServer({ ...env, SMM_ORDER_CANONICAL_V2: 'on' }),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([seed?.close(), canonical?.close()]);
  await Promise.all([panel?.stop(), base?.stop()]);
});

/** The stock client as its README sets it up (every EVM network, its default choice), allowed to spend the $3 price. */
function stockFetch(payer: BaseEnvironment['payers'][number]) {
  const client = new x402Client();
  client.register('eip155:*', new ExactEvmScheme(payer));
  client.setSpendControls({ maxAmountPerPayment: '$3' });
  return wrapFetchWithPayment(fetch, client);
}

const order = (n: number) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ serviceId: 1, link: `https://www.instagram.com/p/canonical-${n}/`, quantity: 200 }),
});

async function challengeOf(server: TestServer): Promise<PaymentRequired> {
  const res = await fetch(`${server.url}/smm/v1/smm-order`, { method: 'POST' });
  expect(res.status).toBe(402);
  return decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
}

describe('smm-order with SMM_ORDER_CANONICAL_V2', () => {
  it('keeps the seed form by default: one v2 entry named `base`, with the version-1 fields', async () => {
    const { x402Version, accepts } = await challengeOf(seed);
    expect(x402Version).toBe(2);
    expect(accepts).toHaveLength(1);
    expect(accepts[0]).toMatchObject({ network: 'base', amount: '3000000', maxAmountRequired: '3000000' });
  });

  it('advertises one canonical v2 entry on eip155:8453 when on, without the version-1 fields', async () => {
    const { x402Version, accepts } = await challengeOf(canonical);
    expect(x402Version).toBe(2);
    expect(accepts).toEqual([
      {
        scheme: 'exact',
        network: BASE_MAINNET,
        asset: base.token,
        amount: '3000000',
        payTo: base.payTo,
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2' },
      },
    ]);
  });

  it('is paid by the stock @x402/fetch client when on: the order is placed once and $3 settles', async () => {
    const payer = base.payers[0]!;
    const before = { balance: await base.balance(payer.address), orders: panel.orders.length };
    const res = await stockFetch(payer)(`${canonical.url}/smm/v1/smm-order`, order(1));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ordered', chargeUsd: 3 });
    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({ success: true, network: BASE_MAINNET });
    expect(panel.orders.length).toBe(before.orders + 1);
    expect(await base.balance(payer.address)).toBe(before.balance - ORDER_PRICE);
  });

  it('cannot be paid by the stock client in the seed form, and nothing is ordered or paid', async () => {
    const payer = base.payers[1]!;
    const before = { balance: await base.balance(payer.address), orders: panel.orders.length };
    await expect(stockFetch(payer)(`${seed.url}/smm/v1/smm-order`, order(2))).rejects.toThrow(
      /network|scheme|support/i,
    );
    expect(panel.orders.length).toBe(before.orders);
    expect(await base.balance(payer.address)).toBe(before.balance);
  });
});
