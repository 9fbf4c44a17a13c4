import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { PrivateKeyAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttpClient } from '../support/mcp.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { infoType, startHyperliquidLookalike } from '../support/upstreams/hyperliquid.js';
import type { FailureMode, Lookalike } from '../support/upstreams/server.js';

const PRICE = { 'perp-klines': 1000n, 'crypto-indicators': 5000n } as const;
type ToolName = keyof typeof PRICE;

let paid: PaidEnvironment;
let hyperliquid: Lookalike;
let server: TestServer;
let mcp: Client;
const entries = new Map<string, PaymentRequirements>();
/** Distinct limits keep failure cases out of each other's cache entries. */
let nextLimit = 200;

beforeAll(async () => {
  paid = await startPaidEnvironment(3);
  hyperliquid = await startHyperliquidLookalike({ slowMs: 2500 });
  server = await startTestServer({
    ...paid.env,
    HYPERLIQUID_API_URL: hyperliquid.url,
    UPSTREAM_RETRIES: '1',
    // Long enough that a loaded machine never times out (and retries) a request whose queued failure it then misses.
    UPSTREAM_TIMEOUT_MS: '1000',
  });
  mcp = await connectHttpClient(server.url);
}, 120_000);
afterAll(async () => {
  await mcp?.close();
  await server?.close();
  await hyperliquid?.stop();
  await paid?.stop();
});

async function entry(tool: ToolName): Promise<PaymentRequirements> {
  const known = entries.get(tool);
  if (known) return known;
  const res = await fetch(`${server.url}/api/${tool}`, { method: 'POST' });
  const challenge = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
  const found = challenge.accepts.find((a) => a.network === LOCAL_NETWORK);
  if (!found) throw new Error('the local network is not advertised');
  entries.set(tool, found);
  return found;
}

interface Outcome {
  ok: boolean;
  status: number | undefined;
  body: Record<string, unknown>;
  receipt: { success: boolean; transaction: string } | undefined;
}

