import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, PAYMENT_CODES, refusalBody } from '../../src/shared/errors.js';
import { connectHttpClient } from '../support/mcp.js';
import { encodePayment } from '../support/payer.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let client: Client;
beforeAll(async () => {
  server = await startTestServer();
  client = await connectHttpClient(server.url);
});
afterAll(async () => {
  await client.close();
  await server.close();
});

const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
/** A well-formed version-1 payment: refused by a version-2 tool before it is matched or verified. */
const v1Payment = { x402Version: 1, scheme: 'exact', network: 'base', payload: { signature: '0x00' } };

describe("a refused payment's message", () => {
  it('names no transport on MCP: the MCP encoder adds that the payment goes in _meta["x402/payment"]', async () => {
    const result = await client.callTool({ name: 'annuity', arguments: args, _meta: { 'x402/payment': v1Payment } });
    expect(result.isError).toBe(true);
    const { error } = JSON.parse((result.content as Array<{ text: string }>)[0]!.text) as {
      error: { code: string; message: string; retryable: boolean };
    };
    expect(error.code).toBe('invalid_x402_version');
    expect(error.message).toMatch(/version 2; the payment says version 1/);
    expect(error.message).toContain('params._meta["x402/payment"]');
    expect(error.message).not.toMatch(/PAYMENT-SIGNATURE|X-PAYMENT|header/);
  });

  it('gets the HTTP hint over HTTP: the header of the version the endpoint speaks', async () => {
    const res = await fetch(server.url + '/api/annuity', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(v1Payment) },
      body: JSON.stringify(args),
    });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('invalid_x402_version');
    expect(error.message).toContain('PAYMENT-SIGNATURE header');
    expect(error.message).not.toContain('_meta');
  });
});

describe('the code table', () => {
  it("holds the broker's refusals, with the retry advice their bodies always had (retryable unless a 400)", () => {
    for (const code of PAYMENT_CODES) {
      const { http, retryable } = ERROR_CODES[code];
      if (http === 402) continue; // answered with the challenge, no body
      expect(retryable, code).toBe(http !== 400);
      expect(refusalBody({ reason: code, status: http, message: 'M.' }, 'H.')).toEqual({
        error: { code, message: 'M. H.', retryable },
      });
    }
  });

  it('answers a reason outside the table (an MPP reason) retryable unless the refusal is a 400', () => {
    expect(refusalBody({ reason: 'mpp_disabled', status: 400, message: 'M.' }, '').error.retryable).toBe(false);
    expect(refusalBody({ reason: 'mpp_x', status: 409, message: 'M.' }, '').error).toEqual({
      code: 'mpp_x',
      message: 'M.',
      retryable: true,
    });
  });
});
