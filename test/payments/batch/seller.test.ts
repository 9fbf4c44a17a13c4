import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { computeChannelId, signVoucher } from '@x402/evm/batch-settlement/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channelRecord } from '../../support/batch-channel.js';
import { startListingFacilitator, type ListingFacilitator } from '../../support/batch-facilitator.js';
import { connectHttpClient } from '../../support/mcp.js';
import { decodeHeader, startTestServer, type TestServer } from '../../support/server.js';
import { failingTool, sideEffectTool } from '../../support/tools.js';

const NETWORK = 'eip155:84532';
const MISMATCH = 'invalid_batch_settlement_evm_cumulative_amount_mismatch';
const echo = sideEffectTool('batch-echo', async () => undefined);
let v1Runs = 0;
/** A tool of the `base-v1` policy: its vouchers go to its v2 face. */
const v1Tool = sideEffectTool('batch-v1', async () => void v1Runs++, 'base-v1');
const authorizer = generatePrivateKey();
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const payer = privateKeyToAccount(generatePrivateKey());
const env = (batch: 'on' | 'off', facilitatorUrl: string) => ({
  TOLLBOOTH_NETWORK_SET: 'testnet',
  FACILITATOR_URL: facilitatorUrl,
  PAY_TO_EVM: payTo,
  MPP: 'off',
  BATCH_SETTLEMENT: batch,
  BATCH_RECEIVER_AUTHORIZER_KEY: authorizer,
});

let facilitator: ListingFacilitator;
let server: TestServer;
let mcp: Client;
let entry: PaymentRequirements;
let channelId: `0x${string}`;
let channelConfig: Record<string, unknown>;

beforeAll(async () => {
  facilitator = await startListingFacilitator(NETWORK);
  server = await startTestServer(env('on', facilitator.url), { tools: [echo, failingTool, v1Tool] });
  mcp = await connectHttpClient(server.url);
  entry = (await challengeOf(server, echo.path)).accepts.find((a) => a.scheme === 'batch-settlement')!;
  const extra = entry.extra as { receiverAuthorizer: `0x${string}`; withdrawDelay: number };
  const config = {
    payer: payer.address,
    payerAuthorizer: payer.address,
    receiver: payTo,
    receiverAuthorizer: extra.receiverAuthorizer,
    token: entry.asset as `0x${string}`,
    withdrawDelay: extra.withdrawDelay,
    salt: `0x${'00'.repeat(32)}` as `0x${string}`,
  };
  channelConfig = config;
  channelId = computeChannelId(config, NETWORK);
  // The channel as a deposit left it: 1 USDC in escrow, nothing charged, the on-chain mirror just read.
  const now = Date.now();
  await server.runtime.store.channels!.updateChannel(channelId, () =>
    channelRecord({ channelId, channelConfig: config, onchainSyncedAt: now, lastRequestTimestamp: now }),
  );
});

afterAll(async () => {
  await mcp?.close();
  await server?.close();
  await facilitator?.close();
});

async function challengeOf(s: TestServer, path: string): Promise<PaymentRequired> {
  const res = await fetch(`${s.url}${path}`, {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  });
  expect(res.status).toBe(402);
  return decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
}

/** A payment carrying the payer's voucher for `max` cumulative, signed by the official client. */
async function voucher(max: string): Promise<PaymentPayload> {
  const signed = await signVoucher(payer, channelId, max, NETWORK);
  return { x402Version: 2, accepted: entry, payload: { type: 'voucher', channelConfig, voucher: signed } };
}

function payHttp(path: string, payment: PaymentPayload) {
  const signature = Buffer.from(JSON.stringify(payment)).toString('base64');
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'application/json', 'payment-signature': signature },
  });
}

const charged = async () => (await server.runtime.store.channels!.get(channelId))?.chargedCumulativeAmount;

