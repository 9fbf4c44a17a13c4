import { rmSync } from 'node:fs';
import { createPublicClient, createWalletClient } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { agentDataDir, errorOf, spawnAgent, type AgentProcess } from '../support/agent.js';
import { localTransport, localViemChain, testUsdcAbi } from '../support/chain/token.js';
import { startLookalikeFacilitator, type LookalikeFacilitator } from '../support/facilitator.js';
import { countingTools, LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { freePort } from '../support/nginx.js';
import { startTestServer, type TestServer } from '../support/server.js';

const args = { payment: 80, ratePerPeriod: 0.03, periods: 6 };
const PRICE = 1000n;

let paid: PaidEnvironment;
let facilitator: LookalikeFacilitator;
let server: TestServer;
let runs: Map<string, number>;
/** The annuity handler waits on this gate, so a test can act between verification and settlement. */
let gate: Promise<void> = Promise.resolve();
let entered: () => void = () => {};
const dirs: string[] = [];
const agents: AgentProcess[] = [];

const gatedAnnuity = {
  ...annuity,
  handler: async (input: Parameters<typeof annuity.handler>[0], ctx: Parameters<typeof annuity.handler>[1]) => {
    entered();
    await gate;
    return annuity.handler(input, ctx);
  },
} as AnyToolDefinition;

beforeAll(async () => {
  paid = await startPaidEnvironment(3);
  facilitator = await startLookalikeFacilitator({
    rpcUrl: paid.chain.rpcUrl,
    chainId: 84532,
    privateKey: paid.env.FACILITATOR_EVM_PRIVATE_KEY as `0x${string}`,
    network: LOCAL_NETWORK,
  });
  const counted = countingTools([gatedAnnuity]);
  runs = counted.runs;
  const { FACILITATOR_EVM_PRIVATE_KEY: _settledElsewhere, ...env } = paid.env;
  // The agent reaches the tools over HTTP through the catalog (/.well-known/x402), whose items name this base URL:
  // a settlement that failed comes back with its failed receipt there (over MCP it carries none).
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  server = await startTestServer(
    {
      ...env,
      BASE_URL_TOOLS: base,
      BASE_URL_TOKEN: base,
      BASE_URL_SMM: base,
      BASE_URL_TRANSFERS: base,
      FACILITATOR_URL: facilitator.url,
      FACILITATOR_EVM_ADDRESS: facilitator.address,
      FACILITATOR_SETTLE_TIMEOUT_MS: '1500',
    },
    { tools: counted.tools, port },
  );
}, 120_000);
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  await server?.close();
  await facilitator?.close();
  await paid?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function agentFor(i: number): Promise<AgentProcess> {
  const dataDir = agentDataDir();
  dirs.push(dataDir);
  const key = paid.chain.accounts.find((a) => a.address === paid.payers[i]!.address)!.privateKey;
  const agent = await spawnAgent(['--remote', `${server.url}/.well-known/x402`], {
    DATA_DIR: dataDir,
    NETWORKS_JSON: paid.env.NETWORKS_JSON!,
    WALLET_EVM_PRIVATE_KEY: key,
    BUDGET_NETWORKS: LOCAL_NETWORK,
  });
  agents.push(agent);
  return agent;
}

/** Moves the payer's whole balance away with its own key (so the pending authorization can no longer be settled). */
async function drain(i: number, to: `0x${string}`): Promise<bigint> {
  const account = paid.payers[i]!;
  const amount = await paid.balance(account.address);
  const wallet = createWalletClient({
    account,
    chain: localViemChain(paid.chain),
    transport: localTransport(paid.chain),
  });
  const hash = await wallet.writeContract({
    address: paid.token,
    abi: testUsdcAbi,
    functionName: 'transfer',
    args: [to, amount],
  });
  await createPublicClient({ transport: localTransport(paid.chain) }).waitForTransactionReceipt({
    hash,
    pollingInterval: 20,
  });
  return amount;
}

const history = async (agent: AgentProcess) =>
  (await agent.client.callTool({ name: 'spending-history', arguments: {} })).structuredContent as {
    payments: Array<Record<string, unknown>>;
    budget: Record<string, string>;
  };

describe('settlements that fail or do not answer', () => {
  it('reports a settlement that failed after the tool ran, and never pays again on its own', async () => {
    const agent = await agentFor(0);
    const elsewhere = privateKeyToAccount(generatePrivateKey()).address;
    const before = {
      payTo: await paid.balance(paid.payTo),
      settles: facilitator.calls.settle,
      runs: runs.get('annuity') ?? 0,
    };
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const running = new Promise<void>((resolve) => (entered = resolve));
    const call = agent.client.callTool({ name: 'annuity', arguments: args });
    await running;
    const drained = await drain(0, elsewhere);
    open();
    const result = await call;
    expect(errorOf(result)).toMatchObject({ code: 'payment_failed', retryable: false });
    expect(errorOf(result).message).toMatch(
      /^The remote ran annuity but could not settle the payment \(.+\); nothing was charged and the result was withheld\. Tollbooth does not pay again on its own/,
    );
    expect(result._meta?.['x402/payment-response']).toMatchObject({ success: false });
    expect(facilitator.calls.settle).toBe(before.settles + 1);
    expect(runs.get('annuity')).toBe(before.runs + 1);
    expect(await paid.balance(elsewhere)).toBe(drained);
    expect(await paid.balance(paid.payTo)).toBe(before.payTo);
    const { payments, budget } = await history(agent);
    expect(payments).toEqual([
      expect.objectContaining({
        tool: 'annuity',
        status: 'failed',
        note: expect.stringMatching(/^settlement failed: /),
      }),
    ]);
    expect(budget.spentToday).toBe('$0.00');
  });

  it('waits for a settlement the remote is still confirming and collects the result with the same payment', async () => {
    const agent = await agentFor(1);
    const payer = paid.payers[1]!.address;
    const before = {
      balance: await paid.balance(payer),
      settles: facilitator.calls.settle,
      runs: runs.get('annuity') ?? 0,
    };
    facilitator.setMode({ settle: 'work-then-hang' });
    try {
      const result = await agent.client.callTool({ name: 'annuity', arguments: { ...args, periods: 7 } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ type: 'ordinary' });
      expect(result._meta?.['x402/payment-response']).toMatchObject({ success: true, network: LOCAL_NETWORK });
    } finally {
      facilitator.setMode({ settle: 'ok' });
    }
    expect(facilitator.calls.settle).toBe(before.settles + 1);
    expect(runs.get('annuity')).toBe(before.runs + 1);
    expect(await paid.balance(payer)).toBe(before.balance - PRICE);
    expect((await history(agent)).payments).toEqual([expect.objectContaining({ status: 'settled' })]);
  }, 60_000);

  it('keeps a payment whose settlement got no answer pending with no transaction (settlement_outcome_unknown), and the same call later collects its result with that payment', async () => {
    const agent = await agentFor(2);
    const payer = paid.payers[2]!.address;
    const call = { name: 'annuity', arguments: { ...args, periods: 8 } };
    const before = { balance: await paid.balance(payer), runs: runs.get('annuity') ?? 0 };
    facilitator.setMode({ settle: 'hang' });
    try {
      const unknown = await agent.client.callTool(call);
      const error = errorOf(unknown) as { code: string; message: string; details?: Record<string, unknown> };
      expect(error).toMatchObject({ code: 'payment_pending', retryable: true, details: { network: LOCAL_NETWORK } });
      expect(error.message).toMatch(/knows no transaction/);
      expect(error.details?.transaction).toBeUndefined();
      const { payments } = await history(agent);
      expect(payments).toEqual([expect.objectContaining({ tool: 'annuity', status: 'pending' })]);
      expect(payments[0]!.transaction ?? '').toBe('');
    } finally {
      facilitator.setMode({ settle: 'ok' });
    }
    const collected = await agent.client.callTool(call);
    expect(collected.isError).toBeFalsy();
    expect(collected._meta?.['x402/payment-response']).toMatchObject({ success: true, network: LOCAL_NETWORK });
    expect(runs.get('annuity')).toBe(before.runs + 1);
    expect(await paid.balance(payer)).toBe(before.balance - PRICE);
    expect((await history(agent)).payments).toEqual([expect.objectContaining({ status: 'settled' })]);
  }, 90_000);
});
