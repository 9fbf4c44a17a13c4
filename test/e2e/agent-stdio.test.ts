import { rmSync } from 'node:fs';
import { createKeyPairSignerFromBytes, type KeyPairSigner } from '@solana/kit';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { freeTools, paidTools as tools } from '../../tools/index.js';
import { agentDataDir, errorOf, spawnAgent, type AgentProcess } from '../support/agent.js';
import { startAlgorandEnvironment, type AlgorandEnvironment } from '../support/chain/algorand.js';
import { newSolanaKeypairBytes, startSolanaEnvironment, type SolanaEnvironment } from '../support/chain/solana-env.js';
import { countingTools, LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { PANEL_KEY, startSmmPanelLookalike, type SmmPanelLookalike } from '../support/upstreams/smm-panel.js';

const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
const SOURCE = 'pragma solidity ^0.8.0;\ncontract A { function f() public { selfdestruct(payable(msg.sender)); } }\n';
/** Prices of the tools used, in USDC units (6 decimals). */
const PRICE = { annuity: 1000n, solidityScan: 10_000n } as const;

let evm: PaidEnvironment;
let sol: SolanaEnvironment;
let algo: AlgorandEnvironment;
let server: TestServer;
let panel: SmmPanelLookalike;
let runs: Map<string, number>;
let solanaPayer: KeyPairSigner;
let solanaSecret: Uint8Array;
const dirs: string[] = [];
const agents: AgentProcess[] = [];

beforeAll(async () => {
  [evm, sol, algo, panel] = await Promise.all([
    startPaidEnvironment(7),
    startSolanaEnvironment(1),
    startAlgorandEnvironment(1),
    startSmmPanelLookalike(),
  ]);
  solanaSecret = newSolanaKeypairBytes();
  solanaPayer = await createKeyPairSignerFromBytes(solanaSecret);
  await sol.ledger.fund(solanaPayer.address, sol.mint, 10_000_000n);
  const counted = countingTools(tools as unknown as AnyToolDefinition[]);
  runs = counted.runs;
  server = await startTestServer(serverEnv(), { tools: counted.tools });
}, 180_000);
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  await server?.close();
  await Promise.all([evm?.stop(), sol?.stop(), algo?.stop(), panel?.stop()]);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Every network entry of the three local chains, as both the server and the agents are configured. */
function networksJson(): string {
  const entries = [evm, sol, algo].flatMap(
    (e) => (JSON.parse(e.env.NETWORKS_JSON!) as { networks: unknown[] }).networks,
  );
  return JSON.stringify({ networks: entries });
}

function serverEnv(): Record<string, string> {
  return {
    ...evm.env,
    ...sol.env,
    ...algo.env,
    NETWORKS_JSON: networksJson(),
    SMM_PANEL_URL: `${panel.url}/api/v2`,
    SMM_PANEL_KEY: PANEL_KEY,
  };
}

const evmKey = (i: number) => evm.chain.accounts.find((a) => a.address === evm.payers[i]!.address)!.privateKey;

/** Starts an agent paying from EVM payer `i` on the local chain only, with the given budget; a new store unless `dataDir` is given. */
async function evmAgent(
  i: number,
  budget: Record<string, string> = {},
  options: { dataDir?: string; elicit?: Parameters<typeof spawnAgent>[2] } = {},
): Promise<AgentProcess> {
  const dataDir = options.dataDir ?? agentDataDir();
  if (!options.dataDir) dirs.push(dataDir);
  const agent = await spawnAgent(
    ['--remote', server.url],
    {
      DATA_DIR: dataDir,
      NETWORKS_JSON: networksJson(),
      WALLET_EVM_PRIVATE_KEY: evmKey(i),
      BUDGET_NETWORKS: LOCAL_NETWORK,
      ...budget,
    },
    options.elicit,
  );
  agents.push(agent);
  return agent;
}

const annuity = (agent: AgentProcess, extra: Partial<typeof args> = {}) =>
  agent.client.callTool({ name: 'annuity', arguments: { ...args, ...extra } });
const runCount = (tool: string) => runs.get(tool) ?? 0;

describe("remote mode over stdio: the same tools, paid from the agent's wallet", () => {
  it("lists the registry's tools from the same definitions, then the agent's wallet-status and spending-history", async () => {
    const agent = await evmAgent(0);
    const { tools: listed } = await agent.client.listTools();
    expect(listed.map((t) => t.name)).toEqual(
      [...tools, ...freeTools]
        .map((t) => t.name)
        .concat(['wallet-status', 'spending-history', 'search_services', 'check_price', 'fetch_paid']),
    );
    expect(listed.find((t) => t.name === 'annuity')?._meta?.['x402/price']).toMatchObject({ usd: 0.001 });
  });

  it('pays a call on the local EVM chain: the result comes back with its receipt, and the balance drops by exactly the price', async () => {
    const agent = await evmAgent(1);
    const payer = evm.payers[1]!.address;
    const before = { payer: await evm.balance(payer), payTo: await evm.balance(evm.payTo), runs: runCount('annuity') };
    const result = await annuity(agent);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ type: 'ordinary', presentValue: expect.any(Number) });
    const receipt = result._meta?.['x402/payment-response'] as {
      success: boolean;
      transaction: string;
      network: string;
      payer: string;
    };
    expect(receipt).toMatchObject({ success: true, network: LOCAL_NETWORK, payer });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(result._meta?.['tollbooth/payment']).toMatchObject({
      status: 'settled',
      network: LOCAL_NETWORK,
      amount: '1000',
      usd: '$0.001',
      spentToday: '$0.001',
    });
    expect(await evm.balance(payer)).toBe(before.payer - PRICE.annuity);
    expect(await evm.balance(evm.payTo)).toBe(before.payTo + PRICE.annuity);
    expect(runCount('annuity')).toBe(before.runs + 1);
  });

  it("answers wallet-status and spending-history locally: address, balance, today's spend and the receipt", async () => {
    const agent = await evmAgent(2, { BUDGET_MAX_USD_PER_DAY: '0.5' });
    const paidCall = await agent.client.callTool({
      name: 'geo-distance',
      arguments: { from: { lat: 0, lng: 0 }, to: { lat: 0, lng: 1 } },
    });
    const tx = (paidCall._meta?.['x402/payment-response'] as { transaction: string }).transaction;
    const status = (await agent.client.callTool({ name: 'wallet-status', arguments: {} })).structuredContent as Record<
      string,
      unknown
    >;
    expect(status.wallets).toEqual([{ family: 'evm', address: evm.payers[2]!.address, canPay: true }]);
    const balance = (status.balances as Array<Record<string, unknown>>).find((b) => b.network === LOCAL_NETWORK);
    expect(balance).toMatchObject({ ok: true, amount: String(await evm.balance(evm.payers[2]!.address)), decimals: 6 });
    expect(status.budget).toMatchObject({
      spentToday: '$0.001',
      remainingToday: '$0.499',
      maxPerDay: '$0.50',
      networks: [LOCAL_NETWORK],
    });
    const history = (await agent.client.callTool({ name: 'spending-history', arguments: { limit: 5 } }))
      .structuredContent as { payments: Array<Record<string, unknown>> };
    expect(history.payments).toEqual([
      expect.objectContaining({
        tool: 'geo-distance',
        network: LOCAL_NETWORK,
        amount: '1000',
        usd: '$0.001',
        status: 'settled',
        transaction: tx,
        payer: evm.payers[2]!.address,
      }),
    ]);
  });

  it('pays with a Solana wallet on the in-process ledger, and with an Algorand wallet on the look-alike algod', async () => {
    const dataDir = agentDataDir();
    dirs.push(dataDir);
    const solAgent = await spawnAgent(['--remote', server.url], {
      DATA_DIR: dataDir,
      NETWORKS_JSON: networksJson(),
      WALLET_SOLANA_SECRET_KEY: JSON.stringify([...solanaSecret]),
      BUDGET_NETWORKS: sol.network.id,
    });
    agents.push(solAgent);
    const before = { sol: await sol.balance(solanaPayer.address), algo: algo.balance(algo.payers[0]!.addr.toString()) };
    const viaSolana = await annuity(solAgent);
    expect(viaSolana.isError).toBeFalsy();
    expect(viaSolana._meta?.['x402/payment-response']).toMatchObject({ success: true, network: sol.network.id });
    expect(await sol.balance(solanaPayer.address)).toBe(before.sol - PRICE.annuity);

    const algoAgent = await spawnAgent(['--remote', server.url], {
      DATA_DIR: dataDir,
      NETWORKS_JSON: networksJson(),
      WALLET_ALGORAND_MNEMONIC: algosdk.secretKeyToMnemonic(algo.payers[0]!.sk),
      BUDGET_NETWORKS: 'algorand:*',
    });
    agents.push(algoAgent);
    const viaAlgorand = await annuity(algoAgent, { periods: 11 });
    expect(viaAlgorand.isError).toBeFalsy();
    expect(viaAlgorand._meta?.['x402/payment-response']).toMatchObject({ success: true, network: algo.network });
    expect(algo.balance(algo.payers[0]!.addr.toString())).toBe(before.algo - PRICE.annuity);
  });

  it('calls the free helpers on the remote without paying, path parameters and errors included', async () => {
    const agent = await evmAgent(0);
    const before = await evm.balance(evm.payers[0]!.address);
    const quote = await agent.client.callTool({ name: 'smm-quote', arguments: { serviceId: 1, quantity: 1000 } });
    expect(quote.isError).toBeFalsy();
    expect(quote.structuredContent).toEqual(
      await (await fetch(`${server.url}/v1/smm-quote?serviceId=1&quantity=1000`)).json(),
    );
    const missing = await agent.client.callTool({ name: 'smm-order-status', arguments: { orderId: '999999' } });
    expect(errorOf(missing)).toMatchObject({ code: 'not_found', field: 'orderId' });
    expect(await evm.balance(evm.payers[0]!.address)).toBe(before);
    expect(
      (
        (await agent.client.callTool({ name: 'spending-history', arguments: {} })).structuredContent as {
          payments: unknown[];
        }
      ).payments,
    ).toEqual([]);
  });

  it('without a wallet, answers with the payment requirements and one line on how to configure a wallet', async () => {
    const dataDir = agentDataDir();
    dirs.push(dataDir);
    const agent = await spawnAgent(['--remote', server.url], { DATA_DIR: dataDir, NETWORKS_JSON: networksJson() });
    agents.push(agent);
    const result = await annuity(agent);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      x402Version: 2,
      accepts: expect.arrayContaining([expect.objectContaining({ network: LOCAL_NETWORK })]),
    });
    expect((result.content as Array<{ text: string }>)[1]?.text).toMatch(
      /^No wallet is configured, so nothing was paid: .*WALLET_EVM_PRIVATE_KEY/,
    );
  });
});

