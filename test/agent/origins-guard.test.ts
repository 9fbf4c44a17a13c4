import { rmSync } from 'node:fs';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import type { CallOptions } from '../../src/agent/call.js';
import { loadCatalog } from '../../src/agent/catalog.js';
import { McpRemotes } from '../../src/agent/mcp-remote.js';
import { fetchRequest } from '../../src/agent/cli-fetch.js';
import { silentLogger } from '../../src/shared/log.js';
import { agentOfPayer } from '../support/agent-of-payer.js';
import { startOriginSeller, type OriginSeller } from '../support/origin-seller.js';
import { startX402Catalog, x402Document } from '../support/x402-catalog.js';
import { startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';

let paid: PaidEnvironment;
let seller: OriginSeller;
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const dirs: string[] = [];
const agents: Agent[] = [];
/** The MCP connections the catalogs probe. */
const mcp = new McpRemotes();

beforeAll(async () => {
  paid = await startPaidEnvironment(7);
  seller = await startOriginSeller(paid, payTo);
}, 120_000);
afterAll(async () => {
  await mcp.close();
  for (const agent of agents) await agent.close();
  await seller?.close();
  await paid?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The agent side of payer `i` with its own store, as `tollbooth fetch` builds it. */
const agentFor = (i: number, env: Record<string, string> = {}) => agentOfPayer(paid, i, env, { agents, dirs });

const options = (extra: Partial<CallOptions> = {}): CallOptions => ({
  signal: new AbortController().signal,
  approve: async () => 'accepted',
  ...extra,
});
const quote = (query = '') => fetchRequest({ url: `${seller.url}/quote${query}`, method: 'GET', headers: {} });

/** What a refusal must leave as it was: the payer's balance, the seller's signed requests and runs, the agent's ledger. */
async function state(agent: Agent, i: number) {
  await agent.receiptChecks.settled(); // the on-chain check of a paid receipt marks its spend in the background
  return {
    balance: await paid.balance(paid.payers[i]!.address),
    signed: seller.signed(),
    runs: seller.runs(),
    spends: await agent.spends.listSpends(),
    spentToday: (await agent.budget.status()).spentMicros,
  };
}

describe('the origin allow-list (AGENT_ORIGINS)', () => {
  it('refuses an origin not in the list before sending it anything: no request, no signature, no spend', async () => {
    const agent = await agentFor(0, { AGENT_ORIGINS: 'https://known.example' });
    const before = { ...(await state(agent, 0)), requests: seller.requests() };
    const outcome = await agent.caller.fetchUrl(quote(), options());
    expect(outcome).toMatchObject({
      type: 'refused',
      error: { code: 'budget_exceeded', details: { rule: 'origin_not_allowed', origin: seller.url } },
    });
    expect({ ...(await state(agent, 0)), requests: seller.requests() }).toEqual(before);
  });

  it('pays an origin in the list, and books the spend with its origin and pay-to', async () => {
    const agent = await agentFor(0, { AGENT_ORIGINS: `https://known.example,${seller.url}/any/path` });
    const before = await state(agent, 0);
    const outcome = await agent.caller.fetchUrl(quote(), options());
    expect(outcome).toMatchObject({ type: 'success', output: { quote: 'paid knowledge' } });
    expect(await paid.balance(paid.payers[0]!.address)).toBe(before.balance - 1000n);
    expect(await agent.spends.listSpends()).toMatchObject([
      { tool: 'fetch', status: 'settled', origin: seller.url, payTo, usdMicros: 1000 },
    ]);
  });
});

describe('per-origin caps (AGENT_ORIGIN_LIMITS)', () => {
  it("refuses a price over the origin's own per-call cap without signing, though the global cap allows it", async () => {
    const agent = await agentFor(1, { AGENT_ORIGIN_LIMITS: `${seller.url}=0.0005/1` });
    const before = await state(agent, 1);
    const outcome = await agent.caller.fetchUrl(quote(), options());
    expect(outcome).toMatchObject({
      type: 'refused',
      error: { code: 'budget_exceeded', details: { rule: 'origin_per_call', origin: seller.url } },
    });
    expect(await state(agent, 1)).toEqual(before);
  });

  it('applies the `*` entry to an origin not named', async () => {
    const agent = await agentFor(1, { AGENT_ORIGIN_LIMITS: `https://other.example=1/1,*=0.0009` });
    const before = await state(agent, 1);
    expect(await agent.caller.fetchUrl(quote(), options())).toMatchObject({
      type: 'refused',
      error: { details: { rule: 'origin_per_call' } },
    });
    expect(await state(agent, 1)).toEqual(before);
  });

  it("refuses a payment over what is left of the origin's day cap: the first is paid, the second not signed", async () => {
    const agent = await agentFor(2, { AGENT_ORIGIN_LIMITS: `${seller.url}=/0.0015` });
    expect(await agent.caller.fetchUrl(quote('?n=1'), options())).toMatchObject({ type: 'success' });
    const before = await state(agent, 2);
    const second = await agent.caller.fetchUrl(quote('?n=2'), options());
    expect(second).toMatchObject({
      type: 'refused',
      error: { code: 'budget_exceeded', details: { rule: 'origin_per_day', origin: seller.url } },
    });
    expect(await state(agent, 2)).toEqual(before);
    expect(before.spentToday).toBe(1000);
  });

  it('lets only one of two concurrent calls through a day cap that fits one (one atomic reservation)', async () => {
    const agent = await agentFor(3, { AGENT_ORIGIN_LIMITS: `${seller.url}=/0.001` });
    const before = await state(agent, 3);
    const outcomes = await Promise.all([
      agent.caller.fetchUrl(quote('?c=1'), options()),
      agent.caller.fetchUrl(quote('?c=2'), options()),
    ]);
    expect(outcomes.map((o) => o.type).sort()).toEqual(['refused', 'success']);
    expect(await paid.balance(paid.payers[3]!.address)).toBe(before.balance - 1000n);
    expect(seller.signed()).toBe(before.signed + 1);
    const counted = await agent.spends.listSpends({ statuses: ['reserved', 'settled', 'pending'] });
    expect(counted).toMatchObject([{ status: 'settled', origin: seller.url }]);
  });
});

describe('the price-drift guard (AGENT_PRICE_DRIFT)', () => {
  it('refuses a price more than 10% above --expect-price without signing', async () => {
    const agent = await agentFor(4);
    const before = await state(agent, 4);
    const outcome = await agent.caller.fetchUrl(quote(), options({ expectUsd: 0.0009 }));
    expect(outcome).toMatchObject({
      type: 'refused',
      error: { code: 'budget_exceeded', details: { rule: 'price_drift', expected: '$0.0009', asked: '$0.001' } },
    });
    expect(await state(agent, 4)).toEqual(before);
    // Within the tolerance it pays.
    expect(await agent.caller.fetchUrl(quote(), options({ expectUsd: 0.00095 }))).toMatchObject({ type: 'success' });
  });

  it('guards against the last price paid for the same origin and path: a rise of 20% is refused, 5% is paid', async () => {
    const agent = await agentFor(5);
    try {
      expect(await agent.caller.fetchUrl(quote('?d=1'), options())).toMatchObject({ type: 'success' });
      seller.set({ amount: '1200' });
      const before = await state(agent, 5);
      const outcome = await agent.caller.fetchUrl(quote('?d=2'), options());
      expect(outcome).toMatchObject({ type: 'refused', error: { details: { rule: 'price_drift', percent: 10 } } });
      expect(await state(agent, 5)).toEqual(before);
      seller.set({ amount: '1050' });
      expect(await agent.caller.fetchUrl(quote('?d=3'), options())).toMatchObject({ type: 'success' });
      expect(await paid.balance(paid.payers[5]!.address)).toBe(before.balance - 1050n);
    } finally {
      seller.set({ amount: '1000' });
    }
  });

  it('a wider tolerance lets the rise through', async () => {
    const agent = await agentFor(6, { AGENT_PRICE_DRIFT: '25%' });
    try {
      expect(await agent.caller.fetchUrl(quote('?e=1'), options())).toMatchObject({ type: 'success' });
      seller.set({ amount: '1200' });
      expect(await agent.caller.fetchUrl(quote('?e=2'), options())).toMatchObject({ type: 'success' });
    } finally {
      seller.set({ amount: '1000' });
    }
  });
});

describe("the price-drift guard against a remote catalog's published price", () => {
  it('refuses a remote tool whose challenge asks more than its /.well-known/x402 price plus the tolerance', async () => {
    const catalog = await startX402Catalog(
      x402Document([
        {
          resource: `${seller.url}/quote`,
          method: 'GET',
          name: 'quote',
          description: 'A quote published at half the price asked',
          inputSchema: { type: 'object', properties: {} },
          price: { usd: '0.0005', currency: 'USD' },
        },
      ]),
    );
    try {
      const [tool] = await loadCatalog(mcp, [{ url: catalog.url }], 10_000, silentLogger);
      expect(tool?.target.expectedUsdMicros).toBe(500);
      const agent = await agentFor(6);
      const before = await state(agent, 6);
      const outcome = await agent.caller.call(tool!.target, {}, options());
      expect(outcome).toMatchObject({
        type: 'refused',
        error: { details: { rule: 'price_drift', expected: '$0.0005', asked: '$0.001' } },
      });
      expect(await state(agent, 6)).toEqual(before);
    } finally {
      await catalog.close();
    }
  });
});
