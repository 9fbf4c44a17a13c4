import { request } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isJsonContentType } from '../../src/http/body.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const annuity = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });
type ErrorBody = { error: { code: string; message: string; retryable: boolean; field?: string } };

/** A raw POST (node:http, so no Content-Type is added for us), with a fake payment attached unless told otherwise. */
function post(
  path: string,
  body: Buffer | string | undefined,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; json: unknown }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, server.url);
    const req = request(
      url,
      {
        method: 'POST',
        headers: { ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const json = { 'content-type': 'application/json' };
/** A payment header that would be refused if it were ever read: these answers come before the payment is looked at. */
const fakePayment = { 'payment-signature': 'bm90IGEgcGF5bWVudA==' };

describe('a POST body must be JSON sent as JSON', () => {
  it('accepts application/json with a charset and application/*+json (the valid body then gets the 402)', async () => {
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'Application/JSON;charset=UTF-8',
      'application/vnd.api+json',
    ]) {
      const res = await post('/api/annuity', annuity, { 'content-type': type });
      expect(res.status, type).toBe(402);
    }
  });

  it('answers a body without a JSON Content-Type with 400 saying to send Content-Type: application/json, even with a payment', async () => {
    const types: Array<Record<string, string>> = [
      {},
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'multipart/form-data; boundary=x' },
    ];
    for (const headers of types) {
      const res = await post('/api/annuity', annuity, { ...headers, ...fakePayment });
      expect(res.status, JSON.stringify(headers)).toBe(400);
      expect(res.headers['payment-required']).toBeUndefined();
      const { error } = res.json as ErrorBody;
      expect(error).toMatchObject({ code: 'invalid_input', field: '(body)' });
      expect(error.message).toContain('Content-Type: application/json');
      expect(error.message).toContain('Nothing was charged');
    }
  });

  it('still answers an empty POST with the 402, with or without a Content-Type (a bare probe)', async () => {
    const types: Array<Record<string, string>> = [{}, json, { 'content-type': 'text/plain' }];
    for (const headers of types) {
      const res = await post('/api/annuity', undefined, headers);
      expect(res.status, JSON.stringify(headers)).toBe(402);
      expect(res.headers['payment-required']).toBeTruthy();
    }
    expect((await post('/api/annuity', '', json)).status).toBe(402);
  });

  it('answers a JSON body that is not an object with 400 "must be a JSON object" naming (body)', async () => {
    for (const body of ['null', '"hi"', '[1]', '3', 'true', '[]']) {
      const res = await post('/api/annuity', body, { ...json, ...fakePayment });
      expect(res.status, body).toBe(400);
      const { error } = res.json as ErrorBody;
      expect(error, body).toMatchObject({ code: 'invalid_input', field: '(body)' });
      expect(error.message, body).toMatch(
        /^The request body must be a JSON object of fields \(payment, ratePerPeriod, periods, type\)/,
      );
    }
  });

  it('answers a body that is not JSON at all with 400', async () => {
    for (const body of ['{"payment": 100,', '   ', 'payment=100']) {
      const res = await post('/api/annuity', body, json);
      expect(res.status, body).toBe(400);
      expect((res.json as ErrorBody).error).toMatchObject({ code: 'invalid_input', field: '(body)' });
    }
  });

  it('tells JSON media types from others', () => {
    expect(isJsonContentType('application/json')).toBe(true);
    expect(isJsonContentType('application/problem+json; charset=utf-8')).toBe(true);
    expect(isJsonContentType('application/jsonx')).toBe(false);
    expect(isJsonContentType('text/json')).toBe(false);
    expect(isJsonContentType('application/+json')).toBe(false);
    expect(isJsonContentType(undefined)).toBe(false);
  });
});

describe('POST routes read nothing from the query string', () => {
  it('refuses query parameters on a POST route with 400 naming them, also on a bare probe', async () => {
    const withBody = await post('/api/stablecoins?peg=EUR', '{}', { ...json, ...fakePayment });
    expect(withBody.status).toBe(400);
    const { error } = withBody.json as ErrorBody;
    expect(error).toMatchObject({ code: 'invalid_input', field: 'peg' });
    expect(error.message).toContain('Unknown query parameter: peg');
    expect(error.message).toContain('JSON body');
    expect((await post('/api/annuity?payment=100', undefined, {})).status).toBe(400);
  });
});

describe('Content-Encoding', () => {
  it('accepts identity, gzip, deflate and br', async () => {
    const bodies: Array<[string, Buffer]> = [
      ['identity', Buffer.from(annuity)],
      ['gzip', gzipSync(annuity)],
      ['deflate', deflateSync(annuity)],
      ['br', brotliCompressSync(annuity)],
    ];
    for (const [coding, body] of bodies) {
      const res = await post('/api/annuity', body, { ...json, 'content-encoding': coding });
      expect(res.status, coding).toBe(402);
    }
  });

  it('answers an encoding it cannot read with 415 unsupported_media_type, never a 500', async () => {
    for (const coding of ['foo', 'zstd', 'compress']) {
      const res = await post('/api/annuity', annuity, { ...json, 'content-encoding': coding, ...fakePayment });
      expect(res.status, coding).toBe(415);
      const { error } = res.json as ErrorBody;
      expect(error).toMatchObject({ code: 'unsupported_media_type', retryable: false, field: '(body)' });
      expect(error.message).toContain(coding);
      expect(error.message).toContain('gzip, deflate or br');
    }
  });

  it('answers a body that does not decompress as its Content-Encoding says with 400, never a 500', async () => {
    for (const coding of ['gzip', 'deflate', 'br']) {
      const res = await post('/api/annuity', annuity, { ...json, 'content-encoding': coding, ...fakePayment });
      expect(res.status, coding).toBe(400);
      const { error } = res.json as ErrorBody;
      expect(error).toMatchObject({ code: 'invalid_input', field: '(body)' });
      expect(error.message).toContain(`not valid ${coding} data`);
    }
  });

  it('answers a charset it cannot decode with 415', async () => {
    const res = await post('/api/annuity', annuity, { 'content-type': 'application/json; charset=klingon' });
    expect(res.status).toBe(415);
    expect((res.json as ErrorBody).error.code).toBe('unsupported_media_type');
  });
});
