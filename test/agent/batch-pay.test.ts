import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import { refundChannels } from '../../src/agent/batch-refund.js';
import type { CallOptions } from '../../src/agent/call.js';
import { fetchRequest } from '../../src/agent/cli-fetch.js';
import { silentLogger } from '../../src/shared/log.js';
import { openStore } from '../../src/store/open.js';
import { agentDataDir } from '../support/agent.js';
import { batchAgentConfig } from '../support/batch-agent.js';
import { startBatchSeller, type BatchSeller } from '../support/batch-seller.js';
import {
  readOnchainChannel,
  startBatchSettlementEnvironment,
  type BatchSettlementEnvironment,
} from '../support/chain/batch-settlement.js';

const PRICE = 1_000n;
const CALLS = 3;

let env: BatchSettlementEnvironment;
let seller: BatchSeller;
const dirs: string[] = [];
const agents: Agent[] = [];

beforeAll(async () => {
  env = await startBatchSettlementEnvironment(6);
  seller = await startBatchSeller(env, PRICE);
}, 120_000);
afterAll(async () => {
  for (const agent of agents) await agent.close();
  await seller?.close();
  await env?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The agent side of payer `i` over the store in `dataDir`, as `tollbooth fetch` builds it. */
async function agentFor(i: number, dataDir: string, extra: Record<string, string> = {}): Promise<Agent> {
  const config = batchAgentConfig(env, i, dataDir, extra);
  const agent = await createAgent(config, silentLogger, openStore);
  agents.push(agent);
  return agent;
}

function newDir(): string {
  const dir = agentDataDir();
  dirs.push(dir);
  return dir;
}

const options: CallOptions = { signal: new AbortController().signal, approve: async () => 'accepted' };
const quote = () => fetchRequest({ url: `${seller.url}/quote`, method: 'GET', headers: {} });

/** What the agent's ledger counts today, split by kind. */
async function booked(agent: Agent) {
  const [channel] = await agent.batch!.book.list();
  return { channel, spent: (await agent.budget.status()).spentMicros };
}

describe('the agent pays a batch-settlement seller (official @x402/express + batch scheme) from one deposit', () => {
  it('deposits once on chain, pays N calls by voucher, survives a restart and refunds the rest to the budget', async () => {
    const dir = newDir();
    const payer = env.payers[0]!.address;
    const start = await env.balance(payer);
    let agent = await agentFor(0, dir);
    for (let i = 0; i < CALLS; i++) {
      const outcome = await agent.caller.fetchUrl(quote(), options);
      expect(outcome).toMatchObject({ type: 'success', output: { quote: 'batched knowledge' } });
    }
    const deposit = 20n * PRICE;
    expect(await env.balance(payer)).toBe(start - deposit);
    let { channel, spent } = await booked(agent);
    const onchain = await readOnchainChannel(env.chain, channel!.channelId as `0x${string}`);
    expect(onchain.balance).toBe(deposit);
    expect(channel).toMatchObject({ deposited: deposit.toString(), spentMicros: CALLS * 1000 });
    expect(channel!.committedMicros).toBe(Number(deposit) - CALLS * 1000);
    expect(spent).toBe(Number(deposit));
    const kinds = (await agent.spends.listSpends()).map((s) => `${s.kind}:${s.status}:${s.usdMicros}`).sort();
    expect(kinds).toEqual([
      `deposit:settled:${Number(deposit) - CALLS * 1000}`,
      ...Array(CALLS).fill('voucher:settled:1000'),
    ]);

    await agent.close();
    agents.splice(agents.indexOf(agent), 1);
    agent = await agentFor(0, dir);
    const again = await agent.caller.fetchUrl(quote(), options);
    expect(again).toMatchObject({ type: 'success' });
    expect(await env.balance(payer)).toBe(start - deposit);
    ({ channel } = await booked(agent));
    expect(channel).toMatchObject({ deposited: deposit.toString(), spentMicros: (CALLS + 1) * 1000 });
    expect(seller.runs()).toBe(CALLS + 1);

    const results = await refundChannels(agent, {});
    expect(results).toMatchObject([{ channelId: channel!.channelId, refunded: (deposit - 4n * PRICE).toString() }]);
    expect(await env.balance(payer)).toBe(start - 4n * PRICE);
    ({ channel, spent } = await booked(agent));
    expect(channel).toMatchObject({
      committedMicros: 0,
      spentMicros: 4000,
      refunded: (deposit - 4n * PRICE).toString(),
    });
    expect(spent).toBe(4000);
  }, 120_000);

  it('spends nothing on a call the seller failed, and keeps the channel in step for the next call', async () => {
    const agent = await agentFor(1, newDir());
    expect(await agent.caller.fetchUrl(quote(), options)).toMatchObject({ type: 'success' });
    const broken = fetchRequest({ url: `${seller.url}/broken`, method: 'GET', headers: {} });
    expect(await agent.caller.fetchUrl(broken, options)).toMatchObject({ type: 'remote_error', status: 500 });
    expect(await agent.caller.fetchUrl(quote(), options)).toMatchObject({ type: 'success' });
    const [channel] = await agent.batch!.book.list();
    expect(channel).toMatchObject({ spentMicros: 2000, context: { chargedCumulativeAmount: '2000' } });
  }, 60_000);

  it('refuses a price above the per-call cap without depositing', async () => {
    const payer = env.payers[3]!.address;
    const start = await env.balance(payer);
    const agent = await agentFor(3, newDir(), { BUDGET_MAX_USD_PER_CALL: '0.0005' });
    const outcome = await agent.caller.fetchUrl(quote(), options);
    expect(outcome).toMatchObject({ type: 'refused', error: { code: 'budget_exceeded' } });
    expect(await env.balance(payer)).toBe(start);
    expect(await agent.batch!.book.list()).toEqual([]);
  }, 60_000);

  it('deposits no more than what is left of the day’s budget, and refuses when not even one call is left', async () => {
    const payer = env.payers[2]!.address;
    const start = await env.balance(payer);
    const agent = await agentFor(2, newDir(), { BUDGET_MAX_USD_PER_DAY: '0.005' });
    expect(await agent.caller.fetchUrl(quote(), options)).toMatchObject({ type: 'success' });
    expect(await env.balance(payer)).toBe(start - 5000n);
    for (let i = 0; i < 4; i++)
      expect(await agent.caller.fetchUrl(quote(), options)).toMatchObject({ type: 'success' });
    const over = await agent.caller.fetchUrl(quote(), options);
    expect(over).toMatchObject({ type: 'refused', error: { code: 'budget_exceeded' } });
    expect(await env.balance(payer)).toBe(start - 5000n);
    expect((await agent.budget.status()).spentMicros).toBe(5000);
  }, 60_000);

  it('sizes a deposit down to the origin’s caps, and refuses a top-up above them without paying', async () => {
    const payer = env.payers[4]!.address;
    const start = await env.balance(payer);
    // At most $0.002 to this origin at once, $0.0025 a day: the deposit is two calls' price, not twenty.
    const agent = await agentFor(4, newDir(), { AGENT_ORIGIN_LIMITS: `${seller.url}=0.002/0.0025` });
    for (let i = 0; i < 2; i++)
      expect(await agent.caller.fetchUrl(quote(), options)).toMatchObject({ type: 'success' });
    expect(await env.balance(payer)).toBe(start - 2n * PRICE);
    const before = await agent.spends.listSpends();
    // The third call needs a top-up of at least $0.001; only $0.0005 of the origin's day is left.
    const over = await agent.caller.fetchUrl(quote(), options);
    expect(over).toMatchObject({
      type: 'refused',
      error: { code: 'budget_exceeded', details: { rule: 'origin_per_day', origin: seller.url } },
    });
    expect((over as { error: { message: string } }).error.message).toContain('AGENT_ORIGIN_LIMITS');
    expect(await env.balance(payer)).toBe(start - 2n * PRICE);
    expect(await agent.spends.listSpends()).toEqual(before);
    expect((await agent.budget.status()).spentMicros).toBe(2000);
    expect(seller.runs()).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('refuses a first deposit above what is left of the origin’s day without depositing', async () => {
    const payer = env.payers[5]!.address;
    const start = await env.balance(payer);
    const agent = await agentFor(5, newDir(), { AGENT_ORIGIN_LIMITS: `${seller.url}=/0.0005` });
    const outcome = await agent.caller.fetchUrl(quote(), options);
    expect(outcome).toMatchObject({
      type: 'refused',
      error: { code: 'budget_exceeded', details: { rule: 'origin_per_day', origin: seller.url } },
    });
    expect(await env.balance(payer)).toBe(start);
    // The client scheme may have noted the channel it read on chain (empty); nothing was deposited into it.
    for (const channel of await agent.batch!.book.list())
      expect(channel).toMatchObject({ deposited: '0', committedMicros: 0, spentMicros: 0 });
    expect(await agent.spends.listSpends()).toEqual([]);
    expect((await agent.budget.status()).spentMicros).toBe(0);
  }, 60_000);
});
