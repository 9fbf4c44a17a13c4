import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { geoDistance } from '../../tools/geo-distance.js';
import { connectHttpClient } from '../support/mcp.js';
import { countingTools, LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

// One paid call per payer, then one more every 5 s: a second call right after the first is always over the limit.
const PAYER_LIMITED = { RATE_LIMIT_PAYER_BURST: '1', RATE_LIMIT_PAYER_PER_MINUTE: '12' };
// geo-distance may run once a minute, whoever pays; annuity keeps the (generous) default.
const TOOL_LIMITED = { RATE_LIMIT_TOOLS: JSON.stringify({ 'geo-distance': { perMinute: 1, burst: 1 } }) };

const annuityBody = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
const geoBody = { from: { lat: 51.5074, lng: -0.1278 }, to: { lat: 48.8566, lng: 2.3522 } };

let paid: PaidEnvironment;
let byPayer: TestServer;
let byTool: TestServer;
let mcp: Client;
let runs: Map<string, number>;

beforeAll(async () => {
  paid = await startPaidEnvironment(4);
  const counted = countingTools([annuity, geoDistance] as AnyToolDefinition[]);
  runs = counted.runs;
  byPayer = await startTestServer({ ...paid.env, ...PAYER_LIMITED }, { tools: counted.tools });
  byTool = await startTestServer({ ...paid.env, ...TOOL_LIMITED }, { tools: counted.tools });
  mcp = await connectHttpClient(byPayer.url);
}, 120_000);
afterAll(async () => {
  await mcp?.close();
  await byPayer?.close();
  await byTool?.close();
  await paid?.stop();
});

async function entryOf(server: TestServer, path: string): Promise<PaymentRequirements> {
  const res = await fetch(server.url + path, { method: 'POST' });
  const challenge = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
  const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK);
  if (!entry) throw new Error('the local network is not advertised');
  return entry;
}

async function pay(server: TestServer, path: string, payer: PrivateKeyAccount, body: unknown, payment?: unknown) {
  const signed = payment ?? (await signExactPayment(payer, await entryOf(server, path)));
  const res = await fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(signed) },
    body: JSON.stringify(body),
  });
  return { res, payment: signed };
}

type ErrorBody = {
  error: { code: string; retryable: boolean; message: string; details: { limit: string; retryAfterSeconds: number } };
};

describe('per-payer limits after verification never charge', () => {
  it('refuses a payer over its limit with 429 and Retry-After, runs nothing, charges nothing, and the same payment works later', async () => {
    const payer = paid.payers[0]!;
    const first = await pay(byPayer, '/api/annuity', payer, annuityBody);
    expect(first.res.status).toBe(200);
    const afterFirst = await paid.balance(payer.address);
    const ran = runs.get('annuity') ?? 0;

    const limited = await pay(byPayer, '/api/annuity', payer, annuityBody);
    expect(limited.res.status).toBe(429);
    const retryAfter = Number(limited.res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(limited.res.headers.get('payment-response')).toBeNull();
    const body = (await limited.res.json()) as ErrorBody;
    expect(body.error).toMatchObject({
      code: 'rate_limited',
      retryable: true,
      details: { limit: 'payer', retryAfterSeconds: retryAfter },
    });
    expect(runs.get('annuity')).toBe(ran);
    expect(await paid.balance(payer.address)).toBe(afterFirst);

    // The claim was released: after the wait the server asked for, the very same payment buys the call, once.
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 100));
    const again = await pay(byPayer, '/api/annuity', payer, annuityBody, limited.payment);
    expect(again.res.status).toBe(200);
    expect(runs.get('annuity')).toBe(ran + 1);
    expect(await paid.balance(payer.address)).toBe(afterFirst - 1000n);
  }, 60_000);

  it('answers an MCP call over the limit with an isError rate_limited result, retryable, with the wait in details', async () => {
    const payer = paid.payers[1]!;
    const unpaid = await mcp.callTool({ name: 'geo-distance', arguments: geoBody });
    const entry = (unpaid.structuredContent as unknown as PaymentRequired).accepts.find(
      (a) => a.network === LOCAL_NETWORK,
    )!;
    const first = await mcp.callTool({
      name: 'geo-distance',
      arguments: geoBody,
      _meta: { 'x402/payment': await signExactPayment(payer, entry) },
    });
    expect(first.isError).toBeFalsy();
    const afterFirst = await paid.balance(payer.address);
    const ran = runs.get('geo-distance') ?? 0;

    const limited = await mcp.callTool({
      name: 'geo-distance',
      arguments: geoBody,
      _meta: { 'x402/payment': await signExactPayment(payer, entry) },
    });
    expect(limited.isError).toBe(true);
    expect(limited._meta?.['x402/payment-response']).toBeUndefined();
    const body = JSON.parse((limited.content as Array<{ text: string }>)[0]!.text) as ErrorBody;
    expect(body.error).toMatchObject({ code: 'rate_limited', retryable: true, details: { limit: 'payer' } });
    expect(body.error.details.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(runs.get('geo-distance')).toBe(ran);
    expect(await paid.balance(payer.address)).toBe(afterFirst);
  });
});

describe('per-tool limits after verification never charge', () => {
  it('limits one tool for every payer while other tools keep answering', async () => {
    const [, , one, two] = paid.payers as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount];
    expect((await pay(byTool, '/api/geo-distance', one, geoBody)).res.status).toBe(200);
    const before = await paid.balance(two.address);
    const ran = runs.get('geo-distance') ?? 0;
    const limited = await pay(byTool, '/api/geo-distance', two, geoBody);
    expect(limited.res.status).toBe(429);
    expect(((await limited.res.json()) as ErrorBody).error.details.limit).toBe('tool');
    expect(runs.get('geo-distance')).toBe(ran);
    expect(await paid.balance(two.address)).toBe(before);
    expect((await pay(byTool, '/api/annuity', two, annuityBody)).res.status).toBe(200);
    expect(await paid.balance(two.address)).toBe(before - 1000n);
  });
});