describe('the budget', () => {
  it('refuses a call over the per-call limit without paying, and says what the limits are', async () => {
    const agent = await evmAgent(3, { BUDGET_MAX_USD_PER_CALL: '0.005' });
    const payer = evm.payers[3]!.address;
    const before = { balance: await evm.balance(payer), runs: runCount('solidity-scan') };
    const refused = await agent.client.callTool({ name: 'solidity-scan', arguments: { source: SOURCE } });
    expect(refused.isError).toBe(true);
    expect(errorOf(refused)).toMatchObject({ code: 'budget_exceeded', retryable: false });
    expect(errorOf(refused).message).toMatch(
      /costs at least \$0\.01, over the user's per-call limit of \$0\.005; nothing was paid\. limits: \$0\.005 per call/,
    );
    expect(await evm.balance(payer)).toBe(before.balance);
    expect(runCount('solidity-scan')).toBe(before.runs);
    expect((await annuity(agent)).isError).toBeFalsy();
    expect(await evm.balance(payer)).toBe(before.balance - PRICE.annuity);
  });

  it('keeps the daily limit across a restart of the agent (spending is in its store)', async () => {
    const dataDir = agentDataDir();
    dirs.push(dataDir);
    const payer = evm.payers[4]!.address;
    const before = await evm.balance(payer);
    const first = await evmAgent(4, { BUDGET_MAX_USD_PER_DAY: '0.002' }, { dataDir });
    expect((await annuity(first, { periods: 1 })).isError).toBeFalsy();
    expect((await annuity(first, { periods: 2 })).isError).toBeFalsy();
    await first.close();
    const second = await evmAgent(4, { BUDGET_MAX_USD_PER_DAY: '0.002' }, { dataDir });
    const refused = await annuity(second, { periods: 3 });
    expect(errorOf(refused).code).toBe('budget_exceeded');
    expect(errorOf(refused).message).toMatch(
      /only \$0\.00 of today's \$0\.002 budget is left \(\$0\.002 spent or being paid/,
    );
    expect(await evm.balance(payer)).toBe(before - 2n * PRICE.annuity);
  });

  it('pays only the affordable 3 of 10 concurrent calls that together exceed the daily limit', async () => {
    const agent = await evmAgent(5, { BUDGET_MAX_USD_PER_DAY: '0.0035' });
    const payer = evm.payers[5]!.address;
    const before = { balance: await evm.balance(payer), runs: runCount('annuity') };
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => annuity(agent, { periods: 20 + i })));
    const paid = results.filter((r) => !r.isError);
    expect(paid).toHaveLength(3);
    expect(results.filter((r) => r.isError).map((r) => errorOf(r).code)).toEqual(
      Array.from({ length: 7 }, () => 'budget_exceeded'),
    );
    expect(await evm.balance(payer)).toBe(before.balance - 3n * PRICE.annuity);
    expect(runCount('annuity')).toBe(before.runs + 3);
    const history = (await agent.client.callTool({ name: 'spending-history', arguments: {} })).structuredContent as {
      payments: unknown[];
      budget: Record<string, string>;
    };
    expect(history.payments).toHaveLength(3);
    expect(history.budget).toMatchObject({ spentToday: '$0.003', remainingToday: '$0.0005' });
  });

  it('asks the user above the threshold and pays once accepted', async () => {
    const agent = await evmAgent(
      6,
      { BUDGET_ASK_ABOVE_USD: '0.005' },
      { elicit: () => ({ action: 'accept', content: { approve: true } }) },
    );
    const payer = evm.payers[6]!.address;
    const before = await evm.balance(payer);
    const cheap = await annuity(agent);
    expect(cheap.isError).toBeFalsy();
    expect(agent.asked).toEqual([]);
    const result = await agent.client.callTool({ name: 'solidity-scan', arguments: { source: SOURCE } });
    expect(result.isError).toBeFalsy();
    expect(agent.asked).toHaveLength(1);
    expect(agent.asked[0]).toMatch(
      /^Pay \$0\.01 \(10000 units of 0x[0-9a-fA-F]{40} on eip155:84532\) for solidity-scan at http:\/\/127\.0\.0\.1:\d+\/mcp\?/, // tools/call of the remote's MCP endpoint
    );
    expect(await evm.balance(payer)).toBe(before - PRICE.annuity - PRICE.solidityScan);
  });

  it('pays nothing when the user declines, or when the client cannot be asked', async () => {
    const declining = await evmAgent(0, { BUDGET_ASK_ABOVE_USD: '0.005' }, { elicit: () => ({ action: 'decline' }) });
    const payer = evm.payers[0]!.address;
    const before = { balance: await evm.balance(payer), runs: runCount('solidity-scan') };
    const declined = await declining.client.callTool({ name: 'solidity-scan', arguments: { source: SOURCE } });
    expect(errorOf(declined)).toMatchObject({ code: 'payment_not_approved' });
    expect(errorOf(declined).message).toMatch(/was not made: the user declined it/);
    expect(declining.asked).toHaveLength(1);
    const mute = await evmAgent(0, { BUDGET_ASK_ABOVE_USD: '0.005' });
    const unasked = await mute.client.callTool({ name: 'solidity-scan', arguments: { source: SOURCE } });
    expect(errorOf(unasked)).toMatchObject({ code: 'payment_not_approved' });
    expect(errorOf(unasked).message).toMatch(/could not be asked \(the MCP client does not support elicitation/);
    expect(await evm.balance(payer)).toBe(before.balance);
    expect(runCount('solidity-scan')).toBe(before.runs);
    const history = (await declining.client.callTool({ name: 'spending-history', arguments: {} }))
      .structuredContent as { payments: unknown[]; budget: Record<string, string> };
    expect(history).toMatchObject({ payments: [], budget: { spentToday: '$0.00' } });
  });
});