describe('the batch-settlement seller path', () => {
  it('adds one batch-settlement entry built by the official scheme, and nothing else changes with the switch off', async () => {
    expect(entry).toMatchObject({
      scheme: 'batch-settlement',
      network: NETWORK,
      amount: '1000',
      payTo,
      extra: {
        receiverAuthorizer: privateKeyToAccount(authorizer).address,
        withdrawDelay: 86_400,
        minDeposit: expect.any(String),
      },
    });
    const off = await startTestServer(env('off', facilitator.url), { tools: [echo, failingTool, v1Tool] });
    try {
      const on = await challengeOf(server, echo.path);
      const without = { ...on, accepts: on.accepts.filter((a) => a.scheme !== 'batch-settlement') };
      const res = await fetch(`${off.url}${echo.path}`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      expect(Buffer.from(res.headers.get('payment-required')!, 'base64').toString()).toBe(JSON.stringify(without));
    } finally {
      await off.close();
    }
  });

  it("uses the facilitator's receiver-authorizer when the operator configured none, and offers nothing without one", async () => {
    const listed = privateKeyToAccount(generatePrivateKey()).address;
    const theirs = await startListingFacilitator(NETWORK, listed);
    const { BATCH_RECEIVER_AUTHORIZER_KEY: _key, ...keyless } = env('on', theirs.url);
    const withTheirs = await startTestServer(keyless, { tools: [echo] });
    const without = await startTestServer({ ...keyless, FACILITATOR_URL: facilitator.url }, { tools: [echo] });
    try {
      const offered = (await challengeOf(withTheirs, echo.path)).accepts.find((a) => a.scheme === 'batch-settlement');
      expect(offered?.extra).toMatchObject({ receiverAuthorizer: listed });
      const none = (await challengeOf(without, echo.path)).accepts.filter((a) => a.scheme === 'batch-settlement');
      expect(none).toEqual([]);
    } finally {
      await Promise.all([withTheirs.close(), without.close(), theirs.close()]);
    }
  });

  it('pays a call with a voucher checked locally: the voucher-only receipt, the charge committed, no facilitator call', async () => {
    const res = await payHttp(echo.path, await voucher('1000'));
    expect(res.status).toBe(200);
    expect(decodeHeader(res.headers.get('payment-response'))).toMatchObject({
      success: true,
      transaction: '',
      network: NETWORK,
      payer: payer.address,
      extra: { chargedAmount: '1000', channelState: { channelId, chargedCumulativeAmount: '1000' } },
    });
    expect(await charged()).toBe('1000');
    expect(facilitator.calls).toEqual({ verify: 0, settle: 0 });
    const [receipt] = await server.runtime.store.ledger.listReceipts({ limit: 1 });
    expect(receipt).toMatchObject({
      status: 'settled',
      kind: 'voucher',
      channelId,
      cumulativeAmount: '1000',
      transaction: '',
    });
  });

  it('takes the same channel over MCP and HTTP interleaved, each call charged once', async () => {
    const result = await mcp.callTool({
      name: echo.name,
      arguments: {},
      _meta: { 'x402/payment': await voucher('2000') },
    });
    expect(result.isError).toBeFalsy();
    expect(result._meta?.['x402/payment-response']).toMatchObject({
      success: true,
      transaction: '',
      extra: { chargedAmount: '1000' },
    });
    expect((await payHttp(echo.path, await voucher('3000'))).status).toBe(200);
    expect(await charged()).toBe('3000');
    // The same voucher again pays nothing more: its replay key is spent.
    expect((await payHttp(echo.path, await voucher('3000'))).status).toBe(402);
    expect(await charged()).toBe('3000');
  });

  it('leaves the channel unchanged when the handler fails, so the same voucher pays the next call', async () => {
    const res = await payHttp(failingTool.path, await voucher('4000'));
    expect(res.status).not.toBe(200);
    const channel = await server.runtime.store.channels!.get(channelId);
    expect(channel?.chargedCumulativeAmount).toBe('3000');
    expect(channel?.pendingRequest).toBeUndefined();
    expect((await payHttp(echo.path, await voucher('4000'))).status).toBe(200);
    expect(await charged()).toBe('4000');
  });

  it('answers a voucher on a stale cumulative amount with the corrective 402 over HTTP and MCP', async () => {
    const res = await payHttp(echo.path, await voucher('3500'));
    expect(res.status).toBe(402);
    const corrective = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
    expect(corrective.error).toBe(MISMATCH);
    const batch = corrective.accepts.find((a) => a.scheme === 'batch-settlement');
    expect(batch?.extra).toMatchObject({
      channelState: { channelId, chargedCumulativeAmount: '4000', balance: '1000000' },
      voucherState: { signedMaxClaimable: '4000' },
    });
    const result = await mcp.callTool({
      name: echo.name,
      arguments: {},
      _meta: { 'x402/payment': await voucher('3600') },
    });
    expect(result.isError).toBe(true);
    const structured = result.structuredContent as unknown as PaymentRequired;
    expect(structured.accepts.find((a) => a.scheme === 'batch-settlement')?.extra).toMatchObject({
      channelState: { chargedCumulativeAmount: '4000' },
    });
    expect(await charged()).toBe('4000');
    expect(facilitator.calls).toEqual({ verify: 0, settle: 0 });
  });

  it('decides a voucher claim left by a stopped process from the channel: charged → settled, never charged → released', async () => {
    const ledger = server.runtime.store.ledger;
    const claim = async (max: string) => {
      const payload = await voucher(max);
      const replayKey = `batch:${NETWORK}:${channelId.toLowerCase()}:${max}`;
      const details = { payload, requirements: entry, requestHash: `hash-${max}` };
      const base = {
        tool: echo.name,
        network: NETWORK,
        payer: payer.address,
        amount: '1000',
        transport: 'http' as const,
      };
      expect(await ledger.claimPayment({ replayKey, ...base, details })).toEqual({ type: 'claimed' });
    };
    // 5000 was committed to the channel before the process stopped; 6000 never was.
    await claim('5000');
    await claim('6000');
    await server.runtime.store.channels!.updateChannel(channelId, (c) => ({ ...c!, chargedCumulativeAmount: '5000' }));
    const counts = await server.runtime.serverDeps.broker.reconciler.reconcileAll(
      new Date(Date.now() + 60_000).toISOString(),
    );
    expect(counts).toMatchObject({ settled: 1, failed: 1 });
    const receipts = await ledger.listReceipts({ limit: 2 });
    expect(receipts.map((r) => [r.cumulativeAmount, r.status]).sort()).toEqual([
      ['5000', 'settled'],
      ['6000', 'failed'],
    ]);
    // The released voucher pays the retry; the charged one cannot pay again.
    expect((await payHttp(echo.path, await voucher('6000'))).status).toBe(200);
    expect(await charged()).toBe('6000');
    expect((await payHttp(echo.path, await voucher('5000'))).status).toBe(402);
  });

  it("takes the channel's vouchers for a base-v1 tool on its v2 face, over HTTP and MCP, with the v2 corrective 402", async () => {
    expect((await payHttp(v1Tool.path, await voucher('7000'))).status).toBe(200);
    expect(await charged()).toBe('7000');
    const stale = await payHttp(v1Tool.path, await voucher('7500'));
    expect(stale.status).toBe(402);
    const body = (await stale.json()) as PaymentRequired;
    expect(body).toMatchObject({ x402Version: 2, error: MISMATCH });
    const corrective = decodeHeader(stale.headers.get('payment-required')) as PaymentRequired;
    expect(corrective.accepts.find((a) => a.scheme === 'batch-settlement')?.extra).toMatchObject({
      channelState: { chargedCumulativeAmount: '7000' },
    });
    const result = await mcp.callTool({
      name: v1Tool.name,
      arguments: {},
      _meta: { 'x402/payment': await voucher('8000') },
    });
    expect(result.isError).toBeFalsy();
    expect(await charged()).toBe('8000');
    expect(v1Runs).toBe(2);
  });
});
