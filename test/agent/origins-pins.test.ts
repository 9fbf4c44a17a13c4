import { rmSync } from 'node:fs';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import type { Approval, CallOptions } from '../../src/agent/call.js';
import { fetchRequest } from '../../src/agent/cli-fetch.js';
import { loadAgentConfig } from '../../src/agent/settings.js';
import { formatSpending, spendingReport } from '../../src/agent/spending.js';
import { silentLogger } from '../../src/shared/log.js';
import { openStore } from '../../src/store/open.js';
import { agentDataDir } from '../support/agent.js';
import { agentOfPayer } from '../support/agent-of-payer.js';
import { startOriginSeller, type OriginSeller } from '../support/origin-seller.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';

let paid: PaidEnvironment;
let seller: OriginSeller;
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const otherPayTo = privateKeyToAccount(generatePrivateKey()).address;
const dirs: string[] = [];
const agents: Agent[] = [];

beforeAll(async () => {
  paid = await startPaidEnvironment(5);
  seller = await startOriginSeller(paid, payTo);
}, 120_000);
afterAll(async () => {
  for (const agent of agents) await agent.close();
  await seller?.close();
  await paid?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The agent side of payer `i` with its own store, as `tollbooth fetch` builds it. */
const agentFor = (i: number, env: Record<string, string> = {}) => agentOfPayer(paid, i, env, { agents, dirs });

/** An agent whose wallet holds no token at all: every payment it signs is refused by the seller. */
async function unfundedAgent(): Promise<Agent> {
  const dataDir = agentDataDir();
  dirs.push(dataDir);
  const config = loadAgentConfig({
    DATA_DIR: dataDir,
    NETWORKS_JSON: paid.env.NETWORKS_JSON!,
    WALLET_EVM_PRIVATE_KEY: generatePrivateKey(),
    BUDGET_NETWORKS: LOCAL_NETWORK,
  });
  const agent = await createAgent(config, silentLogger, openStore);
  agents.push(agent);
  return agent;
}

/** Options whose approval answers `answer` and records each question asked. */
function answering(answer: Approval, asked: string[] = []): CallOptions {
  return {
    signal: new AbortController().signal,
    approve: async (question) => {
      asked.push(question);
      return answer;
    },
  };
}
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

describe('the pay-to address pinned per origin at the first payment', () => {
  it('refuses a changed pay-to without signing when the user cannot be asked, then pays it once approved and keeps it', async () => {
    const agent = await agentFor(0);
    try {
      expect(await agent.caller.fetchUrl(quote('?p=1'), answering('unavailable'))).toMatchObject({ type: 'success' });
      expect(await agent.spends.payToPin(seller.url, LOCAL_NETWORK)).toBe(payTo);

      seller.set({ payTo: otherPayTo });
      const before = await state(agent, 0);
      const asked: string[] = [];
      const refusedCall = await agent.caller.fetchUrl(quote('?p=2'), answering('unavailable', asked));
      expect(refusedCall).toMatchObject({
        type: 'refused',
        error: { code: 'payment_not_approved', details: { rule: 'pay_to_changed', pinned: payTo, asked: otherPayTo } },
      });
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain(otherPayTo);
      expect(await state(agent, 0)).toEqual(before);
      expect(await paid.balance(otherPayTo)).toBe(0n);

      const declined = await agent.caller.fetchUrl(quote('?p=3'), answering('declined'));
      expect(declined).toMatchObject({ type: 'refused', error: { code: 'payment_not_approved' } });
      expect(await state(agent, 0)).toEqual(before);

      expect(await agent.caller.fetchUrl(quote('?p=4'), answering('accepted'))).toMatchObject({ type: 'success' });
      expect(await paid.balance(otherPayTo)).toBe(1000n);
      expect(await agent.spends.payToPin(seller.url, LOCAL_NETWORK)).toBe(otherPayTo);
      // The approved address is the pin now: the next payment needs no question.
      const later: string[] = [];
      expect(await agent.caller.fetchUrl(quote('?p=5'), answering('unavailable', later))).toMatchObject({
        type: 'success',
      });
      expect(later).toEqual([]);
    } finally {
      seller.set({ payTo });
    }
  });
});

describe('the pay-to pin of a payment that never went out', () => {
  it('is dropped when the user declines the payment, so the next pay-to is paid without a question about it', async () => {
    const agent = await agentFor(3, { BUDGET_ASK_ABOVE_USD: '0.0001' });
    try {
      const declined = await agent.caller.fetchUrl(quote('?n=1'), answering('declined'));
      expect(declined).toMatchObject({ type: 'refused', error: { code: 'payment_not_approved' } });
      expect(await agent.spends.payToPin(seller.url, LOCAL_NETWORK)).toBeUndefined();

      seller.set({ payTo: otherPayTo });
      const asked: string[] = [];
      expect(await agent.caller.fetchUrl(quote('?n=2'), answering('accepted', asked))).toMatchObject({
        type: 'success',
      });
      expect(asked).toHaveLength(1);
      expect(asked[0]).not.toContain('now asks to be paid at');
      expect(await agent.spends.payToPin(seller.url, LOCAL_NETWORK)).toBe(otherPayTo);
    } finally {
      seller.set({ payTo });
    }
  });

  it('is dropped when the seller refuses the signed payment (nothing settled), so it pins nothing', async () => {
    const agent = await unfundedAgent();
    const signedBefore = seller.signed();
    const outcome = await agent.caller.fetchUrl(quote('?u=1'), answering('accepted'));
    expect(outcome).toMatchObject({ type: 'refused', error: { code: 'payment_failed' } });
    expect(seller.signed()).toBe(signedBefore + 1);
    expect(await agent.spends.payToPin(seller.url, LOCAL_NETWORK)).toBeUndefined();
  });

  it('puts back the pin of a real payment when an approved change is then not paid, and still guards it', async () => {
    const agent = await agentFor(4, { BUDGET_ASK_ABOVE_USD: '0.0001' });
    try {
      expect(await agent.caller.fetchUrl(quote('?r=1'), answering('accepted'))).toMatchObject({ type: 'success' });
      expect(await agent.spends.payToPin(seller.url, LOCAL_NETWORK)).toBe(payTo);

      seller.set({ payTo: otherPayTo });
      const otherBefore = await paid.balance(otherPayTo);
      // The change of address is approved, the payment itself declined: nothing goes out to the new address.
      const questions: string[] = [];
      const changeOnly: CallOptions = {
        signal: new AbortController().signal,
        approve: async (question) => (questions.push(question) === 1 ? 'accepted' : 'declined'),
      };
      const declined = await agent.caller.fetchUrl(quote('?r=2'), changeOnly);
      expect(declined).toMatchObject({ type: 'refused', error: { code: 'payment_not_approved' } });
      expect(questions).toHaveLength(2);
      expect(await agent.spends.payToPin(seller.url, LOCAL_NETWORK)).toBe(payTo);

      const refusedCall = await agent.caller.fetchUrl(quote('?r=3'), answering('unavailable'));
      expect(refusedCall).toMatchObject({
        type: 'refused',
        error: { code: 'payment_not_approved', details: { rule: 'pay_to_changed', pinned: payTo, asked: otherPayTo } },
      });
      expect(await paid.balance(otherPayTo)).toBe(otherBefore);
    } finally {
      seller.set({ payTo });
    }
  });
});

describe('assets the agent cannot value in dollars', () => {
  it('are never paid: an asset outside the network table is refused without a signature or a spend', async () => {
    const agent = await agentFor(1);
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    seller.set({ asset: stranger });
    try {
      const before = await state(agent, 1);
      const outcome = await agent.caller.fetchUrl(quote('?a=1'), answering('accepted'));
      expect(outcome).toMatchObject({
        type: 'payment_required',
        hint: expect.stringMatching(/asset unknown to this client/),
      });
      expect(await state(agent, 1)).toEqual(before);
      const dry = await agent.caller.fetchUrl(quote('?a=1'), { ...answering('accepted'), dryRun: true });
      expect(dry).toMatchObject({ type: 'dry_run' });
      expect(JSON.stringify(dry)).toContain('unknown_asset');
    } finally {
      seller.set({ asset: paid.token });
    }
  });
});

describe('the ledger keeps each payment with its origin', () => {
  it('books origin and pay-to on the spend, and `tollbooth spending` shows the origin', async () => {
    const agent = await agentFor(2);
    expect(await agent.caller.fetchUrl(quote('?l=1'), answering('accepted'))).toMatchObject({ type: 'success' });
    const [spend] = await agent.spends.listSpends();
    expect(spend).toMatchObject({ origin: seller.url, payTo, resource: `${seller.url}/quote?l=1`, status: 'settled' });
    const report = await spendingReport(agent.spends, agent.budget.settings, { limit: 10, json: false });
    expect(report.entries).toMatchObject([{ origin: seller.url, state: 'settled' }]);
    expect(formatSpending(report)).toContain(`at ${seller.url}`);
  });
});
