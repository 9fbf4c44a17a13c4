import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/shared/log.js';
import { BASE_MAINNET } from '../../src/shared/networks.js';
import { paidTools as tools } from '../../tools/index.js';
import { startBaseEnvironment, type BaseEnvironment } from '../support/chain/permit2-env.js';
import { connectHttpClient } from '../support/mcp.js';
import { countingTools } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { startDexScreenerLookalike } from '../support/upstreams/dexscreener.js';
import { startGoPlusLookalike, TOKENS, type GoPlusLookalike } from '../support/upstreams/goplus.js';
import type { Lookalike } from '../support/upstreams/server.js';
import { PANEL_KEY, startSmmPanelLookalike, type SmmPanelLookalike } from '../support/upstreams/smm-panel.js';

const REPORT_PRICE = 150_000n;
const ORDER_PRICE = 3_000_000n;

let base: BaseEnvironment;
let goplus: GoPlusLookalike;
let dex: Lookalike;
let panel: SmmPanelLookalike;
let server: TestServer;
let mcp: Client;
let runs: Map<string, number>;
let env: Record<string, string>;
const counted = countingTools(tools);
const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-token-smm-'));
const logLines: string[] = [];
const log: Logger = {
  info: (m, f) => logLines.push(JSON.stringify({ m, ...f })),
  warn: (m, f) => logLines.push(JSON.stringify({ m, ...f })),
  error: (m, f) => logLines.push(JSON.stringify({ m, ...f })),
};

async function start(): Promise<void> {
  server = await startTestServer(env, { tools: counted.tools, dataDir, log });
  mcp = await connectHttpClient(server.url);
}

beforeAll(async () => {
  [base, goplus, dex, panel] = await Promise.all([
    startBaseEnvironment(6),
    startGoPlusLookalike({ slowMs: 2500 }),
    startDexScreenerLookalike({ slowMs: 2500 }),
    startSmmPanelLookalike({ slowMs: 2500 }),
  ]);
  runs = counted.runs;
  env = {
    ...base.env,
    GOPLUS_API_URL: goplus.url,
    DEXSCREENER_API_URL: dex.url,
    SMM_PANEL_URL: `${panel.url}/api/v2`,
    SMM_PANEL_KEY: PANEL_KEY,
    UPSTREAM_RETRIES: '1',
    // Long enough that a loaded machine never times out (and retries) a request whose queued failure it then misses.
    UPSTREAM_TIMEOUT_MS: '1000',
  };
  await start();
}, 120_000);
afterAll(async () => {
  await mcp?.close();
  await server?.close();
  await Promise.all([goplus?.stop(), dex?.stop(), panel?.stop(), base?.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
});

const runCount = (tool: string) => runs.get(tool) ?? 0;
const payers = () => base.payers;

async function entryOf(method: 'GET' | 'POST', path: string, network: string): Promise<PaymentRequirements> {
  const challenge = decodeHeader(
    (await fetch(server.url + path, { method })).headers.get('payment-required'),
  ) as PaymentRequired;
  const found = challenge.accepts.find((a) => a.network === network);
  if (!found) throw new Error(`${network} is not advertised on ${path}`);
  return found;
}
const reportPayment = async (payer: PrivateKeyAccount) =>
  signExactPayment(payer, await entryOf('GET', '/report', BASE_MAINNET));
// The order's entry is version 2 but named `base` (spec §9): signed for chain 8453.
const orderPayment = async (payer: PrivateKeyAccount) =>
  signExactPayment(payer, await entryOf('POST', '/smm/v1/smm-order', 'base'), { chainId: 8453 });

interface Outcome {
  ok: boolean;
  status: number | undefined;
  body: Record<string, unknown>;
  receipt: { success: boolean } | undefined;
}

async function reportOverHttp(payer: PrivateKeyAccount, query: Record<string, string>): Promise<Outcome> {
  const res = await fetch(`${server.url}/report?${new URLSearchParams(query)}`, {
    headers: { 'payment-signature': encodePayment(await reportPayment(payer)) },
  });
  const header = res.headers.get('payment-response');
  return {
    ok: res.ok,
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    receipt: header ? (decodeHeader(header) as Outcome['receipt']) : undefined,
  };
}
async function orderOverHttp(payer: PrivateKeyAccount, body: Record<string, unknown>): Promise<Outcome> {
  const res = await fetch(`${server.url}/smm/v1/smm-order`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(await orderPayment(payer)) },
    body: JSON.stringify(body),
  });
  const header = res.headers.get('payment-response');
  return {
    ok: res.ok,
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    receipt: header ? (decodeHeader(header) as Outcome['receipt']) : undefined,
  };
}
async function overMcp(name: string, args: Record<string, unknown>, payment?: unknown): Promise<Outcome> {
  const result = await mcp.callTool({
    name,
    arguments: args,
    ...(payment ? { _meta: { 'x402/payment': payment } } : {}),
  });
  const text = (result.content as Array<{ text: string }>)[0]!.text;
  return {
    ok: !result.isError,
    status: undefined,
    body:
      (result.structuredContent as Record<string, unknown> | undefined) ??
      (JSON.parse(text) as Record<string, unknown>),
    receipt: result._meta?.['x402/payment-response'] as Outcome['receipt'],
  };
}
const reportOverMcp = async (payer: PrivateKeyAccount, query: Record<string, string>) =>
  overMcp('token-report', query, await reportPayment(payer));
