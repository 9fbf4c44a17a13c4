import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttpClient, connectStdioClient } from '../support/mcp.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { startTestServer, type TestServer } from '../support/server.js';

let paid: PaidEnvironment;
let server: TestServer;
let httpClient: Client;
let stdio: { client: Client; stderr: () => string };
const args = { from: { lat: 51.5074, lng: -0.1278 }, to: { lat: 48.8566, lng: 2.3522 } };

beforeAll(async () => {
  paid = await startPaidEnvironment(3);
  server = await startTestServer(paid.env);
  httpClient = await connectHttpClient(server.url);
  // The stdio server shares the HTTP server's SQLite file: one replay guard across transports and processes.
  stdio = await connectStdioClient({ ...paid.env, DATA_DIR: server.dataDir, LOG_LEVEL: 'warn' });
}, 120_000);
afterAll(async () => {
  await stdio?.client.close();
  await httpClient?.close();
  await server?.close();
  await paid?.stop();
});

async function localEntry(client: Client): Promise<PaymentRequirements> {
  const unpaid = await client.callTool({ name: 'geo-distance', arguments: args });
  const challenge = unpaid.structuredContent as unknown as PaymentRequired;
  const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK);
  if (!entry) throw new Error('the local network is not advertised');
  return entry;
}

describe('paid MCP calls settle on the local chain', () => {
  it('pays over streamable HTTP with the payment object in _meta and returns the receipt in _meta', async () => {
    const payer = paid.payers[0]!;
    const before = await paid.balance(payer.address);
    const payment = await signExactPayment(payer, await localEntry(httpClient));
    const result = await httpClient.callTool({
      name: 'geo-distance',
      arguments: args,
      _meta: { 'x402/payment': payment },
    });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { km: number }).km).toBeCloseTo(343.56, 1);
    const receipt = result._meta?.['x402/payment-response'] as { success: boolean; transaction: string };
    expect(receipt.success).toBe(true);
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await paid.balance(payer.address)).toBe(before - 1000n);
  });

  it('pays over stdio with the payment as a base64 string in _meta', async () => {
    const payer = paid.payers[1]!;
    const before = await paid.balance(payer.address);
    const payment = await signExactPayment(payer, await localEntry(stdio.client));
    const result = await stdio.client.callTool({
      name: 'geo-distance',
      arguments: args,
      _meta: { 'x402/payment': encodePayment(payment) },
    });
    expect(result.isError).toBeFalsy();
    const receipt = result._meta?.['x402/payment-response'] as { success: boolean };
    expect(receipt.success).toBe(true);
    expect(await paid.balance(payer.address)).toBe(before - 1000n);
  });

  it('refuses on MCP a payment already spent over HTTP, and on HTTP one spent over MCP', async () => {
    const payer = paid.payers[2]!;
    const entry = await localEntry(httpClient);
    const viaHttp = await signExactPayment(payer, entry);
    const res = await fetch(server.url + '/api/geo-distance', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(viaHttp) },
      body: JSON.stringify(args),
    });
    expect(res.status).toBe(200);
    for (const client of [httpClient, stdio.client]) {
      const again = await client.callTool({
        name: 'geo-distance',
        arguments: args,
        _meta: { 'x402/payment': viaHttp },
      });
      expect(again.isError).toBe(true);
      expect((again.structuredContent as { error: string }).error).toBe('payment_already_used');
    }
    const viaMcp = await signExactPayment(payer, entry);
    const ok = await stdio.client.callTool({
      name: 'geo-distance',
      arguments: args,
      _meta: { 'x402/payment': viaMcp },
    });
    expect(ok.isError).toBeFalsy();
    const replay = await fetch(server.url + '/api/geo-distance', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(viaMcp) },
      body: JSON.stringify(args),
    });
    expect(replay.status).toBe(402);
  });

  it('keeps stdout clean: the stdio server logs only to stderr', () => {
    expect(stdio.stderr()).toMatch(/"level"/);
  });
});
