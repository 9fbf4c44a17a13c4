import { afterEach, describe, expect, it } from 'vitest';
import { createLimits, limitedError, retryAfterSeconds } from '../../src/limits/limiter.js';
import type { RateBuckets } from '../../src/store/buckets.js';
import { postInitialize } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';

// A bucket of 3 requests that refills one request per minute: the 4th request within the test is always refused.
const TIGHT = { RATE_LIMIT_IP_BURST: '3', RATE_LIMIT_IP_PER_MINUTE: '1' };

const servers: TestServer[] = [];
async function server(env: Record<string, string>): Promise<TestServer> {
  const started = await startTestServer(env);
  servers.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function spend(url: string, count: number, headers: Record<string, string> = {}): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await fetch(url, { headers })).status);
  return statuses;
}

describe('the per-IP limit in front of every HTTP request', () => {
  it('answers 429 with Retry-After and a retryable rate_limited error once the bucket is empty', async () => {
    const s = await server(TIGHT);
    expect(await spend(`${s.url}/api/transfers/evm`, 3)).toEqual([402, 402, 402]);
    const res = await fetch(`${s.url}/api/transfers/evm`);
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const body = (await res.json()) as {
      error: { code: string; retryable: boolean; message: string; details: Record<string, unknown> };
    };
    expect(body.error).toMatchObject({
      code: 'rate_limited',
      retryable: true,
      details: { limit: 'ip', retryAfterSeconds: retryAfter },
    });
    expect(body.error.message).toMatch(/retry in \d+ seconds?/);
  });

  it('counts every path: discovery documents, unknown paths, free and paid routes share one bucket', async () => {
    const s = await server(TIGHT);
    const statuses = [
      (await fetch(`${s.url}/llms.txt`)).status,
      (await fetch(`${s.url}/no/such/path`)).status,
      (await fetch(`${s.url}/api/annuity`, { method: 'POST' })).status,
      (await fetch(`${s.url}/openapi.json`)).status,
    ];
    expect(statuses).toEqual([200, 404, 402, 429]);
  });

  it('refuses before reading anything: a malformed payment or an oversized body over the limit gets 429, not 400 or 413', async () => {
    const s = await server(TIGHT);
    await spend(`${s.url}/healthz`, 3);
    const payment = await fetch(`${s.url}/api/annuity`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': 'not base64 at all' },
      body: JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 }),
    });
    expect(payment.status).toBe(429);
    const huge = await fetch(`${s.url}/api/annuity`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"pad":"${'x'.repeat(200_000)}"}`,
    });
    expect(huge.status).toBe(429);
  });

  it('counts MCP over streamable HTTP too, answering a JSON-RPC error with the same details', async () => {
    const s = await server(TIGHT);
    await spend(`${s.url}/healthz`, 3);
    const res = await postInitialize(s.url, 't');
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await res.json()) as {
      jsonrpc: string;
      id: null;
      error: { code: number; data: { code: string; retryable: boolean; details: { retryAfterSeconds: number } } };
    };
    expect(body).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, data: { code: 'rate_limited', retryable: true } },
    });
    expect(body.error.data.details.retryAfterSeconds).toBe(Number(res.headers.get('retry-after')));
  });

  it('ignores X-Forwarded-For by default: a client cannot pick a fresh address per request', async () => {
    const s = await server(TIGHT);
    const statuses = [];
    for (let i = 1; i <= 4; i++)
      statuses.push((await fetch(`${s.url}/healthz`, { headers: { 'x-forwarded-for': `203.0.113.${i}` } })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('behind a trusted proxy (TRUST_PROXY) keeps one bucket per forwarded client address', async () => {
    const s = await server({ ...TIGHT, TRUST_PROXY: 'loopback' });
    expect(await spend(`${s.url}/healthz`, 4, { 'x-forwarded-for': '203.0.113.7' })).toEqual([200, 200, 200, 429]);
    expect(await spend(`${s.url}/healthz`, 1, { 'x-forwarded-for': '203.0.113.8' })).toEqual([200]);
    // Addresses of one IPv6 /64 share a bucket; another /64 has its own.
    expect(await spend(`${s.url}/healthz`, 3, { 'x-forwarded-for': '2001:db8:1:2::1' })).toEqual([200, 200, 200]);
    expect(await spend(`${s.url}/healthz`, 1, { 'x-forwarded-for': '2001:db8:1:2:ffff::9' })).toEqual([429]);
    expect(await spend(`${s.url}/healthz`, 1, { 'x-forwarded-for': '2001:db8:1:3::1' })).toEqual([200]);
  });

  it('can be turned off with RATE_LIMIT_IP_PER_MINUTE=0', async () => {
    const s = await server({ RATE_LIMIT_IP_PER_MINUTE: '0', RATE_LIMIT_IP_BURST: '1' });
    expect(await spend(`${s.url}/healthz`, 5)).toEqual([200, 200, 200, 200, 200]);
  });
});

describe('the rate_limited error', () => {
  it('rounds the wait up to whole seconds, at least one', () => {
    expect([1, 999, 1000, 1001, 59_500].map(retryAfterSeconds)).toEqual([1, 1, 1, 2, 60]);
  });

  it('tells a limited payer that the payment was not used and may be sent again', () => {
    const error = limitedError('payer', 2500);
    expect(error.httpStatus).toBe(429);
    expect(error.toBody().error).toMatchObject({
      code: 'rate_limited',
      retryable: true,
      details: { limit: 'payer', retryAfterSeconds: 3 },
    });
    expect(error.message).toMatch(/payment was not used/);
    expect(limitedError('tool', 1000, 'annuity').message).toMatch(/annuity/);
  });
});

describe('the limiter when the store fails', () => {
  it('lets calls through (the limiter never takes the service down) and warns once', async () => {
    const warnings: string[] = [];
    const log = { info() {}, error() {}, warn: (msg: string) => warnings.push(msg) };
    const failing = { claimTokens: () => Promise.reject(new Error('database unreachable')) } as unknown as RateBuckets;
    const rate = { capacity: 1, refillPerSecond: 0.001 };
    const limits = createLimits({ ip: rate, payer: rate, tool: rate, tools: {}, shared: true }, failing, log);
    try {
      for (let i = 0; i < 3; i++) expect(await limits.admit({ tool: 'annuity', payer: '0xabc' })).toBeUndefined();
      expect(warnings).toEqual(['rate-limit store unavailable; requests pass unlimited']);
    } finally {
      limits.close();
    }
  });
});