const orderOverMcp = async (payer: PrivateKeyAccount, body: Record<string, unknown>) =>
  overMcp('smm-order', body, await orderPayment(payer));
const codeOf = (o: Outcome) => (o.body.error as { code: string; field?: string }).code;

describe.each([
  ['HTTP', reportOverHttp],
  ['MCP', reportOverMcp],
] as const)('token-report over %s, paid on Base (local chain 8453)', (transport, call) => {
  it('sells the report and settles $0.15', async () => {
    const payer = payers()[0]!;
    const before = await base.balance(payer.address);
    const out = await call(payer, { chain: 'base', token: TOKENS.clean });
    expect(out.ok).toBe(true);
    expect(out.body).toMatchObject({
      schemaVersion: '2.0.0',
      name: 'Example',
      symbol: 'EXM',
      risk_score: 0,
      liquidity_usd: 227000.62,
      token_age_days: 400,
    });
    expect((out.body.verdict as string).split(/(?<=\.)\s+/)).toHaveLength(3);
    expect(out.receipt?.success).toBe(true);
    expect(await base.balance(payer.address)).toBe(before - REPORT_PRICE);
  });

  const notCharged: Array<[string, () => void, Record<string, string>, number, string]> = [
    ['an unknown token', () => {}, { chain: 'base', token: TOKENS.unknown }, 404, 'not_found'],
    ['a wallet given as the token', () => {}, { chain: 'base', token: TOKENS.wallet }, 404, 'not_found'],
    [
      'the security API throttling (HTTP 200, code 4029)',
      () => goplus.failNext('error200'),
      { chain: 'eth', token: TOKENS.risky },
      503,
      'upstream_rate_limited',
    ],
    [
      'the security API timing out',
      () => goplus.failNext('slow', 2),
      { chain: 'base', token: TOKENS.honeypot },
      504,
      'upstream_timeout',
    ],
    [
      'the DEX API sending the wrong shape',
      () => dex.failNext('mismatch'),
      { chain: 'solana', token: TOKENS.solRisky },
      502,
      'upstream_invalid',
    ],
  ];
  it.each(notCharged)('answers %s as an error and settles nothing', async (_what, fail, query, status, code) => {
    const payer = payers()[1]!;
    const before = { balance: await base.balance(payer.address), runs: runCount('token-report') };
    fail();
    const out = await call(payer, query);
    expect(out.ok).toBe(false);
    if (transport === 'HTTP') expect(out.status).toBe(status);
    expect(codeOf(out)).toBe(code);
    expect(out.receipt).toBeUndefined();
    expect(runCount('token-report')).toBe(before.runs + 1);
    expect(await base.balance(payer.address)).toBe(before.balance);
  });

  it('refuses an unsupported chain, a malformed address and conflicting aliases before payment: the handler never runs', async () => {
    const payer = payers()[1]!;
    const before = { balance: await base.balance(payer.address), runs: runCount('token-report') };
    for (const [query, field] of [
      [{ chain: 'fantom', token: TOKENS.clean }, 'chain'],
      [{ chain: 'base', token: TOKENS.solClean }, 'token'],
      [{ token: TOKENS.clean, contract: TOKENS.risky }, 'contract'],
    ] as const) {
      const out = await call(payer, query);
      if (transport === 'HTTP') expect(out.status).toBe(400);
      expect(out.body.error).toMatchObject({ code: 'invalid_input', field });
    }
    expect(runCount('token-report')).toBe(before.runs);
    expect(await base.balance(payer.address)).toBe(before.balance);
  });
});

