import { x402Client } from '@x402/core/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { toClientEvmSigner } from '@x402/evm';
import {
  BatchSettlementEvmScheme as BatchClientScheme,
  computeChannelId,
  signVoucher,
} from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createPublicClient } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/tool/tool.js';
import { readOnchainChannel, type BatchSettlementEnvironment } from '../support/chain/batch-settlement.js';
import { BASE_NETWORK } from '../support/chain/batch-settlement-parties.js';
import { BASE_USDC, balanceOf, localTransport, localViemChain } from '../support/chain/token.js';
import { claimLoopForServer } from '../support/batch-claims.js';
import { connectHttpClient } from '../support/mcp.js';
import type { HttpFacilitator } from '../support/http-facilitator.js';
import { decodeHeader, type TestServer } from '../support/server.js';
import { startBatchTollbooth } from '../support/batch-tollbooth.js';

const PRICE = 1000n; // $0.001 in USDC base units
const CALLS = 100;
/** The server's receiver-authorizer key: our claim loop in the test signs its claims with it. */
const authorizerKey = generatePrivateKey();
let runs = 0;
/** A paid GET tool: the official client's refund probes and asks on the route with GET. */
const tool = defineTool({
  name: 'batch-refundable',
  title: 'batch refundable',
  description: 'Test tool paid from a batch-settlement channel.',
  group: 'tools',
  method: 'GET',
  path: '/api/test/batch-refundable',
  input: z.object({ note: z.string().optional() }),
  output: z.object({ runs: z.number() }),
  pricing: { usd: '0.001', accepts: 'every-network' },
  annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
  handler: () => ({ runs: ++runs }),
});

let env: BatchSettlementEnvironment;
let facilitator: HttpFacilitator;
let server: TestServer;

beforeAll(async () => {
  ({ env, facilitator, server } = await startBatchTollbooth({
    payers: 2,
    price: PRICE,
    tools: [tool],
    authorizerKey,
    // 100 paid calls from one payer in a few seconds: above the default per-payer and per-address bursts.
    env: { RATE_LIMIT_PAYER_PER_MINUTE: '0', RATE_LIMIT_IP_PER_MINUTE: '0' },
  }));
}, 120_000);

afterAll(async () => {
  await server?.close();
  await facilitator?.close();
  await env?.stop();
});

/** One call over MCP paid the way the official client pays: the 402, its payload in `_meta`, the receipt processed. */
async function payOverMcp(mcp: Client, client: x402Client): Promise<SettleResponse> {
  const unpaid = await mcp.callTool({ name: tool.name, arguments: {} });
  const payload = await client.createPaymentPayload(unpaid.structuredContent as unknown as PaymentRequired);
  const paid = await mcp.callTool({ name: tool.name, arguments: {}, _meta: { 'x402/payment': payload } });
  expect(paid.isError).toBeFalsy();
  const receipt = paid._meta?.['x402/payment-response'] as SettleResponse;
  await client.handlePaymentResponse({
    paymentPayload: payload,
    requirements: payload.accepted,
    settleResponse: receipt,
  });
  return receipt;
}

