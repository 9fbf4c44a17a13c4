import type { PaymentRequired } from '@x402/core/types';
import { createPublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReceiptRecord } from '../../src/store/ledger.js';
import { payOverHttp } from '../support/batch-pay.js';
import {
  readOnchainChannel,
  startBatchSettlementEnvironment,
  type BatchSettlementEnvironment,
} from '../support/chain/batch-settlement.js';
import { batchPayer } from '../support/chain/batch-settlement-parties.js';
import { localTransport, localViemChain } from '../support/chain/token.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { sideEffectTool } from '../support/tools.js';

/**
 * The server's own claim loop (src/payments/batch/claim-loop.ts) with the in-process facilitator
 * (FACILITATOR_EVM_PRIVATE_KEY, no facilitator URL) as the channels' receiver-authorizer (no
 * BATCH_RECEIVER_AUTHORIZER_KEY): nothing but its timer (BATCH_CLAIM_INTERVAL=10) claims and settles the vouchers.
 */
const PRICE = 1000n; // $0.001 in USDC base units
const CALLS = 8;
let runs = 0;
const tool = sideEffectTool('batch-claim-loop', async () => {
  runs++;
});

let env: BatchSettlementEnvironment;
let server: TestServer;

beforeAll(async () => {
  env = await startBatchSettlementEnvironment(1);
  server = await startTestServer(
    { ...env.env, MPP: 'off', BATCH_SETTLEMENT: 'on', BATCH_CLAIM_INTERVAL: '10' },
    { tools: [tool] },
  );
}, 120_000);

afterAll(async () => {
  await server?.close();
  await env?.stop();
});

/** The ledger's claim and settle receipts, once the loop has written a settled settle row (polled, no deadline). */
async function claimAndSettle(): Promise<ReceiptRecord[]> {
  for (;;) {
    const rows = await server.runtime.store.ledger.listReceipts({ limit: 50 });
    if (rows.some((r) => r.kind === 'settle' && r.status === 'settled'))
      return rows.filter((r) => r.kind === 'claim' || r.kind === 'settle');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("the server's claim loop with the in-process facilitator as receiver-authorizer", () => {
  it('claims and settles the charged vouchers on its own: one claim and one settle move their sum to the pay-to', async () => {
    const relayer = privateKeyToAccount(env.env.FACILITATOR_EVM_PRIVATE_KEY as `0x${string}`).address;
    const probe = await fetch(`${server.url}${tool.path}`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    const { accepts } = decodeHeader(probe.headers.get('payment-required')) as PaymentRequired;
    expect(accepts.find((a) => a.scheme === 'batch-settlement')?.extra).toMatchObject({ receiverAuthorizer: relayer });

    // The test holds the round's lease while it pays, as another instance running the round would: the loop's checks
    // skip meanwhile, so its first claim after the release takes every charge at once.
    const upkeep = server.runtime.store.batchUpkeep!;
    const held = Date.now() + 600_000;
    while (!(await upkeep.takeLease('batch-claims', held, Date.now()))) await new Promise((r) => setTimeout(r, 50));
    const call = payOverHttp(
      batchPayer(env, env.payers[0]!, { depositMultiplier: 2 * CALLS }),
      `${server.url}${tool.path}`,
    );
    for (let i = 0; i < CALLS; i++) expect((await call()).status).toBe(200);
    expect(runs).toBe(CALLS);
    const [channel] = await server.runtime.store.channels!.list();
    expect(channel).toMatchObject({ chargedCumulativeAmount: String(BigInt(CALLS) * PRICE), totalClaimed: '0' });
    const payToBefore = await env.balance(env.payTo);
    await upkeep.releaseLease('batch-claims', held);

    const rows = await claimAndSettle();
    const sum = BigInt(CALLS) * PRICE;
    expect(rows.map((r) => `${r.kind}:${r.status}:${r.amount}`).sort()).toEqual([
      `claim:settled:${sum}`,
      `settle:settled:${sum}`,
    ]);
    const chain = createPublicClient({ chain: localViemChain(env.chain), transport: localTransport(env.chain) });
    for (const row of rows) {
      expect(row.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      const receipt = await chain.getTransactionReceipt({ hash: row.transaction as `0x${string}` });
      expect(receipt.status).toBe('success');
    }
    const onchain = await readOnchainChannel(env.chain, channel!.channelId as `0x${string}`);
    expect(onchain.totalClaimed).toBe(sum);
    expect(await env.balance(env.payTo)).toBe(payToBefore + sum);
    expect((await server.runtime.store.channels!.get(channel!.channelId))?.totalClaimed).toBe(String(sum));
  }, 120_000);
});
