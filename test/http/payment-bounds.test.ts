import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAYMENT_LIMITS } from '../../src/payments/reading/bounds.js';
import { connectHttpClient } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';

const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
const accepted = {
  scheme: 'exact',
  network: 'eip155:8453',
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  amount: '1000',
  payTo: '0x1',
  maxTimeoutSeconds: 300,
  extra: {},
};
const envelope = (extra: Record<string, unknown>) => ({ x402Version: 2, accepted, payload: {}, ...extra });
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
const nested = (levels: number): unknown =>
  Array.from({ length: levels }).reduce<unknown>((node) => ({ n: node }), 'leaf');

/** One payment over each bound, and the limit its refusal must name. */
const OVER_THE_LIMITS: Array<[string, unknown, string]> = [
  ['nesting', envelope({ payload: nested(PAYMENT_LIMITS.maxDepth + 5) }), `${PAYMENT_LIMITS.maxDepth} levels`],
  [
    'a long string',
    envelope({ payload: { signature: '0x' + 'a'.repeat(PAYMENT_LIMITS.maxStringChars) } }),
    `${PAYMENT_LIMITS.maxStringChars} characters`,
  ],
  [
    'a huge enum',
    envelope({
      extensions: {
        bazaar: { info: {}, schema: { enum: Array.from({ length: PAYMENT_LIMITS.maxArrayItems + 1 }, (_, i) => i) } },
      },
    }),
    `${PAYMENT_LIMITS.maxArrayItems} items`,
  ],
  [
    'a wide object',
    envelope({
      payload: Object.fromEntries(Array.from({ length: PAYMENT_LIMITS.maxObjectKeys + 1 }, (_, i) => [`k${i}`, i])),
    }),
    `${PAYMENT_LIMITS.maxObjectKeys} keys`,
  ],
  [
    'too many extensions',
    envelope({
      extensions: Object.fromEntries(
        Array.from({ length: PAYMENT_LIMITS.maxExtensions + 1 }, (_, i) => [`e${i}`, { info: {} }]),
      ),
    }),
    `${PAYMENT_LIMITS.maxExtensions} extensions`,
  ],
  [
    'one big extension',
    envelope({
      extensions: { bazaar: { info: {}, schema: { description: 'd'.repeat(PAYMENT_LIMITS.maxExtensionBytes) } } },
    }),
    `${PAYMENT_LIMITS.maxExtensionBytes} bytes`,
  ],
];

let server: TestServer;
let mcp: Client;
beforeAll(async () => {
  server = await startTestServer();
  mcp = await connectHttpClient(server.url);
});
afterAll(async () => {
  await mcp?.close();
  await server?.close();
});

async function pay(header: string): Promise<{ status: number; body: { error?: { code?: string; message?: string } } }> {
  const res = await fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': header },
    body: JSON.stringify(args),
  });
  return { status: res.status, body: (await res.json()) as { error?: { code?: string; message?: string } } };
}

describe('payments over a bound are refused with 400 and a reason, before anything else reads them', () => {
  it.each(OVER_THE_LIMITS)('over HTTP: %s', async (_what, payment, limit) => {
    const { status, body } = await pay(b64(payment));
    expect(status).toBe(400);
    expect(body.error?.code).toBe('invalid_payment');
    expect(body.error?.message).toContain(limit);
  });

  it.each(OVER_THE_LIMITS)('over MCP: %s', async (_what, payment, limit) => {
    const result = await mcp.callTool({ name: 'annuity', arguments: args, _meta: { 'x402/payment': payment } });
    expect(result.isError).toBe(true);
    const text = JSON.stringify(result.content);
    expect(text).toContain('invalid_payment');
    expect(text).toContain(limit);
  });

  it('refuses a payment header longer than the limit with a reason (headers that long still reach the app)', async () => {
    const { status, body } = await pay('A'.repeat(PAYMENT_LIMITS.maxHeaderChars + 4));
    expect(status).toBe(400);
    expect(body.error?.message).toContain(`${PAYMENT_LIMITS.maxHeaderChars} characters`);
  });
});