describe('a payer refund request on batch settlement', () => {
  it('pays 100 calls from one deposit, claims and settles their sum to the pay-to, then refunds the rest', async () => {
    const account = env.payers[0]!;
    const reader = createPublicClient({ chain: localViemChain(env.chain), transport: localTransport(env.chain) });
    // The seller announces a minimum deposit of 10 calls; this payer deposits for all its calls at once.
    const scheme = new BatchClientScheme(toClientEvmSigner(account, reader), {
      depositStrategy: ({ requestAmount }) => BigInt(requestAmount) * BigInt(CALLS + 20),
    });
    const pay = wrapFetchWithPayment(fetch, new x402Client().register(BASE_NETWORK, scheme));
    const url = `${server.url}${tool.path}`;
    const before = await balanceOf(env.chain, BASE_USDC, account.address);
    const settlesBefore = facilitator.calls.settle;
    for (let i = 0; i < CALLS; i++) expect((await pay(url)).status).toBe(200);
    expect(runs).toBe(CALLS);
    // One deposit at the facilitator; the 99 vouchers after it were checked here.
    expect(facilitator.calls.settle - settlesBefore).toBe(1);
    const [channel] = await server.runtime.store.channels!.list();
    const channelId = channel!.channelId as `0x${string}`;
    const charged = BigInt(CALLS) * PRICE;
    expect(channel).toMatchObject({
      chargedCumulativeAmount: charged.toString(),
      signedMaxClaimable: charged.toString(),
    });
    const deposited = (await readOnchainChannel(env.chain, channelId)).balance;
    expect(deposited).toBeGreaterThan(charged);

    // One claim round of our claim loop over the server's store, through the same facilitator over HTTP.
    const payToBefore = await balanceOf(env.chain, BASE_USDC, env.payTo);
    const loop = await claimLoopForServer(env, authorizerKey, server.runtime.store, facilitator.url);
    const [round] = (await loop.tick())!;
    expect(round).toMatchObject({ claimed: charged, failures: [] });
    expect(round!.claimTransactions).toHaveLength(1);
    expect(round!.settleTransaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(facilitator.calls.settle - settlesBefore).toBe(3);
    expect(await balanceOf(env.chain, BASE_USDC, env.payTo)).toBe(payToBefore + charged);
    expect(await readOnchainChannel(env.chain, channelId)).toMatchObject({ balance: deposited, totalClaimed: charged });

    const refund: SettleResponse = await scheme.refund(url);
    expect(refund.success).toBe(true);
    expect(refund.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(runs).toBe(CALLS);
    // Deposit, then the charges, then the refund: the payer is short exactly the charges.
    expect(await balanceOf(env.chain, BASE_USDC, account.address)).toBe(before - charged);
    expect(await readOnchainChannel(env.chain, channelId)).toMatchObject({ balance: charged, totalClaimed: charged });
    const receipts = await server.runtime.store.ledger.listReceipts({ limit: 2 * CALLS });
    const kinds = receipts.map((r) => r.kind);
    expect(kinds.filter((k) => k === 'voucher')).toHaveLength(CALLS - 1);
    expect(kinds.filter((k) => k !== 'voucher').sort()).toEqual(['claim', 'deposit', 'refund', 'settle']);
    expect(receipts.find((r) => r.kind === 'refund')).toMatchObject({
      status: 'settled',
      channelId,
      transaction: refund.transaction,
      amount: (deposited - charged).toString(),
    });
  }, 180_000);

  it('honours a refund sent over MCP in `_meta["x402/payment"]` whatever its arguments, without running the tool', async () => {
    const account = env.payers[1]!;
    const reader = createPublicClient({ chain: localViemChain(env.chain), transport: localTransport(env.chain) });
    const signer = toClientEvmSigner(account, reader);
    const scheme = new BatchClientScheme(signer, { depositPolicy: { depositMultiplier: 5 } });
    const client = new x402Client().register(BASE_NETWORK, scheme);
    const mcp = await connectHttpClient(server.url);
    try {
      const before = await balanceOf(env.chain, BASE_USDC, account.address);
      let receipt: SettleResponse | undefined;
      for (let i = 0; i < 2; i++) receipt = await payOverMcp(mcp, client);
      const unpaid = await mcp.callTool({ name: tool.name, arguments: {} });
      const required = unpaid.structuredContent as unknown as PaymentRequired;
      const requirements = required.accepts.find((a) => a.scheme === 'batch-settlement')!;
      // The refund payload the official client builds: a zero-charge voucher on the charged amount.
      const channelConfig = scheme.buildChannelConfig(requirements);
      const channelId = computeChannelId(channelConfig, BASE_NETWORK);
      const charged = (receipt!.extra as { channelState: { chargedCumulativeAmount: string } }).channelState
        .chargedCumulativeAmount;
      expect(charged).toBe(String(2n * PRICE));
      const voucher = await signVoucher(signer, channelId, charged, BASE_NETWORK);
      const payload = { x402Version: 2, accepted: requirements, payload: { type: 'refund', channelConfig, voucher } };
      const runsBefore = runs;
      // A refund buys no call: arguments the tool would refuse do not stop it (the input is never read).
      const refunded = await mcp.callTool({
        name: tool.name,
        arguments: { note: 42 },
        _meta: { 'x402/payment': payload },
      });
      expect(refunded.isError).toBeFalsy();
      expect(refunded.structuredContent).toMatchObject({ message: 'Refund acknowledged', channelId });
      const refund = refunded._meta?.['x402/payment-response'] as SettleResponse;
      expect(refund).toMatchObject({ success: true });
      expect(refund.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(runs).toBe(runsBefore);
      expect(await balanceOf(env.chain, BASE_USDC, account.address)).toBe(before - 2n * PRICE);
      expect((await readOnchainChannel(env.chain, channelId)).balance).toBe(2n * PRICE);
      // Nothing is left above the charged amount: a further refund is refused here, never sent to the facilitator.
      const settles = facilitator.calls.settle;
      const again = { ...payload, payload: { ...payload.payload, amount: '1' } };
      const refused = await mcp.callTool({ name: tool.name, arguments: {}, _meta: { 'x402/payment': again } });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ error: 'invalid_batch_settlement_evm_refund_no_balance' });
      expect(facilitator.calls.settle).toBe(settles);
    } finally {
      await mcp.close();
    }
  });

  it('keeps a GET without a payment answering the challenge', async () => {
    const unpaid = await fetch(`${server.url}${tool.path}`);
    expect(unpaid.status).toBe(402);
    expect(decodeHeader(unpaid.headers.get('payment-required'))).toMatchObject({ x402Version: 2 });
  });
});
