import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import { runDeposits } from '../../src/agent/batch-deposits.js';
import type { CallOptions } from '../../src/agent/call.js';
import { fetchRequest } from '../../src/agent/cli-fetch.js';
import type { AgentConfig } from '../../src/agent/settings.js';
import { silentLogger } from '../../src/shared/log.js';
import { openStore } from '../../src/store/open.js';
import { agentDataDir } from '../support/agent.js';
import { batchAgentConfig } from '../support/batch-agent.js';
import { startBatchSeller, type BatchSeller } from '../support/batch-seller.js';
import {
  advanceChainTime,
  readOnchainChannel,
  startBatchSettlementEnvironment,
  type BatchSettlementEnvironment,
} from '../support/chain/batch-settlement.js';

const PRICE = 1_000n;

let env: BatchSettlementEnvironment;
const sellers: BatchSeller[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  env = await startBatchSettlementEnvironment(4);
}, 120_000);
afterAll(async () => {
  for (const seller of sellers) await seller.close();
  await env?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The agent configuration of payer `i` over a fresh store. */
function configFor(i: number, extra: Record<string, string> = {}): AgentConfig {
  const dataDir = agentDataDir();
  dirs.push(dataDir);
  return batchAgentConfig(env, i, dataDir, extra);
}

async function seller(): Promise<BatchSeller> {
  const started = await startBatchSeller(env, PRICE);
  sellers.push(started);
  return started;
}

const options: CallOptions = { signal: new AbortController().signal, approve: async () => 'accepted' };

/** Pays `n` calls of `at`'s quote with a fresh agent over `config`'s store, then closes it. */
async function pay(config: AgentConfig, at: BatchSeller, n: number): Promise<unknown[]> {
  const agent: Agent = await createAgent(config, silentLogger, openStore);
  try {
    const outcomes: unknown[] = [];
    for (let i = 0; i < n; i++)
      outcomes.push(
        await agent.caller.fetchUrl(fetchRequest({ url: `${at.url}/quote`, method: 'GET', headers: {} }), options),
      );
    return outcomes;
  } finally {
    await agent.close();
  }
}

describe('tollbooth deposits (the agent’s batch-settlement channels)', () => {
  it('lists a channel with its deposit, charges and commitment, and refunds it by id even with new deposits switched off', async () => {
    const config = configFor(0);
    const at = await seller();
    const payer = env.payers[0]!.address;
    const start = await env.balance(payer);
    await pay(config, at, 2);
    const listed = await runDeposits(config, { refund: false, refundIdle: false, json: true }, openStore, silentLogger);
    const { channels } = JSON.parse(listed.text) as { channels: Record<string, unknown>[] };
    expect(channels).toEqual([
      expect.objectContaining({
        deposited: '$0.02',
        charged: '$0.002',
        refundable: '$0.018',
        committed: '$0.018',
        spent: '$0.002',
      }),
    ]);
    const off = { ...config, settings: { ...config.settings, batch: { enabled: false } } };
    const channelId = String(channels[0]!.channelId);
    const refunded = await runDeposits(
      off,
      { refund: true, refundIdle: false, json: true, channelId },
      openStore,
      silentLogger,
    );
    expect(refunded.code).toBe(0);
    expect(JSON.parse(refunded.text)).toMatchObject({
      refunds: [{ channelId, refunded: '18000' }],
      channels: [{ refundable: '$0.00', committed: '$0.00', spent: '$0.002', refunded: '$0.018' }],
    });
    expect(await env.balance(payer)).toBe(start - 2n * PRICE);
  }, 60_000);

  it('refunds channels idle for AGENT_BATCH_IDLE_REFUND_MINUTES when the agent starts', async () => {
    const config = configFor(2);
    const at = await seller();
    const payer = env.payers[2]!.address;
    const start = await env.balance(payer);
    await pay(config, at, 1);
    expect(await env.balance(payer)).toBe(start - 20n * PRICE);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const idle = { ...config, settings: { ...config.settings, batch: { enabled: true, idleRefundMinutes: 0.0001 } } };
    await pay(idle, at, 0);
    expect(await env.balance(payer)).toBe(start - PRICE);
    const listed = await runDeposits(config, { refund: false, refundIdle: false, json: true }, openStore, silentLogger);
    expect(JSON.parse(listed.text)).toMatchObject({
      channels: [{ refundable: '$0.00', committed: '$0.00', spent: '$0.001' }],
    });
  }, 60_000);

  it('keeps paying, from the same deposit, a seller that restarted and lost its channel state', async () => {
    const config = configFor(1);
    const payer = env.payers[1]!.address;
    const start = await env.balance(payer);
    const first = await seller();
    await pay(config, first, 2);
    await first.close();
    const second = await seller();
    expect(await pay(config, second, 2)).toMatchObject([{ type: 'success' }, { type: 'success' }]);
    expect(await env.balance(payer)).toBe(start - 20n * PRICE);
    const listed = await runDeposits(config, { refund: false, refundIdle: false, json: true }, openStore, silentLogger);
    expect(JSON.parse(listed.text)).toMatchObject({ channels: [{ deposited: '$0.02', spent: '$0.004' }] });
  }, 60_000);

  it('withdraws what the seller did not claim, by the escrow’s timed withdrawal once the seller is gone (--withdraw, twice)', async () => {
    const config = configFor(3);
    const payer = env.payers[3]!.address;
    const start = await env.balance(payer);
    const at = await seller();
    await pay(config, at, 2);
    // The seller claims the two calls it holds vouchers for, then disappears with the last three unclaimed.
    expect(await at.parties.manager.claim()).toHaveLength(1);
    await pay(config, at, 3);
    await at.close();
    const withdraw = () =>
      runDeposits(config, { refund: false, refundIdle: false, withdraw: true, json: true }, openStore, silentLogger);
    const started = JSON.parse((await withdraw()).text) as { withdrawals: Record<string, string>[] };
    const channelId = started.withdrawals[0]!.channelId!;
    // All of the deposit but the two claimed calls comes back, the three vouchers the seller never claimed included.
    expect(started.withdrawals).toEqual([expect.objectContaining({ channelId, started: String(18n * PRICE) })]);
    expect(JSON.parse((await withdraw()).text)).toMatchObject({ withdrawals: [{ channelId, waiting: '18000' }] });
    await advanceChainTime(env.chain, 900);
    const finished = await withdraw();
    expect(finished.code).toBe(0);
    expect(JSON.parse(finished.text)).toMatchObject({
      withdrawals: [{ channelId, withdrawn: String(18n * PRICE) }],
      channels: [{ channelId, refunded: '$0.018', committed: '$0.00', refundable: '$0.00', spent: '$0.005' }],
    });
    expect(await env.balance(payer)).toBe(start - 2n * PRICE);
    expect(await readOnchainChannel(env.chain, channelId as `0x${string}`)).toMatchObject({
      balance: 2n * PRICE,
      totalClaimed: 2n * PRICE,
    });
    expect(JSON.parse((await withdraw()).text)).toMatchObject({ withdrawals: [] });
  }, 60_000);
});
