import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodePaymentSignatureHeader, encodePaymentResponseHeader } from '@x402/core/http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callAgentTool } from '../../src/agent/agent-tools.js';
import type { Agent } from '../../src/agent/agent.js';
import type { CallOptions } from '../../src/agent/call.js';
import { fetchRequest } from '../../src/agent/cli-fetch.js';
import { formatSpending, spendingReport } from '../../src/agent/spending.js';
import { runCli, spawnAgent } from '../support/agent.js';
import { agentOfPayer } from '../support/agent-of-payer.js';
import { startOfficialSeller, type OfficialSeller } from '../support/official-seller.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { thirdPartyPayerEnv } from '../support/third-party.js';

// After a paid call its seller reported settled, the agent asks the local chain whether its EIP-3009 authorization
// was used: an official @x402/express seller really settles; a look-alike on 127.0.0.1 answers 200 with a made-up
// success receipt (PAYMENT-RESPONSE, success: true, a fake transaction) and never settles.

let paid: PaidEnvironment;
let honest: OfficialSeller;
/** The lying seller; `signatures` are the payments it was sent, kept so a test can settle one late. */
interface LyingSeller {
  url: string;
  signatures: string[];
  close(): Promise<void>;
}
let liar: LyingSeller;
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const dirs: string[] = [];
const agents: Agent[] = [];

