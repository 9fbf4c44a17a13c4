import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizationState, ALREADY_USED_REASONS, meansAlreadyUsed } from '../../src/agent/chain-check.js';
import { BASE_MAINNET, type NetworkEntry } from '../../src/shared/networks.js';
import { startBaseEnvironment, type BaseEnvironment } from '../support/chain/permit2-env.js';
import { officialUptoPayment } from '../support/chain/permit2-sign.js';
import { encodePayment, officialPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

let base: BaseEnvironment;
let server: TestServer;
let networks: NetworkEntry[];
const body = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });

beforeAll(async () => {
  base = await startBaseEnvironment(2, { permit2: { approved: 2 } });
  server = await startTestServer(base.env);
  networks = [...server.runtime.config.networks];
}, 120_000);
afterAll(async () => {
  await server?.close();
  await base?.stop();
});

const challenge = async () =>
  decodeHeader(
    (await fetch(server.url + '/api/annuity', { method: 'POST' })).headers.get('payment-required'),
  ) as PaymentRequired;
const settle = async (payment: PaymentPayload) =>
  (
    await fetch(server.url + '/api/annuity', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
      body,
    })
  ).status;
const state = (payment: PaymentPayload, table = networks) =>
  authorizationState(payment, { network: BASE_MAINNET, asset: base.token }, table, 5000);

describe('refusal reasons that mean "already used"', () => {
  it('are recognised from the one list, and from their shape, never from unrelated reasons', () => {
    for (const reason of ALREADY_USED_REASONS) expect(meansAlreadyUsed(reason)).toBe(true);
    expect(meansAlreadyUsed('invalid_exact_evm_nonce_already_used')).toBe(true);
    expect(meansAlreadyUsed('some_scheme_nonce_already_used')).toBe(true);
    expect(meansAlreadyUsed('invalid_exact_evm_signature')).toBe(false);
    expect(meansAlreadyUsed('facilitator_unavailable')).toBe(false);
    expect(meansAlreadyUsed(undefined)).toBe(false);
  });
});

describe('asking the chain whether a sent payment was used', () => {
  it('reads an EIP-3009 authorization as unused before it settles and used after', async () => {
    const payment = await officialPayment(base.payers[0]!, await challenge(), BASE_MAINNET);
    expect(await state(payment)).toEqual({ type: 'unused' });
    expect(await settle(payment)).toBe(200);
    expect(await state(payment)).toEqual({ type: 'used' });
  });

  it("reads a Permit2 nonce's bit as unused before it settles and used after", async () => {
    const payment = await officialUptoPayment(base.payers[1]!, await challenge(), BASE_MAINNET);
    expect(await state(payment)).toEqual({ type: 'unused' });
    expect(await settle(payment)).toBe(200);
    expect(await state(payment)).toEqual({ type: 'used' });
  });

  it('says unknown, never unused, when no RPC is configured or the RPC cannot be reached', async () => {
    const payment = await officialPayment(base.payers[0]!, await challenge(), BASE_MAINNET);
    const withoutRpc = networks.map((n) => (n.id === BASE_MAINNET ? { ...n, rpcUrl: undefined } : n)) as NetworkEntry[];
    expect(await state(payment, withoutRpc)).toMatchObject({
      type: 'unknown',
      why: expect.stringMatching(/no RPC URL is configured for eip155:8453/),
    });
    const deadRpc = networks.map((n) => (n.id === BASE_MAINNET ? { ...n, rpcUrl: 'http://127.0.0.1:9' } : n));
    expect(await state(payment, deadRpc)).toMatchObject({
      type: 'unknown',
      why: expect.stringMatching(/^the chain could not be asked/),
    });
  });

  it('says unknown for a network this client cannot look up', async () => {
    const payment = await officialPayment(base.payers[0]!, await challenge(), BASE_MAINNET);
    expect(await authorizationState(payment, { network: 'stellar:pubnet', asset: 'C' }, networks, 1000)).toMatchObject({
      type: 'unknown',
    });
  });
});
