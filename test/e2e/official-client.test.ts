import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { startTestServer, type TestServer } from '../support/server.js';

let paid: PaidEnvironment;
let server: TestServer;
beforeAll(async () => {
  paid = await startPaidEnvironment(1);
  server = await startTestServer(paid.env);
}, 120_000);
afterAll(async () => {
  await server?.close();
  await paid?.stop();
});

describe('interoperability with the official x402 fetch client', () => {
  it('pays a 402 from our route with @x402/fetch and an ExactEvmScheme client, and reads our receipt', async () => {
    const payer = paid.payers[0]!;
    const client = new x402Client((_version, reqs) => reqs.find((r) => r.network === LOCAL_NETWORK) ?? reqs[0]!);
    client.register('eip155:*', new ExactEvmScheme(payer));
    const payingFetch = wrapFetchWithPayment(fetch, client);
    const before = await paid.balance(payer.address);
    const res = await payingFetch(`${server.url}/api/card-validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ number: '4111 1111 1111 1111' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ valid: true, brand: 'visa', length: 16 });
    const receipt = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!);
    expect(receipt.success).toBe(true);
    expect(receipt.network).toBe(LOCAL_NETWORK);
    expect(await paid.balance(payer.address)).toBe(before - 1000n);
  });
});
