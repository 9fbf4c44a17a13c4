import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeTools, paidTools as tools } from '../../tools/index.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

type ErrorBody = { error: { code: string; message: string; field?: string } };
/** A payment header that would be refused if it were ever read: an unknown field is answered before it is looked at. */
const fakePayment = { 'payment-signature': 'bm90IGEgcGF5bWVudA==' };
const TOKEN = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

function query(fields: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) params.set(key, String(value));
  return params.toString();
}

/** Calls a route with the given input where that route reads it: the query string (GET) or a JSON body (POST). */
function call(
  method: 'GET' | 'POST' | 'HEAD',
  path: string,
  input: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  if (method === 'POST') {
    return fetch(server.url + path, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(input),
    });
  }
  const qs = query(input);
  return fetch(server.url + path + (qs ? `?${qs}` : ''), { method, headers });
}

describe('every tool refuses an unknown field before any payment is read', () => {
  it.each(tools.map((tool) => [tool.name, tool] as const))(
    '%s answers an unknown field with 400 naming it, never 402, even with a payment attached',
    async (_name, tool) => {
      const input = { ...(tool.example as Record<string, unknown> | undefined), zzUnknown: 'x' };
      const res = await call(tool.method, tool.path, input, fakePayment);
      expect(res.status).toBe(400);
      expect(res.headers.get('payment-required')).toBeNull();
      const { error } = (await res.json()) as ErrorBody;
      expect(error.code).toBe('invalid_input');
      expect(error.field).toBe('zzUnknown');
      expect(error.message).toMatch(/^Unknown field: zzUnknown\. This endpoint takes: /);
      expect(error.message).toContain('Nothing was charged');
    },
  );

  const validFree: Record<string, Record<string, unknown>> = {
    'smm-quote': { serviceId: 1, quantity: 100 },
    'smm-services': { q: 'likes' },
    'smm-order-status': {},
  };
  it.each(freeTools.map((tool) => [tool.name, tool] as const))(
    'free %s answers an unknown field with 400 naming it',
    async (_name, tool) => {
      const path = tool.path.replace(':orderId', 'ord_123');
      const res = await call(tool.method, path, { ...validFree[tool.name], zzUnknown: 'x' });
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as ErrorBody;
      expect(error).toMatchObject({ code: 'invalid_input', field: 'zzUnknown' });
    },
  );

  it('keeps path parameters of free endpoints as inputs: /v1/smm-order/:orderId is not refused for orderId', async () => {
    const res = await fetch(`${server.url}/v1/smm-order/ord_123`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as ErrorBody).error.message).toContain(
      'No order ord_123 was placed through this server',
    );
  });
});

describe('a typo in a paid GET query does not buy a report on the defaults', () => {
  it('answers GET /report?chian=base with 400 "Unknown field: chian", with or without a payment', async () => {
    for (const headers of [{}, fakePayment]) {
      const res = await fetch(`${server.url}/report?chian=base&token=${TOKEN}`, { headers });
      expect(res.status).toBe(400);
      expect(res.headers.get('payment-required')).toBeNull();
      const { error } = (await res.json()) as ErrorBody;
      expect(error).toMatchObject({ code: 'invalid_input', field: 'chian' });
      expect(error.message).toBe(
        'Unknown field: chian. This endpoint takes: chain, token, wallet, address, contract. Nothing was charged.',
      );
    }
  });

  it('names several unknown fields at once', async () => {
    const res = await fetch(`${server.url}/report?token=${TOKEN}&chian=base&walet=x`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.message).toMatch(/^Unknown fields: chian, walet\./);
  });

  it('answers a HEAD probe with a typo with 400, while bare GET and HEAD probes still get the 402 with the price', async () => {
    expect((await fetch(`${server.url}/report?chian=base&token=${TOKEN}`, { method: 'HEAD' })).status).toBe(400);
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(`${server.url}/report`, { method });
      expect(res.status, method).toBe(402);
      expect(res.headers.get('payment-required'), method).toBeTruthy();
    }
    expect((await fetch(`${server.url}/report?chain=base&token=${TOKEN}`)).status).toBe(402);
  });
});

describe('unknown fields in a POST body', () => {
  it('answers a misspelt body field with 400 naming it and the fields the endpoint takes', async () => {
    const res = await call('POST', '/api/annuity', { payment: 100, ratePerPeriod: 0.05, periods: 10, tipe: 'due' });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as ErrorBody;
    expect(error).toMatchObject({ code: 'invalid_input', field: 'tipe' });
    expect(error.message).toBe(
      'Unknown field: tipe. This endpoint takes: payment, ratePerPeriod, periods, type. Nothing was charged.',
    );
  });

  it('refuses unknown fields inside nested objects too, with the dotted path', async () => {
    const res = await call('POST', '/api/geo-distance', { from: { lat: 1, lng: 2, alt: 3 }, to: { lat: 0, lng: 0 } });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as ErrorBody;
    expect(error).toMatchObject({ code: 'invalid_input', field: 'from.alt' });
    expect(error.message).toBe('Unknown field: from.alt. from takes: lat, lng. Nothing was charged.');
  });

  it('reports an unknown field before other problems of the same body', async () => {
    const res = await call('POST', '/api/annuity', { payment: 'lots', periodz: 10 });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.field).toBe('periodz');
  });
});
