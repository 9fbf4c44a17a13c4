import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOnchainChannel, type BatchSettlementEnvironment } from '../support/chain/batch-settlement.js';
import { batchPayer, type BatchPayer } from '../support/chain/batch-settlement-parties.js';
import { payOverHttp, payOverMcp as payOverMcpAs } from '../support/batch-pay.js';
import type { HttpFacilitator } from '../support/http-facilitator.js';
import { connectHttpClient } from '../support/mcp.js';
import { decodeHeader, type TestServer } from '../support/server.js';
import { startBatchTollbooth } from '../support/batch-tollbooth.js';
import { encodePayment } from '../support/payer.js';
import { sideEffectTool } from '../support/tools.js';

const PRICE = 1000n; // $0.001 in USDC base units
let runs = 0;
const tool = sideEffectTool('batch-paid', async () => {
  runs++;
});

let env: BatchSettlementEnvironment;
let facilitator: HttpFacilitator;
let server: TestServer;
let mcp: Client;
let payer: BatchPayer;

beforeAll(async () => {
  ({ env, facilitator, server } = await startBatchTollbooth({
    payers: 1,
    price: PRICE,
    tools: [tool],
    authorizerKey: generatePrivateKey(),
  }));
  mcp = await connectHttpClient(server.url);
  payer = batchPayer(env, env.payers[0]!);
}, 120_000);

afterAll(async () => {
  await mcp?.close();
  await server?.close();
  await facilitator?.close();
  await env?.stop();
});

describe('batch settlement with the official client, facilitator and contract', () => {
  it('pays several calls from one deposit over HTTP and MCP interleaved, each charged once', async () => {
    const call = payOverHttp(payer, `${server.url}${tool.path}`);
    const payOverMcp = () => payOverMcpAs(mcp, payer, tool.name);
    const first = await call();
    expect(first.status).toBe(200);
    const deposit = decodeHeader(first.headers.get('payment-response')) as SettleResponse;
    expect(deposit).toMatchObject({ success: true, extra: { chargedAmount: '1000' } });
    expect(deposit.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const settlesAfterDeposit = facilitator.calls.settle;
    const verifiesAfterDeposit = facilitator.calls.verify;
    expect((await payOverMcp()).extra).toMatchObject({ channelState: { chargedCumulativeAmount: '2000' } });
    const third = await call();
    expect(third.status).toBe(200);
    expect(decodeHeader(third.headers.get('payment-response'))).toMatchObject({
      transaction: '',
      extra: { chargedAmount: '1000' },
    });
    expect((await payOverMcp()).extra).toMatchObject({ channelState: { chargedCumulativeAmount: '4000' } });
    expect(runs).toBe(4);
    // The vouchers were checked here: no facilitator call after the deposit.
    expect(facilitator.calls.settle).toBe(settlesAfterDeposit);
    expect(facilitator.calls.verify).toBe(verifiesAfterDeposit);
    const [channel] = await server.runtime.store.channels!.list();
    expect(channel).toMatchObject({ chargedCumulativeAmount: '4000', signedMaxClaimable: '4000' });
    const onchain = await readOnchainChannel(env.chain, channel!.channelId as `0x${string}`);
    expect(onchain.balance).toBeGreaterThanOrEqual(4000n);
    const receipts = await server.runtime.store.ledger.listReceipts({ limit: 10 });
    expect(receipts.map((r) => r.kind).sort()).toEqual(['deposit', 'voucher', 'voucher', 'voucher']);
  });

  it('answers a charged voucher sent again with the corrective 402, from which the official client pays on', async () => {
    // A call paid over MCP whose answer the client never processes, as when the connection died with it.
    const unpaid = await mcp.callTool({ name: tool.name, arguments: {} });
    const lost = await payer.client.createPaymentPayload(unpaid.structuredContent as unknown as PaymentRequired);
    expect(
      (await mcp.callTool({ name: tool.name, arguments: {}, _meta: { 'x402/payment': lost } })).isError,
    ).toBeFalsy();
    const runsBefore = runs;
    const [channel] = await server.runtime.store.channels!.list();
    const charged = channel!.chargedCumulativeAmount;
    // The same voucher again (the client's state is behind): no run, no charge, our channel state to resync from.
    const again = await fetch(`${server.url}${tool.path}`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(lost) },
    });
    expect(again.status).toBe(402);
    const corrective = decodeHeader(again.headers.get('payment-required')) as PaymentRequired;
    expect(corrective.error).toBe('invalid_batch_settlement_evm_cumulative_amount_mismatch');
    expect(corrective.accepts.find((a) => a.scheme === 'batch-settlement')?.extra).toMatchObject({
      channelState: { chargedCumulativeAmount: charged },
    });
    expect((await payOverHttp(payer, `${server.url}${tool.path}`)()).status).toBe(200);
    expect(runs).toBe(runsBefore + 1);
    expect((await server.runtime.store.channels!.get(channel!.channelId))?.chargedCumulativeAmount).toBe(
      String(BigInt(charged) + PRICE),
    );
  });
});
