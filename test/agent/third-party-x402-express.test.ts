import { rmSync } from 'node:fs';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SpendingReport } from '../../src/agent/spending.js';
import { runCli, type CliRun } from '../support/agent.js';
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

// A seller built with Coinbase's legacy `x402-express` 1.2.0 (x402 version 1: the challenge in the 402's JSON body,
// the payment in X-PAYMENT), in its own process from the side project test/third-party/ (x402-express-v1-seller.mjs),
// settled by the official facilitator's version 1 `exact` scheme on `base-sepolia`: the local chain, chain id 84532.

const PRICE = 1000n;
let paid: PaidEnvironment;
let facilitator: HttpFacilitator;
let seller: ThirdPartySeller;
let proxy: AnswerProxy;
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const dirs: string[] = [];

const agentEnv = (i: number) => thirdPartyPayerEnv(paid, i, dirs);

/** The agent's own account of its payments (`tollbooth spending --json`). */
async function spending(env: Record<string, string>): Promise<SpendingReport> {
  const run = await runCli(['spending', '--json'], env);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as SpendingReport;
}

/** The JSON `tollbooth fetch` printed on stderr after `label: `. */
function noted(run: CliRun, label: string): unknown {
  const line = run.stderr.split('\n').find((l) => l.startsWith(`${label}: `));
  return line === undefined ? undefined : JSON.parse(line.slice(label.length + 2));
}

/** Where the payer, the seller and the facilitator stand, to compare before and after. */
async function standing(i: number) {
  return {
    payer: await paid.balance(paid.payers[i]!.address),
    payTo: await paid.balance(payTo),
    runs: await seller.runs(),
    verify: facilitator.calls.verify,
    settle: facilitator.calls.settle,
  };
}

describeWithThirdParty(
  ['x402-express'],
  'tollbooth fetch pays a seller built with the legacy x402-express 1.2.0 (x402 v1)',
  () => {
    beforeAll(async () => {
      paid = await startPaidEnvironment(4);
      facilitator = await serveFacilitator(officialFacilitator(paid));
      seller = await startThirdPartySeller('x402-express-v1-seller.mjs', {
        PAY_TO: payTo,
        PRICE: '$0.001',
        FACILITATOR_URL: facilitator.url,
      });
      proxy = await startAnswerProxy(seller.url);
    }, 120_000);
    afterAll(async () => {
      await proxy?.close();
      await seller?.close();
      await facilitator?.close();
      await paid?.stop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    it('pays the 402 body’s version 1 challenge with X-PAYMENT: body on stdout, one settled spend of the price, the budget down by exactly $0.001', async () => {
      const env = agentEnv(0);
      const before = await standing(0);
      const run = await runCli(['fetch', `${seller.url}/quote`], env);
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ quote: 'legacy knowledge' });
      expect(noted(run, 'payment')).toMatchObject({ status: 'settled', protocol: 'x402', amount: '1000' });
      const after = await standing(0);
      expect(after.payer).toBe(before.payer - PRICE);
      expect(after.payTo).toBe(before.payTo + PRICE);
      expect(after.runs).toBe(before.runs + 1);
      expect(after.settle).toBe(before.settle + 1);
      const report = await spending(env);
      expect(report.today).toMatchObject({ spent: '$0.001', remaining: '$0.999' });
      expect(report.entries).toMatchObject([
        { tool: 'fetch', origin: seller.url, state: 'settled', usd: '$0.001', network: LOCAL_NETWORK, amount: '1000' },
      ]);
    });

    it('when the answer to the payment is lost, re-sends the same payment instead of paying again: one transfer, one settled spend', async () => {
      const env = agentEnv(1);
      const before = await standing(1);
      proxy.arm({ type: 'cut' });
      const lost = await runCli(['fetch', `${proxy.url}/quote`], env);
      expect(proxy.applied()).toBe(1);
      // The seller ran and settled once; the re-sent X-PAYMENT was refused by the facilitator (nonce already used).
      expect(lost.code, lost.stderr).toBe(1);
      expect(lost.stderr).toContain('re-sending the same payment');
      expect(noted(lost, 'error')).toMatchObject({ error: { code: 'payment_failed' } });
      expect(noted(lost, 'payment')).toMatchObject({ status: 'settled', amount: '1000', spentToday: '$0.001' });
      const after = await standing(1);
      expect(after.payer).toBe(before.payer - PRICE);
      expect(after.payTo).toBe(before.payTo + PRICE);
      expect(after).toMatchObject({ runs: before.runs + 1, verify: before.verify + 2, settle: before.settle + 1 });
      const report = await spending(env);
      expect(report.today.spent).toBe('$0.001');
      expect(report.entries.map((e) => [e.state, e.usd])).toEqual([['settled', '$0.001']]);
    });

    it('a price above the per-call cap is refused before signing: exit 3, nothing verified, settled or booked', async () => {
      const env = agentEnv(2);
      const before = await standing(2);
      const run = await runCli(['fetch', `${seller.url}/quote`, '--max-usd', '0.0005'], env);
      expect(run.code, run.stderr).toBe(3);
      expect(noted(run, 'error')).toMatchObject({ error: { code: 'budget_exceeded' } });
      expect(await standing(2)).toEqual(before);
      const report = await spending(env);
      expect(report.today.spent).toBe('$0.00');
      expect(report.entries).toEqual([]);
    });

    it('a seller that raised its price above the drift tolerance is refused before signing: exit 3, nothing verified, settled or booked', async () => {
      // The same origin (the proxy) answered first by the seller at $0.001, then by the same script restarted at $0.002.
      const dearer = await startThirdPartySeller('x402-express-v1-seller.mjs', {
        PAY_TO: payTo,
        PRICE: '$0.002',
        FACILITATOR_URL: facilitator.url,
      });
      try {
        const env = agentEnv(3);
        const first = await runCli(['fetch', `${proxy.url}/quote`], env);
        expect(first.code, first.stderr).toBe(0);
        proxy.switchTo(dearer.url);
        const before = { ...(await standing(3)), dearerRuns: await dearer.runs() };
        const run = await runCli(['fetch', `${proxy.url}/quote`], env);
        expect(run.code, run.stderr).toBe(3);
        expect(noted(run, 'error')).toMatchObject({
          error: { code: 'budget_exceeded', details: { rule: 'price_drift', expected: '$0.001', asked: '$0.002' } },
        });
        expect({ ...(await standing(3)), dearerRuns: await dearer.runs() }).toEqual(before);
        const report = await spending(env);
        expect(report.today.spent).toBe('$0.001');
        expect(report.entries.map((e) => [e.state, e.usd])).toEqual([['settled', '$0.001']]);
      } finally {
        proxy.switchTo(seller.url);
        await dearer.close();
      }
    });
  },
);
