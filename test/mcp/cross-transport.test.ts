import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { LOCAL_NETWORK, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, officialPayment } from '../support/payer.js';
import { startPaidServer, type PaidServer } from '../support/paid-server.js';
import { decodeHeader, type TestServer } from '../support/server.js';

/**
 * MCP challenges name the resource `mcp://tool/<name>`, HTTP challenges the route's URL; the payment options are the
 * same objects. A payment signed by the official x402 client against either challenge (it copies the resource into
 * the payment) pays for the tool on either transport, and only once: the replay guard is shared.
 */
let paid: PaidEnvironment;
let server: TestServer;
let mcp: Client;
let runs: Map<string, number>;
const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };

let setup: PaidServer;
beforeAll(async () => {
  ({ paid, server, mcp, runs } = setup = await startPaidServer(2, { tools: [annuity] as AnyToolDefinition[] }));
}, 120_000);
afterAll(() => setup?.stop());

async function httpChallenge(): Promise<PaymentRequired> {
  const res = await fetch(server.url + '/api/annuity', { method: 'POST' });
  return decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
}

async function mcpChallenge(): Promise<PaymentRequired> {
  const unpaid = await mcp.callTool({ name: 'annuity', arguments: args });
  return unpaid.structuredContent as unknown as PaymentRequired;
}

const overHttp = (payment: PaymentPayload) =>
  fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body: JSON.stringify(args),
  });
const overMcp = (payment: PaymentPayload) =>
  mcp.callTool({ name: 'annuity', arguments: args, _meta: { 'x402/payment': payment } });
const runCount = () => runs.get('annuity') ?? 0;

describe('one payment, either transport, once', () => {
  it('differs between the two challenges only in the resource URL', async () => {
    const [http, onMcp] = [await httpChallenge(), await mcpChallenge()];
    expect(onMcp.resource.url).toBe('mcp://tool/annuity');
    expect(http.resource.url).toMatch(/^http:\/\/.+\/api\/annuity$/);
    expect({ ...onMcp, resource: { ...onMcp.resource, url: http.resource.url } }).toEqual(http);
  });

  it('takes a payment signed against the MCP challenge over HTTP, then refuses it over MCP and HTTP', async () => {
    const payer = paid.payers[0]!;
    const payment = await officialPayment(payer, await mcpChallenge(), LOCAL_NETWORK);
    expect(payment.resource?.url).toBe('mcp://tool/annuity');
    const before = { balance: await paid.balance(payer.address), runs: runCount() };

    const first = await overHttp(payment);
    expect(first.status).toBe(200);
    expect(decodeHeader(first.headers.get('payment-response'))).toMatchObject({
      success: true,
      network: LOCAL_NETWORK,
    });

    const again = await overMcp(payment);
    expect(again.isError).toBe(true);
    expect(again.structuredContent).toMatchObject({ error: 'payment_already_used' });
    const third = await overHttp(payment);
    expect(third.status).toBe(402);
    expect(((await third.json()) as { error: string }).error).toBe('payment_already_used');

    expect(runCount()).toBe(before.runs + 1);
    expect(await paid.balance(payer.address)).toBe(before.balance - 1000n);
  });

  it('takes a payment signed against the HTTP challenge over MCP, then refuses it over HTTP and MCP', async () => {
    const payer = paid.payers[1]!;
    const payment = await officialPayment(payer, await httpChallenge(), LOCAL_NETWORK);
    expect(payment.resource?.url).toMatch(/^http:/);
    const before = { balance: await paid.balance(payer.address), runs: runCount() };

    const first = await overMcp(payment);
    expect(first.isError).toBeFalsy();
    expect(first._meta?.['x402/payment-response']).toMatchObject({
      success: true,
      network: LOCAL_NETWORK,
      payer: payer.address,
    });

    const again = await overHttp(payment);
    expect(again.status).toBe(402);
    expect(((await again.json()) as { error: string }).error).toBe('payment_already_used');
    const third = await overMcp(payment);
    expect(third.structuredContent).toMatchObject({ error: 'payment_already_used' });

    expect(runCount()).toBe(before.runs + 1);
    expect(await paid.balance(payer.address)).toBe(before.balance - 1000n);
  });
});