describe('HEAD and DELETE on the report', () => {
  it('answers HEAD like the unpaid GET, without a body: 402 with the requirements, 400 for an invalid query', async () => {
    const probe = await fetch(`${server.url}/report`, { method: 'HEAD' });
    expect(probe.status).toBe(402);
    expect(decodeHeader(probe.headers.get('payment-required'))).toMatchObject({
      x402Version: 2,
      accepts: expect.any(Array),
    });
    expect(await probe.text()).toBe('');
    const bad = await fetch(`${server.url}/report?chain=fantom&token=${TOKENS.clean}`, { method: 'HEAD' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe('');
  });

  it('refuses a HEAD carrying a payment with 405 before reading it: nothing runs, and the payment still buys the GET', async () => {
    const payer = payers()[2]!;
    const payment = encodePayment(await reportPayment(payer));
    const before = { balance: await base.balance(payer.address), runs: runCount('token-report') };
    const url = `${server.url}/report?chain=base&token=${TOKENS.clean}`;
    const head = await fetch(url, { method: 'HEAD', headers: { 'payment-signature': payment } });
    expect(head.status).toBe(405);
    expect(head.headers.get('payment-response')).toBeNull();
    expect(runCount('token-report')).toBe(before.runs);
    expect(await base.balance(payer.address)).toBe(before.balance);
    const get = await fetch(url, { headers: { 'payment-signature': payment } });
    expect(get.status).toBe(200);
    expect(await base.balance(payer.address)).toBe(before.balance - REPORT_PRICE);
  });

  it('answers DELETE with 405 saying the endpoint deletes nothing', async () => {
    const res = await fetch(`${server.url}/report?chain=base&token=${TOKENS.clean}`, { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('method_not_allowed');
    expect(error.message).toMatch(/deletes nothing; use GET/);
  });
});

let n = 0;
const link = () => `https://www.instagram.com/p/e2e-${++n}/`;

describe('smm-order, paid with the base entry', () => {
  it('answers a bad quantity or service with 400 before payment, with or without a payment, and never runs the order', async () => {
    const payer = payers()[3]!;
    const before = {
      balance: await base.balance(payer.address),
      runs: runCount('smm-order'),
      adds: panel.actions.add ?? 0,
    };
    for (const [body, field] of [
      [{ serviceId: 1, link: link(), quantity: 10 }, 'quantity'],
      [{ serviceId: 1, link: link(), quantity: 5000 }, 'quantity'],
      [{ serviceId: 99, link: link(), quantity: 100 }, 'serviceId'],
    ] as const) {
      const unpaid = await fetch(`${server.url}/smm/v1/smm-order`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(unpaid.status).toBe(400);
      expect(((await unpaid.json()) as { error: { field: string } }).error.field).toBe(field);
      expect((await orderOverHttp(payer, body)).status).toBe(400);
      expect((await orderOverMcp(payer, body)).body.error).toMatchObject({ code: 'invalid_input', field });
    }
    expect(runCount('smm-order')).toBe(before.runs);
    expect(panel.actions.add ?? 0).toBe(before.adds);
    expect(await base.balance(payer.address)).toBe(before.balance);
    expect((await fetch(`${server.url}/smm/v1/smm-order`, { method: 'POST' })).status).toBe(402);
  });

  it.each([
    ['HTTP', orderOverHttp],
    ['MCP', orderOverMcp],
  ] as const)('places, stores and settles an order over %s', async (_t, call) => {
    const payer = payers()[4]!;
    const before = { balance: await base.balance(payer.address), orders: panel.orders.length };
    const body = { serviceId: 1, link: link(), quantity: 200 };
    const out = await call(payer, body);
    expect(out.ok).toBe(true);
    expect(out.body).toEqual({ status: 'ordered', orderId: String(panel.orders.at(-1)!.order), chargeUsd: 3 });
    expect(out.receipt?.success).toBe(true);
    expect(panel.orders.length).toBe(before.orders + 1);
    expect(await base.balance(payer.address)).toBe(before.balance - ORDER_PRICE);
    expect(await server.runtime.store.toolState.getOrder(out.body.orderId as string)).toMatchObject({
      ...body,
      status: 'ordered',
      chargeUsd: 3,
      payer: payer.address,
    });
  });

  /** An order someone placed at the panel directly, still active: the next order for its link is a duplicate. */
  async function activeOrderAtPanel(target: string): Promise<void> {
    const form = new URLSearchParams({ key: PANEL_KEY, action: 'add', service: '2', link: target, quantity: '100' });
    expect(await (await fetch(`${panel.url}/api/v2`, { method: 'POST', body: form })).json()).toHaveProperty('order');
  }
  const refusals: Array<[string, (target: string) => Promise<void> | void, number, string]> = [
    ['a duplicate active link (HTTP 200 error)', activeOrderAtPanel, 409, 'conflict'],
    ['an empty panel account (HTTP 200 error)', () => panel.setBalance(0), 502, 'upstream_unavailable'],
    [
      'a panel timeout',
      () => panel.failNext('slow', 1, (r) => r.rawBody.includes('action=add')),
      504,
      'upstream_timeout',
    ],
    [
      'a panel 500 (never retried)',
      () => panel.failNext('500', 1, (r) => r.rawBody.includes('action=add')),
      502,
      'upstream_unavailable',
    ],
  ];
  it.each(refusals)('settles nothing when the panel fails after payment: %s', async (_what, fail, status, code) => {
    const payer = payers()[5]!;
    const body = { serviceId: 2, link: link(), quantity: 100 };
    await fail(body.link);
    const before = { balance: await base.balance(payer.address), requests: panel.requests };
    const out = await orderOverHttp(payer, body);
    panel.setBalance(1000);
    expect(out.status).toBe(status);
    expect(codeOf(out)).toBe(code);
    expect(out.receipt).toBeUndefined();
    expect(panel.requests - before.requests).toBe(1);
    expect(await base.balance(payer.address)).toBe(before.balance);
  });
});

describe('free smm helpers over HTTP and MCP, and orders across a restart', () => {
  it('quotes and searches without payment, identically on both transports', async () => {
    const quote = await fetch(`${server.url}/v1/smm-quote?serviceId=1&quantity=1000`);
    expect(quote.status).toBe(200);
    const quoted = await quote.json();
    expect(quoted).toMatchObject({ serviceId: 1, panelCostUsd: 0.9, chargeUsd: 3, max: 3333, orderable: true });
    expect((await overMcp('smm-quote', { serviceId: 1, quantity: 1000 })).body).toEqual(quoted);
    const found = await (await fetch(`${server.url}/v1/smm-services?platform=instagram`)).json();
    expect((found as { services: Array<{ serviceId: number }> }).services.map((s) => s.serviceId)).toEqual([1, 2]);
    expect((await overMcp('smm-services', { platform: 'instagram' })).body).toEqual(found);
    expect((await fetch(`${server.url}/v1/smm-quote?serviceId=1&quantity=abc`)).status).toBe(400);
  });

  it('keeps placed orders across a restart and answers their panel status; an unknown id is 404', async () => {
    const out = await orderOverHttp(payers()[2]!, { serviceId: 3, link: link(), quantity: 1000 });
    const orderId = out.body.orderId as string;
    panel.setStatus(Number(orderId), 'In progress', 400);
    await mcp.close();
    await server.close();
    await start();
    const res = await fetch(`${server.url}/v1/smm-order/${orderId}`);
    expect(res.status).toBe(200);
    const status = await res.json();
    expect(status).toMatchObject({
      orderId,
      status: 'in_progress',
      panelStatus: 'In progress',
      remains: 400,
      serviceId: 3,
      quantity: 1000,
      chargeUsd: 3,
    });
    expect((await overMcp('smm-order-status', { orderId })).body).toEqual(status);
    const missing = await fetch(`${server.url}/v1/smm-order/999999`);
    expect(missing.status).toBe(404);
    expect((await overMcp('smm-order-status', { orderId: '999999' })).body.error).toMatchObject({
      code: 'not_found',
      field: 'orderId',
    });
  });

  it('never writes the panel key into a log line', () => {
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('\n')).not.toContain(PANEL_KEY);
  });
});
