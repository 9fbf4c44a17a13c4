import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

function post(path: string, body: string, headers: Record<string, string> = {}) {
  return fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
}
const errorOf = async (res: Response) =>
  ((await res.json()) as { error: { code: string; field?: string; message: string } }).error;

describe('HTTP routes validate before they charge', () => {
  it('answers a present but invalid body with 400 naming the field, never 402', async () => {
    const res = await post('/api/annuity', JSON.stringify({ payment: 'lots', ratePerPeriod: 0.05, periods: 10 }));
    expect(res.status).toBe(400);
    expect(res.headers.get('payment-required')).toBeNull();
    const error = await errorOf(res);
    expect(error).toMatchObject({ code: 'invalid_input', field: 'payment' });
    expect(error.message).toMatch(/payment/);
  });

  it('names nested fields with a dotted path', async () => {
    const res = await post('/api/geo-distance', JSON.stringify({ from: { lat: 91, lng: 0 }, to: { lat: 0, lng: 0 } }));
    expect(res.status).toBe(400);
    expect((await errorOf(res)).field).toBe('from.lat');
  });

  it('answers a valid body without payment with the 402 challenge', async () => {
    const res = await post('/api/annuity', JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 }));
    expect(res.status).toBe(402);
    expect(res.headers.get('payment-required')).toBeTruthy();
  });

  it('answers a body that is not JSON with 400', async () => {
    const res = await post('/api/annuity', '{"payment": 100,');
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe('invalid_input');
  });

  it('answers a JSON array or scalar body with 400', async () => {
    for (const body of ['[1,2,3]', '42', '"text"', 'null']) {
      const res = await post('/api/annuity', body);
      expect(res.status, body).toBe(400);
    }
  });

  it('answers an oversized body with 413 on a small route and on solidity-scan past 512 KB', async () => {
    const small = await post('/api/password-strength', JSON.stringify({ password: 'x'.repeat(70 * 1024) }));
    expect(small.status).toBe(413);
    expect((await errorOf(small)).code).toBe('payload_too_large');
    const huge = await post('/api/solidity-scan', JSON.stringify({ source: 'x'.repeat(700 * 1024) }));
    expect(huge.status).toBe(413);
  });

  it('answers a solidity source just over 512 KB with 400 naming source, and exactly 512 KB with the 402', async () => {
    const over = await post('/api/solidity-scan', JSON.stringify({ source: 'a'.repeat(512 * 1024 + 1) }));
    expect(over.status).toBe(400);
    expect((await errorOf(over)).field).toBe('source');
    const exact = await post('/api/solidity-scan', JSON.stringify({ source: 'a'.repeat(512 * 1024) }));
    expect(exact.status).toBe(402);
  });

  it('survives hostile strings and keys without a 5xx', async () => {
    const bodies = [
      '{"__proto__":{"polluted":true},"password":"x"}',
      '{"constructor":{"prototype":{"polluted":true}},"number":"4111"}',
      JSON.stringify({ password: '\u0000\u202e\ud83d\ude00'.repeat(100) }),
      JSON.stringify({ password: 'a'.repeat(2000) }),
      JSON.stringify({ number: '<script>alert(1)</script>' }),
      JSON.stringify({ number: '4111 1111 1111 1111', extra: { deeply: { nested: [1, [2, [3]]] } } }),
    ];
    for (const [i, body] of bodies.entries()) {
      const path = i % 2 === 0 ? '/api/password-strength' : '/api/card-validate';
      const res = await post(path, body);
      expect([400, 402], body.slice(0, 40)).toContain(res.status);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('HTTP routing', () => {
  it('answers the wrong method with 405 and an Allow header', async () => {
    const res = await fetch(server.url + '/api/annuity');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST, OPTIONS');
    expect((await errorOf(res)).code).toBe('method_not_allowed');
  });

  it('finds a route as Express matches paths: any letter case, one trailing slash, HEAD by the GET route', async () => {
    for (const path of ['/api/annuity', '/API/Annuity', '/api/annuity/'])
      expect((await post(path, '')).status, path).toBe(402);
    expect((await post('/api/annuity//', '')).status).toBe(404);
    const head = await fetch(server.url + '/Api/Development-Indicator/', { method: 'HEAD' });
    expect(head.status).toBe(402);
    expect(head.headers.get('payment-required')).not.toBeNull();
    const options = await fetch(server.url + '/api/annuity/', { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('access-control-allow-headers')).toMatch(/PAYMENT-SIGNATURE/);
    // A path with a parameter is still Express's: any order id reaches the tool, which says it placed no such order.
    const status = await fetch(server.url + '/v1/smm-order/abc');
    expect((await errorOf(status)).field).toBe('orderId');
  });

  it('answers an unknown path with a JSON 404', async () => {
    const res = await fetch(server.url + '/api/nope');
    expect(res.status).toBe(404);
    expect((await errorOf(res)).code).toBe('not_found');
  });

  it('reads GET inputs from the query string: a bare probe gets the 402, an invalid query a 400', async () => {
    expect((await fetch(server.url + '/api/development-indicator')).status).toBe(402);
    const bad = await fetch(
      server.url + '/api/development-indicator?country=GBR&indicator=NY.GDP.MKTP.CD&startYear=abc',
    );
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).field).toBe('startYear');
    const ok = await fetch(
      server.url + '/api/development-indicator?country=GBR&indicator=NY.GDP.MKTP.CD&startYear=2010',
    );
    expect(ok.status).toBe(402);
  });

  it('serves a health check that says whether development addresses are in use', async () => {
    const res = await fetch(server.url + '/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: 'ok',
      devPayTo: ['evm', 'svm', 'stellar', 'algorand'],
      facilitator: 'none',
    });
  });

  it('refuses a payment when no facilitator is configured, telling the operator what to set', async () => {
    const probe = (await (await fetch(server.url + '/api/annuity', { method: 'POST' })).json()) as {
      accepts: unknown[];
    };
    const authorization = {
      from: `0x${'1'.repeat(40)}`,
      to: `0x${'2'.repeat(40)}`,
      value: '1000',
      validAfter: '0',
      validBefore: '9999999999',
      nonce: `0x${'3'.repeat(64)}`,
    };
    const payment = Buffer.from(
      JSON.stringify({ x402Version: 2, accepted: probe.accepts[0], payload: { signature: '0x00', authorization } }),
    ).toString('base64');
    const res = await post('/api/annuity', JSON.stringify({ payment: 1, ratePerPeriod: 0, periods: 1 }), {
      'payment-signature': payment,
    });
    expect(res.status).toBe(402);
    const body = (await res.json()) as { error: string; message: string };
    expect(body.error).toBe('unsupported_payment_rail');
    expect(body.message).toMatch(/FACILITATOR_URL/);
  });
});
