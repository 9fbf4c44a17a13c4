import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  readOnchainChannel,
  startBatchSettlementEnvironment,
  type BatchSettlementEnvironment,
} from '../support/chain/batch-settlement.js';
import { batchPayer, type BatchPayer } from '../support/chain/batch-settlement-parties.js';
import { claimLoopForServer } from '../support/batch-claims.js';
import { payOverHttp, payOverMcp } from '../support/batch-pay.js';
import { connectHttpClient } from '../support/mcp.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { sideEffectTool } from '../support/tools.js';

const PRICE = 1000n; // $0.001 in USDC base units
/** The server's receiver-authorizer key: the test's claim loop signs its claims with it. */
const authorizerKey = generatePrivateKey();
let runs = 0;
const tool = sideEffectTool('batch-in-process', async () => {
  runs++;
});

let env: BatchSettlementEnvironment;
let server: TestServer;
let mcp: Client;
let payer: BatchPayer;

beforeAll(async () => {
  env = await startBatchSettlementEnvironment(1);
  // No FACILITATOR_URL: the environment's FACILITATOR_EVM_PRIVATE_KEY makes the facilitator in-process.
  server = await startTestServer(
    { ...env.env, MPP: 'off', BATCH_SETTLEMENT: 'on', BATCH_RECEIVER_AUTHORIZER_KEY: authorizerKey },
    { tools: [tool] },
  );
  mcp = await connectHttpClient(server.url);
  payer = batchPayer(env, env.payers[0]!);
}, 120_000);

afterAll(async () => {
  await mcp?.close();
  await server?.close();
  await env?.stop();
});

describe('batch settlement through the in-process facilitator (no facilitator URL)', () => {
  it('offers batch-settlement and takes a deposit, two vouchers, a claim and a settle to the pay-to on chain', async () => {
    expect(server.runtime.facilitator.modes.evm).toBe('in-process');
    const { kinds } = await server.runtime.facilitator.clients.evm!.getSupported();
    const relayer = privateKeyToAccount(env.env.FACILITATOR_EVM_PRIVATE_KEY as `0x${string}`).address;
    expect(kinds.find((k) => k.scheme === 'batch-settlement')).toMatchObject({
      network: 'eip155:8453',
      extra: { receiverAuthorizer: relayer },
    });
    const call = payOverHttp(payer, `${server.url}${tool.path}`);
    const first = await call();
    expect(first.status).toBe(200);
    const deposit = decodeHeader(first.headers.get('payment-response')) as SettleResponse;
    expect(deposit).toMatchObject({ success: true, extra: { chargedAmount: '1000' } });
    expect(deposit.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await payOverMcp(mcp, payer, tool.name)).extra).toMatchObject({
      channelState: { chargedCumulativeAmount: '2000' },
    });
    const third = await call();
    expect(decodeHeader(third.headers.get('payment-response'))).toMatchObject({ transaction: '', success: true });
    expect(runs).toBe(3);
    const payToBefore = await env.balance(env.payTo);
    const { store, facilitator } = server.runtime;
    const loop = await claimLoopForServer(env, authorizerKey, store, facilitator.clients.evm!);
    const [round] = (await loop.tick())!;
    expect(round).toMatchObject({ claimed: 3n * PRICE, failures: [] });
    expect(round!.settleTransaction).toMatch(/^0x[0-9a-f]{64}$/);
    const [channel] = await store.channels!.list();
    expect((await readOnchainChannel(env.chain, channel!.channelId as `0x${string}`)).totalClaimed).toBe(3n * PRICE);
    expect(await env.balance(env.payTo)).toBe(payToBefore + 3n * PRICE);
    const receipts = (await store.ledger.listReceipts({ limit: 20 })).map((r) => `${r.kind}:${r.status}`).sort();
    expect(receipts).toEqual([
      'claim:settled',
      'deposit:settled',
      'settle:settled',
      'voucher:settled',
      'voucher:settled',
    ]);
  });
});

describe('the in-process facilitator as receiver-authorizer', () => {
  it('is named in the batch entry when the operator set no BATCH_RECEIVER_AUTHORIZER_KEY', async () => {
    const alone = await startTestServer({ ...env.env, MPP: 'off', BATCH_SETTLEMENT: 'on' }, { tools: [tool] });
    try {
      const headers = { 'content-type': 'application/json' };
      const res = await fetch(`${alone.url}${tool.path}`, { method: 'POST', body: '{}', headers });
      expect(res.status).toBe(402);
      const { accepts } = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
      const relayer = privateKeyToAccount(env.env.FACILITATOR_EVM_PRIVATE_KEY as `0x${string}`).address;
      expect(accepts.find((a) => a.scheme === 'batch-settlement')?.extra).toMatchObject({
        receiverAuthorizer: relayer,
      });
    } finally {
      await alone.close();
    }
  });
});
