import { rmSync } from 'node:fs';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import { fetchRequest } from '../../src/agent/cli-fetch.js';
import type { CallOptions } from '../../src/agent/call.js';
import { agentOfPayer } from '../support/agent-of-payer.js';
import { startAnswerProxy, type AnswerProxy } from '../support/answer-proxy.js';
import { startOfficialSeller, startV1Seller, type OfficialSeller } from '../support/official-seller.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';

let paid: PaidEnvironment;
let seller: OfficialSeller;
let legacy: OfficialSeller;
let proxy: AnswerProxy;
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const dirs: string[] = [];
const agents: Agent[] = [];

beforeAll(async () => {
  paid = await startPaidEnvironment(6);
  seller = await startOfficialSeller(paid, payTo);
  legacy = await startV1Seller(paid, payTo);
  proxy = await startAnswerProxy(seller.url);
}, 120_000);
afterAll(async () => {
  for (const agent of agents) await agent.close();
  await proxy?.close();
  await seller?.close();
  await legacy?.close();
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
const quote = () => fetchRequest({ url: `${seller.url}/quote`, method: 'GET', headers: {} });

describe('tollbooth fetch against an official @x402/express seller (x402 v2)', () => {
  it('pays the PAYMENT-REQUIRED challenge with a real signature, returns the body and books one settled spend keyed by the URL', async () => {
    const agent = await agentFor(0);
    const payer = paid.payers[0]!.address;
    const before = { payer: await paid.balance(payer), payTo: await paid.balance(payTo), runs: seller.runs() };
    const outcome = await agent.caller.fetchUrl(quote(), options());
    expect(outcome).toMatchObject({ type: 'success', output: { quote: 'paid knowledge' } });
    expect(outcome).toMatchObject({ receipt: { success: true, network: LOCAL_NETWORK } });
    expect(await paid.balance(payer)).toBe(before.payer - 1000n);
    expect(await paid.balance(payTo)).toBe(before.payTo + 1000n);
    expect(seller.runs()).toBe(before.runs + 1);
    const spends = await agent.spends.listSpends();
    expect(spends).toHaveLength(1);
    expect(spends[0]).toMatchObject({
      tool: 'fetch',
      resource: `${seller.url}/quote`,
      status: 'settled',
      network: LOCAL_NETWORK,
      amount: '1000',
      usdMicros: 1000,
    });
  });

  it('a dry run shows the price and the chosen option and pays nothing', async () => {
    const agent = await agentFor(1);
    const payer = paid.payers[1]!.address;
    const before = { payer: await paid.balance(payer), runs: seller.runs() };
    const outcome = await agent.caller.fetchUrl(quote(), options({ dryRun: true }));
    expect(outcome.type).toBe('dry_run');
    if (outcome.type !== 'dry_run') return;
    expect(outcome.report).toMatchObject({
      tool: 'fetch',
      url: `${seller.url}/quote`,
      x402Version: 2,
      chosen: { protocol: 'x402', scheme: 'exact', network: LOCAL_NETWORK, amount: '1000', usd: '$0.001' },
    });
    expect(await paid.balance(payer)).toBe(before.payer);
    expect(seller.runs()).toBe(before.runs);
    expect(await agent.spends.listSpends()).toEqual([]);
  });

  it('a price over what is left of the daily budget is refused before signing: nothing paid, nothing booked', async () => {
    const agent = await agentFor(2, { BUDGET_MAX_USD_PER_DAY: '0.0005' });
    const payer = paid.payers[2]!.address;
    const before = { payer: await paid.balance(payer), runs: seller.runs() };
    const outcome = await agent.caller.fetchUrl(quote(), options());
    expect(outcome).toMatchObject({ type: 'refused', error: { code: 'budget_exceeded' } });
    expect(await paid.balance(payer)).toBe(before.payer);
    expect(seller.runs()).toBe(before.runs);
    expect(await agent.spends.listSpends({ statuses: ['reserved', 'settled', 'pending'] })).toEqual([]);
  });

  it('a price above the approval threshold is not paid when the user cannot be asked (the command line without --yes)', async () => {
    const agent = await agentFor(2, { BUDGET_ASK_ABOVE_USD: '0.0005' });
    const payer = paid.payers[2]!.address;
    const before = { payer: await paid.balance(payer), runs: seller.runs() };
    const outcome = await agent.caller.fetchUrl(quote(), options({ approve: async () => 'unavailable' }));
    expect(outcome).toMatchObject({ type: 'refused', error: { code: 'payment_not_approved' } });
    expect(await paid.balance(payer)).toBe(before.payer);
    expect(seller.runs()).toBe(before.runs);
    expect(await agent.spends.listSpends({ statuses: ['reserved', 'settled', 'pending'] })).toEqual([]);
  });

  it('a price over the per-call cap is refused without claiming anything', async () => {
    const agent = await agentFor(2);
    const outcome = await agent.caller.fetchUrl(quote(), options({ maxUsdPerCall: 0.0001 }));
    expect(outcome).toMatchObject({ type: 'refused', error: { code: 'budget_exceeded' } });
    expect(await agent.spends.listSpends()).toEqual([]);
  });
});

describe('tollbooth fetch against a legacy x402 version 1 seller', () => {
  it('reads the accepts of the 402 body, pays with X-PAYMENT and books the spend in dollars', async () => {
    const agent = await agentFor(3);
    const payer = paid.payers[3]!.address;
    const before = { payer: await paid.balance(payer), runs: legacy.runs() };
    const request = fetchRequest({ url: `${legacy.url}/v1/quote`, method: 'GET', headers: {} });
    const outcome = await agent.caller.fetchUrl(request, options());
    expect(outcome).toMatchObject({ type: 'success', output: { quote: 'legacy knowledge' } });
    expect(await paid.balance(payer)).toBe(before.payer - 1000n);
    expect(legacy.runs()).toBe(before.runs + 1);
    expect(await agent.spends.listSpends()).toMatchObject([
      { tool: 'fetch', status: 'settled', network: LOCAL_NETWORK, amount: '1000', usdMicros: 1000 },
    ]);
  });
});

describe('tollbooth fetch when the answer to a sent payment is lost', () => {
  it('re-sends the same payment instead of paying again, books it settled once, and a second identical fetch pays once for its own answer', async () => {
    const agent = await agentFor(4);
    const payer = paid.payers[4]!.address;
    const before = { payer: await paid.balance(payer), runs: seller.runs() };
    const request = fetchRequest({ url: `${proxy.url}/quote`, method: 'GET', headers: {} });
    proxy.arm({ type: 'cut' });
    const lost = await agent.caller.fetchUrl(request, options());
    expect(lost).toMatchObject({ type: 'refused', error: { code: 'payment_failed' } });
    expect(await paid.balance(payer)).toBe(before.payer - 1000n);
    expect(seller.runs()).toBe(before.runs + 1);
    expect(await agent.spends.listSpends()).toMatchObject([{ tool: 'fetch', status: 'settled' }]);

    const again = await agent.caller.fetchUrl(request, options());
    expect(again).toMatchObject({ type: 'success', output: { quote: 'paid knowledge' } });
    expect(await paid.balance(payer)).toBe(before.payer - 2000n);
    expect((await agent.spends.listSpends()).map((s) => s.status)).toEqual(['settled', 'settled']);
  });
});

describe('the price-drift guard against an official @x402/express seller that raised its price', () => {
  it('a price more than AGENT_PRICE_DRIFT above the last one paid at the same origin is refused before signing: nothing paid, booked or counted', async () => {
    // The same origin (the proxy) first answered by the seller at $0.001, then by one asking $0.002: a raised price.
    const dearer = await startOfficialSeller(paid, payTo, '$0.002');
    try {
      const agent = await agentFor(5);
      const payer = paid.payers[5]!.address;
      const request = fetchRequest({ url: `${proxy.url}/quote`, method: 'GET', headers: {} });
      expect(await agent.caller.fetchUrl(request, options())).toMatchObject({ type: 'success' });
      proxy.switchTo(dearer.url);
      const day = new Date().toISOString().slice(0, 10);
      const before = { payer: await paid.balance(payer), spent: await agent.spends.spentOn(day) };
      const outcome = await agent.caller.fetchUrl(request, options());
      expect(outcome).toMatchObject({
        type: 'refused',
        error: { code: 'budget_exceeded', details: { rule: 'price_drift', expected: '$0.001', asked: '$0.002' } },
      });
      expect(await paid.balance(payer)).toBe(before.payer);
      expect(dearer.runs()).toBe(0);
      expect(await agent.spends.spentOn(day)).toBe(before.spent);
      expect((await agent.spends.listSpends()).map((s) => [s.status, s.usdMicros])).toEqual([['settled', 1000]]);
    } finally {
      proxy.switchTo(seller.url);
      await dearer.close();
    }
  });
});
