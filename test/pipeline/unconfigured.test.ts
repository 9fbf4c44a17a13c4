import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_NETWORK, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, officialPayment } from '../support/payer.js';
import { startPaidServer, type PaidServer } from '../support/paid-server.js';
import { decodeHeader, type TestServer } from '../support/server.js';

// The server runs with neither a faucet (FAUCET_* or CDP_*) nor a marketing panel (SMM_PANEL_*) configured.
let paid: PaidEnvironment;
let server: TestServer;
let mcp: Client;

let setup: PaidServer;
beforeAll(async () => {
  ({ paid, server, mcp } = setup = await startPaidServer(1));
}, 120_000);
afterAll(() => setup?.stop());

type ErrorAnswer = { code: string; message: string; details?: { settings?: string[] } };
type Answer = { status: number; challenge: boolean; error?: ErrorAnswer };

const FUND = { name: 'testnet-fund', path: '/api/testnet-fund' };
const ORDER = { name: 'smm-order', path: '/smm/v1/smm-order' };
const FUND_INPUT = { address: '0x000000000000000000000000000000000000dEaD' };
const ORDER_INPUT = { link: 'https://www.instagram.com/p/C0ffee/', quantity: 100, serviceId: 1 };

/** One POST over HTTP: its status, whether it carries a challenge, and its error. */
async function overHttp(path: string, input?: unknown, payment?: unknown): Promise<Answer> {
  const res = await fetch(server.url + path, {
    method: 'POST',
    headers: {
      ...(input === undefined ? {} : { 'content-type': 'application/json' }),
      ...(payment === undefined
        ? {}
        : { 'payment-signature': typeof payment === 'string' ? payment : encodePayment(payment) }),
    },
    ...(input === undefined ? {} : { body: JSON.stringify(input) }),
  });
  const challenge = res.headers.has('payment-required') || res.headers.has('www-authenticate');
  const body = (await res.json()) as { error?: ErrorAnswer };
  return { status: res.status, challenge, error: body.error };
}

/** One tools/call over MCP: 402 for a challenge, the error's status otherwise, as the HTTP answer would be. */
async function overMcp(name: string, input?: Record<string, unknown>, payment?: unknown): Promise<Answer> {
  const result = (await mcp.callTool({
    name,
    ...(input === undefined ? {} : { arguments: input }),
    ...(payment === undefined ? {} : { _meta: { 'x402/payment': payment } }),
  })) as CallToolResult;
  const content = result.structuredContent as { x402Version?: number; accepts?: unknown[]; error?: ErrorAnswer };
  if (content?.x402Version !== undefined && Array.isArray(content.accepts)) return { status: 402, challenge: true };
  const error = (JSON.parse((result.content[0] as { text: string }).text) as { error: ErrorAnswer }).error;
  return { status: error.code === 'not_implemented' ? 501 : 0, challenge: false, error };
}

const transports = { HTTP: overHttp, MCP: overMcp } as const;

/** Nothing was claimed, recorded or moved on chain: the ledger holds no claim and no receipt. */
async function expectNothingClaimed() {
  const ledger = server.runtime.store.ledger;
  expect(await ledger.listStaleClaims(new Date(Date.now() + 3_600_000).toISOString())).toEqual([]);
  expect(await ledger.listReceipts()).toEqual([]);
}

describe.each(['HTTP', 'MCP'] as const)('a call over %s that this server cannot serve', (transport) => {
  const call = (tool: { name: string; path: string }, input?: Record<string, unknown>, payment?: unknown) =>
    transport === 'HTTP' ? transports.HTTP(tool.path, input, payment) : transports.MCP(tool.name, input, payment);

  it('testnet-fund without a faucet is answered 501 naming the faucet settings, with no challenge', async () => {
    const answer = await call(FUND, FUND_INPUT);
    expect(answer).toMatchObject({ status: 501, challenge: false });
    expect(answer.error).toMatchObject({ code: 'not_implemented' });
    expect(answer.error?.message).toMatch(
      /base-sepolia.*FAUCET_EVM_PRIVATE_KEY.*CDP_API_KEY_ID.*Nothing was charged\.$/,
    );
    expect(answer.error?.details?.settings).toEqual(['FAUCET_EVM_PRIVATE_KEY', 'CDP_API_KEY_ID', 'CDP_API_KEY_SECRET']);
    const solana = await call(FUND, { address: '11111111111111111111111111111111', network: 'solana-devnet' });
    expect(solana.error?.details?.settings).toContain('FAUCET_SOLANA_SECRET_KEY');
  });

  it('smm-order without a marketing panel is answered 501 naming SMM_PANEL_URL and SMM_PANEL_KEY, with no challenge', async () => {
    const answer = await call(ORDER, ORDER_INPUT);
    expect(answer).toMatchObject({ status: 501, challenge: false });
    expect(answer.error?.message).toMatch(/SMM_PANEL_URL and SMM_PANEL_KEY/);
    expect(answer.error?.details?.settings).toEqual(['SMM_PANEL_URL', 'SMM_PANEL_KEY']);
  });

  it('still shows the price to a bare probe (no input, no payment) of either tool', async () => {
    expect(await call(FUND)).toMatchObject({ status: 402, challenge: true });
    expect(await call(ORDER)).toMatchObject({ status: 402, challenge: true });
  });

  it('answers input invalid for the tool with 400 first, as before', async () => {
    const answer = await call(FUND, { address: 'not-an-address' });
    expect(answer.challenge).toBe(false);
    expect(answer.error?.code).toBe('invalid_input');
  });
});

describe('a signed payment sent with a call this server cannot serve', () => {
  it('is never read: 501 on HTTP and MCP, nothing claimed, nothing settled, the payer keeps every unit', async () => {
    const payer = paid.payers[0]!;
    const before = await paid.balance(payer.address);
    const probe = await fetch(server.url + FUND.path, { method: 'POST' });
    const challenge = decodeHeader(probe.headers.get('payment-required')) as PaymentRequired;
    const payment = await officialPayment(payer, challenge, LOCAL_NETWORK);
    expect(await overHttp(FUND.path, FUND_INPUT, payment)).toMatchObject({ status: 501, challenge: false });
    expect(await overMcp(FUND.name, FUND_INPUT, payment)).toMatchObject({ status: 501, challenge: false });
    // A payment that could never verify is not even looked at.
    expect(await overHttp(FUND.path, FUND_INPUT, 'not a payment')).toMatchObject({ status: 501 });
    await expectNothingClaimed();
    expect(await paid.balance(payer.address)).toBe(before);
  });
});
