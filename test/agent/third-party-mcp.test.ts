import { rmSync } from 'node:fs';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { errorOf, spawnAgent, type AgentProcess } from '../support/agent.js';
import { startAnswerProxy, type AnswerProxy } from '../support/answer-proxy.js';
import { serveFacilitator, type HttpFacilitator } from '../support/http-facilitator.js';
import { officialFacilitator } from '../support/official-seller.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import {
  describeWithThirdParty,
  startThirdPartySeller,
  thirdPartyPayerEnv,
  type ThirdPartySeller,
} from '../support/third-party.js';

// MCP servers that charge through packages nobody here wrote, each in its own process from test/third-party/, settled
// by the official facilitator (x402 v1 `exact` on `base-sepolia`, v2 `exact` on eip155:84532: the local chain, chain
// id 84532). The agent is `tollbooth stdio --remote <prefix>=<seller>/mcp`, as an MCP host runs it.
const SELLERS = [
  {
    // Vercel's x402-mcp 0.0.5: x402 v1 over MCP, the challenge in structuredContent, the payment as a base64 string in
    // `_meta["x402.payment"]`, the receipt in `_meta["x402.payment-response"]`.
    title: "Vercel's x402-mcp 0.0.5 (x402 v1 over MCP)",
    pkg: 'x402-mcp',
    script: 'x402-mcp-seller.mjs',
    env: { PRICE: '$0.001' } as Record<string, string>,
    raised: { PRICE: '$0.002' } as Record<string, string>,
    answer: { quote: 'mcp knowledge' },
  },
  {
    // Cloudflare's agents 0.32.0 (`withX402` from agents/x402): x402 v2 over MCP, the challenge only in
    // `_meta["x402/error"]` and the text, the payment as a base64 string in `_meta["x402/payment"]`.
    title: "Cloudflare's agents 0.32.0 x402 wrapper (x402 v2 over MCP)",
    pkg: 'agents',
    script: 'cloudflare-agents-seller.mjs',
    env: { PRICE_USD: '0.001' } as Record<string, string>,
    raised: { PRICE_USD: '0.002' } as Record<string, string>,
    answer: { quote: 'workers knowledge' },
  },
];

const PRICE = 1000n;
const TOOL = 'seller_get_quote';
let paid: PaidEnvironment;
let facilitator: HttpFacilitator;
const dirs: string[] = [];
const agents: AgentProcess[] = [];

/** `tollbooth stdio --remote seller=<base>/mcp` for payer `i`, with the seller's tools listed. */
async function agentOf(i: number, base: string, extra: Record<string, string> = {}): Promise<AgentProcess> {
  const env = { ...thirdPartyPayerEnv(paid, i, dirs), ...extra };
  const agent = await spawnAgent(['--remote', `seller=${base}/mcp`], env);
  agents.push(agent);
  expect((await agent.client.listTools()).tools.map((t) => t.name)).toContain(TOOL);
  return agent;
}

/** The agent's ledger and budget, from its own `spending-history` tool. */
async function history(agent: AgentProcess) {
  const result = await agent.client.callTool({ name: 'spending-history', arguments: {} });
  return result.structuredContent as { payments: Array<Record<string, unknown>>; budget: Record<string, unknown> };
}

