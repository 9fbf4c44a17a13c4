import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import { targetOf } from '../../src/agent/mcp.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { agentOfStellarPayer } from '../support/agent-of-payer.js';
import { startStellarEnvironment, type StellarEnvironment } from '../support/chain/stellar.js';
import { startHookedProxy, type HookedProxy } from '../support/hooked-proxy.js';
import { countingTools } from '../support/paid.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** The annuity's Stellar price: 0.001 USDC in 7-decimal units. */
const PRICE = 10_000n;

let stellar: StellarEnvironment;
let server: TestServer;
let proxy: CuttingProxy;
let runs: Map<string, number>;
const dirs: string[] = [];
const agents: Agent[] = [];

beforeAll(async () => {
  stellar = await startStellarEnvironment({ payers: 2 });
  const counted = countingTools([annuity] as AnyToolDefinition[]);
  runs = counted.runs;
  server = await startTestServer(stellar.env, { tools: counted.tools });
  proxy = await startCuttingProxy(server.url);
}, 120_000);
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await proxy?.close();
  await server?.close();
  await stellar?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * An HTTP proxy in front of the server that, while armed, forwards the next paid request (one carrying
 * PAYMENT-SIGNATURE), reads the whole answer (the tool ran and the payment settled) and then drops the connection.
 */
interface CuttingProxy extends HookedProxy {
  armed: number;
  cuts: number;
}

async function startCuttingProxy(target: string): Promise<CuttingProxy> {
  const cutting = { armed: 0, cuts: 0 } as CuttingProxy;
  const hooked = await startHookedProxy(target, {
    after: ({ req }) => {
      if (cutting.armed === 0 || !req.headers['payment-signature']) return false;
      cutting.armed--;
      cutting.cuts++;
      req.socket.destroy();
      return true;
    },
  });
  return Object.assign(cutting, hooked);
}

/** The agent of payer `i`, in process: the same composition `tollbooth call` runs, with its own store. */
const agentOf = (i: number, env: Record<string, string> = {}) =>
  agentOfStellarPayer(stellar, i, { REMOTE_URL: proxy.url, ...env }, { agents, dirs });

const call = (agent: Agent, input: Record<string, number>) =>
  agent.caller.call(targetOf(annuity), input, {
    signal: new AbortController().signal,
    approve: async () => 'unavailable',
  });
const ran = () => runs.get('annuity') ?? 0;
const payTo = () => stellar.balance(stellar.payTo.publicKey());

describe('the agent pays Tollbooth on Stellar with its own exact payer', () => {
  it('pays the Stellar option: the facilitator settles it on the ledger, balances and both ledgers agree', async () => {
    const agent = await agentOf(0);
    const payer = stellar.payers[0]!.publicKey();
    const before = { payer: stellar.balance(payer), payTo: payTo(), runs: ran() };
    const outcome = await call(agent, { payment: 100, ratePerPeriod: 0.05, periods: 10 });
    expect(outcome.type).toBe('success');
    if (outcome.type !== 'success') return;
    expect((outcome.output as { presentValue: number }).presentValue).toBeCloseTo(772.1734929, 5);
    expect(outcome.receipt).toMatchObject({ success: true, network: stellar.network, payer });
    const transaction = outcome.receipt!.transaction;
    expect(stellar.rpc.included).toContain(transaction);
    expect(stellar.balance(payer)).toBe(before.payer - PRICE);
    expect(payTo()).toBe(before.payTo + PRICE);
    expect(ran()).toBe(before.runs + 1);
    expect(outcome.payment).toMatchObject({
      status: 'settled',
      network: stellar.network,
      asset: stellar.usdc.contract,
      amount: PRICE.toString(),
      usd: '$0.001',
    });
    expect(await agent.spends.listSpends()).toEqual([
      expect.objectContaining({
        tool: 'annuity',
        status: 'settled',
        network: stellar.network,
        asset: stellar.usdc.contract,
        amount: PRICE.toString(),
        usdMicros: 1000,
        payer,
        transaction,
      }),
    ]);
    expect(await agent.budget.status()).toMatchObject({ spentMicros: 1000, remainingMicros: 1_000_000 - 1000 });
    const [stored] = await server.runtime.store.ledger.listReceipts({ limit: 1 });
    expect(stored).toMatchObject({ tool: 'annuity', status: 'settled', payer, transaction, amount: PRICE.toString() });
    expect(stellar.rpc.refusals).toEqual([]);
  });

  it('talks only to the network table’s RPC URL over plain http: the public Horizon is never asked', () => {
    expect(stellar.rpc.calls.get('horizon:/ledgers')).toBeUndefined();
    expect(stellar.rpc.calls.get('simulateTransaction')).toBeGreaterThanOrEqual(2);
  });

  it('refuses a payment the network would refuse (no funds) without signing anything: nothing counted, nothing run', async () => {
    stellar.usdc.balances.set(stellar.payers[1]!.publicKey(), 0n);
    const agent = await agentOf(1);
    const before = { payTo: payTo(), runs: ran(), sent: stellar.rpc.calls.get('sendTransaction') ?? 0 };
    const outcome = await call(agent, { payment: 100, ratePerPeriod: 0.05, periods: 12 });
    expect(outcome).toMatchObject({ type: 'refused', error: { code: 'payment_failed' } });
    if (outcome.type !== 'refused') return;
    expect(outcome.error.message).toMatch(/network refuses the transfer.*Error\(Contract, #10\).*nothing was paid/);
    expect(payTo()).toBe(before.payTo);
    expect(ran()).toBe(before.runs);
    expect(stellar.rpc.calls.get('sendTransaction') ?? 0).toBe(before.sent);
    expect(await agent.budget.status()).toMatchObject({ spentMicros: 0 });
    stellar.usdc.balances.set(stellar.payers[1]!.publicKey(), 100_000_000n);
  });
});

describe('never paying twice on Stellar when the answer is lost', () => {
  it('re-sends the same signed payment after the connection drops: the stored result comes back, USDC moved once', async () => {
    const agent = await agentOf(0);
    const payer = stellar.payers[0]!.publicKey();
    const before = { payer: stellar.balance(payer), payTo: payTo(), runs: ran(), cuts: proxy.cuts };
    proxy.armed = 1;
    const outcome = await call(agent, { payment: 90, ratePerPeriod: 0.04, periods: 8 });
    expect(proxy.cuts).toBe(before.cuts + 1);
    expect(outcome).toMatchObject({ type: 'success', receipt: { success: true, network: stellar.network, payer } });
    expect(stellar.balance(payer)).toBe(before.payer - PRICE);
    expect(payTo()).toBe(before.payTo + PRICE);
    expect(ran()).toBe(before.runs + 1);
    expect((await agent.spends.listSpends()).map((s) => s.status)).toEqual(['settled']);
  });
});
