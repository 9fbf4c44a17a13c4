import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { computeChannelId, signVoucher } from '@x402/evm/batch-settlement/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { channelRecord } from '../support/batch-channel.js';
import { startListingFacilitator, type ListingFacilitator } from '../support/batch-facilitator.js';
import { connectHttpClient } from '../support/mcp.js';
import { createTestSchema, describeWithPostgres, type TestSchema } from '../support/postgres.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { sideEffectTool } from '../support/tools.js';

const NETWORK = 'eip155:84532';
const ROUNDS = 50;
let runs = 0;
const tool = sideEffectTool('batch-shared', async () => {
  runs++;
});
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const payer = privateKeyToAccount(generatePrivateKey());

describeWithPostgres('batch settlement on two instances sharing one PostgreSQL', () => {
  let schema: TestSchema;
  let facilitator: ListingFacilitator;
  const servers: TestServer[] = [];
  let mcp: Client;
  let entry: PaymentRequirements;
  let channelConfig: Parameters<typeof computeChannelId>[0];
  let channelId: `0x${string}`;

  beforeAll(async () => {
    schema = await createTestSchema('batch_two');
    facilitator = await startListingFacilitator(NETWORK);
    const env = {
      TOLLBOOTH_NETWORK_SET: 'testnet',
      FACILITATOR_URL: facilitator.url,
      PAY_TO_EVM: payTo,
      MPP: 'off',
      BATCH_SETTLEMENT: 'on',
      BATCH_RECEIVER_AUTHORIZER_KEY: generatePrivateKey(),
      DATABASE_URL: schema.url,
    };
    for (let i = 0; i < 2; i++) servers.push(await startTestServer(env, { tools: [tool] }));
    mcp = await connectHttpClient(servers[1]!.url);
    const res = await fetch(`${servers[0]!.url}${tool.path}`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    const challenge = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
    entry = challenge.accepts.find((a) => a.scheme === 'batch-settlement')!;
    const extra = entry.extra as { receiverAuthorizer: `0x${string}`; withdrawDelay: number };
    channelConfig = {
      payer: payer.address,
      payerAuthorizer: payer.address,
      receiver: payTo,
      receiverAuthorizer: extra.receiverAuthorizer,
      token: entry.asset as `0x${string}`,
      withdrawDelay: extra.withdrawDelay,
      salt: `0x${'00'.repeat(32)}`,
    };
    channelId = computeChannelId(channelConfig, NETWORK);
    // A channel with 1 USDC in escrow whose on-chain state was just read, so every voucher is checked locally.
    const now = Date.now();
    await servers[0]!.runtime.store.channels!.updateChannel(channelId, () =>
      channelRecord({ channelId, channelConfig, onchainSyncedAt: now, lastRequestTimestamp: now }),
    );
  }, 60_000);

  afterAll(async () => {
    await mcp?.close();
    for (const server of servers) await server.close();
    await facilitator?.close();
    await schema?.drop();
  });

  async function voucher(max: bigint): Promise<PaymentPayload> {
    const signed = await signVoucher(payer, channelId, max.toString(), NETWORK);
    return { x402Version: 2, accepted: entry, payload: { type: 'voucher', channelConfig, voucher: signed } };
  }

  /** The voucher to the first instance over HTTP: true when it paid for the call. */
  async function overHttp(payment: PaymentPayload): Promise<boolean> {
    const signature = Buffer.from(JSON.stringify(payment)).toString('base64');
    const res = await fetch(`${servers[0]!.url}${tool.path}`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json', 'payment-signature': signature },
    });
    await res.arrayBuffer();
    return res.status === 200;
  }

  /** The same voucher to the second instance over MCP: true when it paid for the call. */
  async function overMcp(payment: PaymentPayload): Promise<boolean> {
    const result = await mcp.callTool({ name: tool.name, arguments: {}, _meta: { 'x402/payment': payment } });
    return !result.isError;
  }

  it('takes each voucher sent to both at once exactly once, the cumulative amount exact', async () => {
    let paid = 0;
    for (let i = 1n; i <= BigInt(ROUNDS); i++) {
      const payment = await voucher(i * 1000n);
      const outcomes = await Promise.all([overHttp(payment), overMcp(structuredClone(payment))]);
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      paid++;
    }
    expect(runs).toBe(paid);
    const channel = await servers[1]!.runtime.store.channels!.get(channelId);
    expect(channel).toMatchObject({
      chargedCumulativeAmount: String(ROUNDS * 1000),
      signedMaxClaimable: String(ROUNDS * 1000),
    });
    expect(channel?.pendingRequest).toBeUndefined();
    const receipts = await servers[0]!.runtime.store.ledger.listReceipts({ limit: 200 });
    expect(receipts.filter((r) => r.kind === 'voucher' && r.status === 'settled')).toHaveLength(ROUNDS);
    expect(facilitator.calls).toEqual({ verify: 0, settle: 0 });
  }, 120_000);
});