for (const s of SELLERS) {
  describeWithThirdParty([s.pkg], `stdio --remote pays an MCP server built with ${s.title}`, () => {
    const payTo = privateKeyToAccount(generatePrivateKey()).address;
    let seller: ThirdPartySeller;
    let proxy: AnswerProxy;

    beforeAll(async () => {
      paid = await startPaidEnvironment(4);
      facilitator = await serveFacilitator(officialFacilitator(paid));
      seller = await startThirdPartySeller(s.script, { ...s.env, PAY_TO: payTo, FACILITATOR_URL: facilitator.url });
      proxy = await startAnswerProxy(seller.url);
    }, 120_000);
    afterAll(async () => {
      for (const agent of agents.splice(0)) await agent.close();
      await proxy?.close();
      await seller?.close();
      await facilitator?.close();
      await paid?.stop();
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    });

    /** Where payer `i`, the seller and the facilitator stand, to compare before and after. */
    const standing = async (i: number) => ({
      payer: await paid.balance(paid.payers[i]!.address),
      payTo: await paid.balance(payTo),
      runs: await seller.runs(),
      verify: facilitator.calls.verify,
      settle: facilitator.calls.settle,
    });
    it('pays the listed tool, answers with the seller’s output and receipt, and books one settled spend of the price', async () => {
      const agent = await agentOf(0, seller.url);
      const before = await standing(0);
      const result = await agent.client.callTool({ name: TOOL, arguments: {} });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(result.structuredContent).toMatchObject(s.answer);
      expect(result._meta?.['x402/payment-response']).toMatchObject({ success: true });
      const after = await standing(0);
      expect(after.payer).toBe(before.payer - PRICE);
      expect(after.payTo).toBe(before.payTo + PRICE);
      expect(after).toMatchObject({ runs: before.runs + 1, settle: before.settle + 1 });
      const { payments, budget } = await history(agent);
      expect(payments).toMatchObject([{ tool: TOOL, status: 'settled', network: LOCAL_NETWORK, amount: '1000' }]);
      expect(budget).toMatchObject({ spentToday: '$0.001', remainingToday: '$0.999' });
    });

    it('when the answer to the paid call is lost, re-sends the same payment instead of paying again: one transfer, one settled spend', async () => {
      const agent = await agentOf(1, proxy.url);
      const before = await standing(1);
      proxy.arm({ type: 'cut' });
      const lost = await agent.client.callTool({ name: TOOL, arguments: {} });
      expect(proxy.applied()).toBe(1);
      expect(errorOf(lost).code, JSON.stringify(lost)).toBe('payment_failed');
      expect(agent.stderr()).toContain('re-sending the same payment');
      const after = await standing(1);
      expect(after.payer).toBe(before.payer - PRICE);
      expect(after.payTo).toBe(before.payTo + PRICE);
      expect(after).toMatchObject({ runs: before.runs + 1, verify: before.verify + 2, settle: before.settle + 1 });
      const { payments, budget } = await history(agent);
      expect(payments.map((p) => [p.status, p.amount])).toEqual([['settled', '1000']]);
      expect(budget).toMatchObject({ spentToday: '$0.001' });
    });

    it('a price above the per-call cap is refused before signing: nothing verified, settled or booked', async () => {
      const agent = await agentOf(2, seller.url, { BUDGET_MAX_USD_PER_CALL: '0.0005' });
      const before = await standing(2);
      const refused = await agent.client.callTool({ name: TOOL, arguments: {} });
      expect(errorOf(refused).code, JSON.stringify(refused)).toBe('budget_exceeded');
      expect(await standing(2)).toEqual(before);
      const { payments, budget } = await history(agent);
      expect(payments).toEqual([]);
      expect(budget).toMatchObject({ spentToday: '$0.00' });
    });

    it('a seller that raised its price above the drift tolerance is refused before signing: nothing verified, settled or booked', async () => {
      // The same origin (the proxy) answered first by the seller at $0.001, then by the same script restarted at $0.002.
      const env = { ...s.raised, PAY_TO: payTo, FACILITATOR_URL: facilitator.url };
      const dearer = await startThirdPartySeller(s.script, env);
      try {
        const agent = await agentOf(3, proxy.url);
        const first = await agent.client.callTool({ name: TOOL, arguments: {} });
        expect(first.isError, JSON.stringify(first)).toBeFalsy();
        proxy.switchTo(dearer.url);
        const before = { ...(await standing(3)), dearerRuns: await dearer.runs() };
        const refused = await agent.client.callTool({ name: TOOL, arguments: {} });
        expect(errorOf(refused), JSON.stringify(refused)).toMatchObject({
          code: 'budget_exceeded',
          details: { rule: 'price_drift', expected: '$0.001', asked: '$0.002' },
        });
        expect({ ...(await standing(3)), dearerRuns: await dearer.runs() }).toEqual(before);
        const { payments, budget } = await history(agent);
        expect(payments.map((p) => [p.status, p.amount])).toEqual([['settled', '1000']]);
        expect(budget).toMatchObject({ spentToday: '$0.001' });
      } finally {
        proxy.switchTo(seller.url);
        await dearer.close();
      }
    });
  });
}