/** A seller that passes on the official seller's real challenge, then claims every payment settled without settling it. */
async function startLyingSeller(challenger: string): Promise<LyingSeller> {
  const signatures: string[] = [];
  const server: Server = createServer((req, res) => {
    const signature = req.headers['payment-signature'];
    if (typeof signature !== 'string') {
      void fetch(`${challenger}${req.url}`).then(async (answer) => {
        res.writeHead(answer.status, Object.fromEntries(answer.headers));
        res.end(await answer.text());
      });
      return;
    }
    signatures.push(signature);
    const payment = decodePaymentSignatureHeader(signature);
    const from = (payment.payload as { authorization: { from: string } }).authorization.from;
    const receipt = encodePaymentResponseHeader({
      success: true,
      transaction: `0x${'ab'.repeat(32)}`,
      network: LOCAL_NETWORK as `${string}:${string}`,
      payer: from,
    });
    res.writeHead(200, { 'content-type': 'application/json', 'payment-response': receipt });
    res.end(JSON.stringify({ quote: 'made-up knowledge' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    signatures,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

beforeAll(async () => {
  paid = await startPaidEnvironment(7);
  honest = await startOfficialSeller(paid, payTo);
  liar = await startLyingSeller(honest.url);
}, 120_000);
afterAll(async () => {
  for (const agent of agents) await agent.close();
  await liar?.close();
  await honest?.close();
  await paid?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The network table without its RPC URL: nothing can be asked of the chain. */
function withoutRpc(): string {
  const table = JSON.parse(paid.env.NETWORKS_JSON!) as { networks: Record<string, unknown>[] };
  return JSON.stringify({ networks: table.networks.map(({ rpcUrl: _rpc, ...rest }) => rest) });
}

/** The agent side of payer `i` with its own store, as `tollbooth fetch` builds it. */
/** A receipt check that gives up after 0.35 s instead of 7 (AGENT_RECEIPT_CHECK_SECONDS): the chain here is local. */
const QUICK = { AGENT_RECEIPT_CHECK_SECONDS: '0.35' };
const agentFor = (i: number, env: Record<string, string> = {}) =>
  agentOfPayer(paid, i, { ...QUICK, ...env }, { agents, dirs });

const options: CallOptions = { signal: new AbortController().signal, approve: async () => 'accepted' };

/** Pays `GET <origin>/quote` and waits for the on-chain check of its receipt; returns the one spend. */
async function payQuote(agent: Agent, origin: string) {
  const outcome = await agent.caller.fetchUrl(
    fetchRequest({ url: `${origin}/quote`, method: 'GET', headers: {} }),
    options,
  );
  expect(outcome).toMatchObject({ type: 'success', receipt: { success: true } });
  await agent.receiptChecks.settled();
  const spends = await agent.spends.listSpends();
  expect(spends).toHaveLength(1);
  return spends[0]!;
}

describe('receipts of paid calls are checked on chain where the network has an RPC URL', () => {
  it('an honest seller that settled: the spend is marked confirmed and shown as such', async () => {
    const agent = await agentFor(0);
    const before = await paid.balance(paid.payers[0]!.address);
    const spend = await payQuote(agent, honest.url);
    expect(await paid.balance(paid.payers[0]!.address)).toBe(before - 1000n);
    expect(spend).toMatchObject({ status: 'settled', chainCheck: 'confirmed' });
    const report = await spendingReport(agent.spends, agent.settings.budget, { limit: 50, json: false });
    expect(report.entries[0]).toMatchObject({ state: 'settled', chainCheck: 'confirmed' });
    expect(report.entries[0]!.warning).toBeUndefined();
    expect(formatSpending(report)).toContain('(confirmed on chain)');
  });

  it('a seller that claims success without settling: the spend is flagged not_seen, stays counted, and the reports say so', async () => {
    const agent = await agentFor(1);
    const before = await paid.balance(paid.payers[1]!.address);
    const spend = await payQuote(agent, liar.url);
    expect(await paid.balance(paid.payers[1]!.address)).toBe(before);
    expect(spend).toMatchObject({ status: 'settled', chainCheck: 'not_seen', transaction: `0x${'ab'.repeat(32)}` });
    const report = await spendingReport(agent.spends, agent.settings.budget, { limit: 50, json: false });
    expect(report.today.spent).toBe('$0.001');
    expect(report.entries[0]).toMatchObject({ state: 'settled', chainCheck: 'not_seen', origin: liar.url });
    expect(report.entries[0]!.warning).toContain('the chain shows its authorization unused');
    const text = formatSpending(report);
    expect(text).toContain('NOT CONFIRMED ON CHAIN: The seller said this payment was settled');
    expect(text).toContain('It stays counted against the budget because the seller may still settle it');
    const history = await callAgentTool(agent, 'spending-history', {});
    expect(history.structuredContent).toMatchObject({
      payments: [{ status: 'settled', chainCheck: 'not_seen', warning: expect.stringContaining('unused') }],
    });
  });

  it('with no RPC URL for the network nothing is checked and nothing is flagged, even for the lying seller', async () => {
    const agent = await agentFor(2, { NETWORKS_JSON: withoutRpc() });
    const spend = await payQuote(agent, liar.url);
    expect(spend.status).toBe('settled');
    expect(spend.chainCheck).toBeUndefined();
    const report = await spendingReport(agent.spends, agent.settings.budget, { limit: 50, json: false });
    expect(report.entries[0]!.chainCheck).toBeUndefined();
    expect(formatSpending(report)).not.toContain('NOT CONFIRMED ON CHAIN');
  });

  it('AGENT_CHECK_RECEIPTS=off: the lying seller’s receipt is taken at its word, nothing flagged', async () => {
    const agent = await agentFor(3, { AGENT_CHECK_RECEIPTS: 'off' });
    const spend = await payQuote(agent, liar.url);
    expect(spend.status).toBe('settled');
    expect(spend.chainCheck).toBeUndefined();
  });

  it('tollbooth fetch waits for the check before exiting, and tollbooth spending flags the unconfirmed receipt', async () => {
    const env = { ...thirdPartyPayerEnv(paid, 4, dirs), ...QUICK };
    const run = await runCli(['fetch', `${liar.url}/quote`], env);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ quote: 'made-up knowledge' });
    const spending = await runCli(['spending'], env);
    expect(spending.code, spending.stderr).toBe(0);
    expect(spending.stdout).toContain('NOT CONFIRMED ON CHAIN: The seller said this payment was settled');
    expect(spending.stdout).toContain('$0.001 spent of $1.00');
  }, 60_000);
});

/** The seller settles late: the payment the liar kept is handed to the honest seller, which settles it on chain. */
async function settleLate(signature: string): Promise<void> {
  const answer = await fetch(`${honest.url}/quote`, { headers: { 'payment-signature': signature } });
  expect(answer.status).toBe(200);
}

describe('a receipt the chain did not show at first is checked again', () => {
  it('a settlement that lands after the check: not_seen, then confirmed by the re-check, counted once', async () => {
    const agent = await agentFor(5);
    const before = await paid.balance(paid.payers[5]!.address);
    const spend = await payQuote(agent, liar.url);
    expect(spend).toMatchObject({ status: 'settled', chainCheck: 'not_seen' });
    expect(await agent.receiptChecks.recheck()).toBe(0);
    expect((await agent.spends.listSpends())[0]!.chainCheck).toBe('not_seen');
    await settleLate(liar.signatures.at(-1)!);
    expect(await paid.balance(paid.payers[5]!.address)).toBe(before - 1000n);
    expect(await agent.receiptChecks.recheck()).toBe(1);
    expect(await agent.spends.listSpends()).toMatchObject([
      { id: spend.id, status: 'settled', chainCheck: 'confirmed' },
    ]);
    expect(await agent.spends.spendsToRecheck(20)).toEqual([]);
    const report = await spendingReport(agent.spends, agent.settings.budget, { limit: 50, json: false });
    expect(report.today.spent).toBe('$0.001');
    expect(report.entries[0]!.warning).toBeUndefined();
  });

  it('a confirmed receipt keeps no signed payment and is not asked about again', async () => {
    const agent = await agentFor(0);
    const spend = await payQuote(agent, honest.url);
    expect(spend.chainCheck).toBe('confirmed');
    expect(spend.payload).toBeUndefined();
    expect(await agent.spends.spendsToRecheck(20)).toEqual([]);
  });

  it('tollbooth spending re-checks before printing: a late settlement shows as confirmed on chain', async () => {
    const env = { ...thirdPartyPayerEnv(paid, 6, dirs), ...QUICK };
    const run = await runCli(['fetch', `${liar.url}/quote`], env);
    expect(run.code, run.stderr).toBe(0);
    const first = await runCli(['spending'], env);
    expect(first.stdout).toContain('NOT CONFIRMED ON CHAIN');
    await settleLate(liar.signatures.at(-1)!);
    const spending = await runCli(['spending'], env);
    expect(spending.code, spending.stderr).toBe(0);
    expect(spending.stdout).toContain('(confirmed on chain)');
    expect(spending.stdout).not.toContain('NOT CONFIRMED ON CHAIN');
    expect(spending.stdout).toContain('$0.001 spent of $1.00');
  }, 60_000);

  it('remote mode re-checks when it starts: the late settlement shows as confirmed in its spending-history', async () => {
    const env = { ...thirdPartyPayerEnv(paid, 3, dirs), ...QUICK };
    const run = await runCli(['fetch', `${liar.url}/quote`], env);
    expect(run.code, run.stderr).toBe(0);
    await settleLate(liar.signatures.at(-1)!);
    const agent = await spawnAgent(['--remote', honest.url], env);
    try {
      // The start's re-check runs in the background: its outcome is awaited by asking (a bounded number of times).
      let payments: Array<Record<string, unknown>> = [];
      for (let i = 0; i < 40 && payments[0]?.chainCheck !== 'confirmed'; i++) {
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, 250));
        const history = await agent.client.callTool({ name: 'spending-history', arguments: {} });
        payments = (history.structuredContent as { payments: Array<Record<string, unknown>> }).payments;
      }
      expect(payments).toMatchObject([{ status: 'settled', chainCheck: 'confirmed', origin: liar.url }]);
      expect(payments[0]!.warning).toBeUndefined();
    } finally {
      await agent.close();
    }
  }, 60_000);
});
