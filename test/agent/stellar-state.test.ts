import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizationState } from '../../src/agent/chain-check.js';
import { StellarExactPayer } from '../../src/agent/stellar-payer.js';
import type { NetworkEntry } from '../../src/shared/networks.js';
import { startStellarEnvironment, type StellarEnvironment } from '../support/chain/stellar.js';
import { encodePayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

let stellar: StellarEnvironment;
let server: TestServer;
let networks: NetworkEntry[];
const body = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });

beforeAll(async () => {
  stellar = await startStellarEnvironment({ payers: 1 });
  server = await startTestServer(stellar.env);
  networks = [stellar.networkEntry as unknown as NetworkEntry];
}, 120_000);
afterAll(async () => {
  await server?.close();
  await stellar?.stop();
});

/** A payment of the annuity's Stellar option, signed by the agent's payer and not sent. */
async function signed(): Promise<PaymentPayload> {
  const res = await fetch(server.url + '/api/annuity', { method: 'POST' });
  const challenge = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
  const accepted = challenge.accepts.find((a) => a.network === stellar.network) as PaymentRequirements;
  const payer = new StellarExactPayer(stellar.payers[0]!, () => stellar.rpc.url);
  const { payload } = await payer.createPaymentPayload(2, accepted);
  return { x402Version: 2, resource: challenge.resource, accepted, payload };
}
const send = async (payment: PaymentPayload) =>
  (
    await fetch(server.url + '/api/annuity', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
      body,
    })
  ).status;
const state = (payment: PaymentPayload, table = networks) =>
  authorizationState(payment, { network: stellar.network, asset: stellar.usdc.contract }, table, 5000);

describe('asking the Stellar network whether a sent payment was used', () => {
  it('says used once the payment settled, unknown while an unsent one could still land, unused once it expired', async () => {
    const settled = await signed();
    const unsent = await signed();
    expect(await state(unsent)).toMatchObject({ type: 'unknown', why: expect.stringMatching(/could still land/) });
    expect(await send(settled)).toBe(200);
    expect(await state(settled)).toEqual({ type: 'used' });
    expect(await state(unsent)).toMatchObject({ type: 'unknown' });
    // Past both expirations the nonce entries are gone: the transfer events of the window answer instead.
    stellar.rpc.ledger.advance(80);
    expect(await state(settled)).toEqual({ type: 'used' });
    expect(await state(unsent)).toEqual({ type: 'unused' });
  });

  it('says unknown without an RPC URL for the network, or when the RPC cannot be reached', async () => {
    const payment = await signed();
    const without = networks.map((n) => ({ ...n, rpcUrl: undefined }));
    expect(await state(payment, without)).toMatchObject({ type: 'unknown', why: expect.stringMatching(/no RPC URL/) });
    const dead = networks.map((n) => ({ ...n, rpcUrl: 'http://127.0.0.1:9' }));
    expect(await state(payment, dead)).toMatchObject({
      type: 'unknown',
      why: expect.stringMatching(/^the chain could not be asked/),
    });
  });
});