/** One paid call over HTTP: POST with PAYMENT-SIGNATURE. */
async function overHttp(payer: PrivateKeyAccount, tool: ToolName, input: Record<string, unknown>): Promise<Outcome> {
  const payment = await signExactPayment(payer, await entry(tool));
  const res = await fetch(`${server.url}/api/${tool}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body: JSON.stringify(input),
  });
  const header = res.headers.get('payment-response');
  return {
    ok: res.ok,
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    receipt: header ? (decodeHeader(header) as Outcome['receipt']) : undefined,
  };
}

/** One paid call over MCP streamable HTTP: the payment in `_meta`. */
async function overMcp(payer: PrivateKeyAccount, tool: ToolName, input: Record<string, unknown>): Promise<Outcome> {
  const payment = await signExactPayment(payer, await entry(tool));
  const result = await mcp.callTool({ name: tool, arguments: input, _meta: { 'x402/payment': payment } });
  const text = (result.content as Array<{ type: string; text: string }>)[0]!.text;
  return {
    ok: !result.isError,
    status: undefined,
    body:
      (result.structuredContent as Record<string, unknown> | undefined) ??
      (JSON.parse(text) as Record<string, unknown>),
    receipt: result._meta?.['x402/payment-response'] as Outcome['receipt'],
  };
}

const transports = [
  ['HTTP', overHttp],
  ['MCP', overMcp],
] as const;

describe.each(transports)('market data over %s, paid and settled on the local chain', (transport, call) => {
  it('sells perp-klines candles from the exchange and settles the price', async () => {
    const payer = paid.payers[0]!;
    const before = await paid.balance(payer.address);
    const out = await call(payer, 'perp-klines', { coin: 'BTC', interval: '1h', limit: 24 });
    expect(out.ok).toBe(true);
    if (transport === 'HTTP') expect(out.status).toBe(200);
    expect(out.body).toMatchObject({ source: 'Hyperliquid info API', coin: 'BTC', interval: '1h', count: 24 });
    expect(out.body.candles).toHaveLength(24);
    expect(out.receipt?.success).toBe(true);
    expect(out.receipt?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await paid.balance(payer.address)).toBe(before - PRICE['perp-klines']);
  });

  it('sells crypto-indicators over exchange candles and settles the price', async () => {
    const payer = paid.payers[0]!;
    const before = await paid.balance(payer.address);
    const out = await call(payer, 'crypto-indicators', { coin: 'eth', interval: '4h', limit: 250, points: 5 });
    expect(out.ok).toBe(true);
    expect(out.body).toMatchObject({ coin: 'ETH', source: 'Hyperliquid info API', interval: '4h', candles: 250 });
    const indicators = out.body.indicators as Record<string, { series: unknown[] }>;
    expect(Object.keys(indicators).sort()).toEqual(['atr', 'bollinger', 'ema', 'macd', 'rsi', 'sma', 'vwap']);
    expect(indicators.rsi!.series).toHaveLength(5);
    expect(out.receipt?.success).toBe(true);
    expect(await paid.balance(payer.address)).toBe(before - PRICE['crypto-indicators']);
  });

  const failures: Array<{ mode: FailureMode; count: number; status: number; code: string }> = [
    { mode: '429', count: 2, status: 503, code: 'upstream_rate_limited' },
    { mode: '500', count: 2, status: 502, code: 'upstream_unavailable' },
    { mode: 'reset', count: 2, status: 502, code: 'upstream_unavailable' },
    { mode: 'slow', count: 2, status: 504, code: 'upstream_timeout' },
    { mode: 'malformed', count: 1, status: 502, code: 'upstream_invalid' },
    { mode: 'mismatch', count: 1, status: 502, code: 'upstream_invalid' },
    { mode: 'error200', count: 1, status: 404, code: 'not_found' },
    { mode: 'empty', count: 1, status: 404, code: 'not_found' },
  ];

  it.each(failures)(
    'answers an upstream "$mode" with $status $code and settles nothing',
    async ({ mode, count, status, code }) => {
      const payer = paid.payers[1]!;
      for (const tool of ['perp-klines', 'crypto-indicators'] as const) {
        await call(payer, tool, { coin: 'SOL', limit: 5 }); // the coin list is cached before the failure is queued
        const before = await paid.balance(payer.address);
        hyperliquid.failNext(mode, count, infoType('candleSnapshot'));
        const out = await call(payer, tool, { coin: 'SOL', limit: nextLimit++ });
        expect(out.ok, `${tool} ${mode}`).toBe(false);
        if (transport === 'HTTP') expect(out.status).toBe(status);
        expect((out.body.error as { code: string }).code).toBe(code);
        expect((out.body.error as { message: string }).message).toMatch(/\. Nothing was charged\.$/);
        expect(out.receipt).toBeUndefined();
        expect(await paid.balance(payer.address)).toBe(before);
      }
    },
  );

  it('answers an unknown coin with 404 naming valid coins, and settles nothing', async () => {
    const payer = paid.payers[1]!;
    const before = await paid.balance(payer.address);
    for (const tool of ['perp-klines', 'crypto-indicators'] as const) {
      const out = await call(payer, tool, { coin: 'NOSUCHCOIN' });
      expect(out.ok).toBe(false);
      if (transport === 'HTTP') expect(out.status).toBe(404);
      expect(out.body.error).toMatchObject({ code: 'not_found', field: 'coin' });
      expect((out.body.error as { message: string }).message).toMatch(/BTC, ETH/);
    }
    expect(await paid.balance(payer.address)).toBe(before);
  });
});

describe('the upstream cache and coalescing behind paid calls', () => {
  it('answers a repeated call from the cache with the original fetchedAt (and still charges for it)', async () => {
    const payer = paid.payers[2]!;
    const input = { coin: 'XRP', interval: '30m', limit: 60 };
    const first = await overHttp(payer, 'perp-klines', input);
    const requests = hyperliquid.requests;
    const before = await paid.balance(payer.address);
    const second = await overMcp(payer, 'perp-klines', input);
    expect(second.ok).toBe(true);
    expect(second.body.fetchedAt).toBe(first.body.fetchedAt);
    expect(hyperliquid.requests).toBe(requests);
    expect(await paid.balance(payer.address)).toBe(before - PRICE['perp-klines']);
  });

  it('shares one upstream attempt (and its failure) among concurrent identical paid calls, charging none of them', async () => {
    const payer = paid.payers[2]!;
    await overHttp(payer, 'crypto-indicators', { coin: 'DOGE', limit: 20 });
    const before = await paid.balance(payer.address);
    const requests = hyperliquid.requests;
    // Two slow answers past the 1 s timeout keep the shared attempt open for about two seconds.
    hyperliquid.failNext('slow', 2, infoType('candleSnapshot'));
    const input = { coin: 'DOGE', interval: '2h', limit: 120 };
    const outs = await Promise.all([
      overHttp(payer, 'crypto-indicators', input),
      overHttp(payer, 'crypto-indicators', input),
      overMcp(payer, 'crypto-indicators', input),
      overMcp(payer, 'crypto-indicators', input),
    ]);
    expect(outs.map((o) => (o.body.error as { code: string }).code)).toEqual(Array(4).fill('upstream_timeout'));
    expect(hyperliquid.requests - requests).toBe(2); // one attempt + one retry, shared by all four calls
    expect(await paid.balance(payer.address)).toBe(before);
  });
});
