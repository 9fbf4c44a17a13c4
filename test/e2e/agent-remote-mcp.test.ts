import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_MAINNET } from '../../src/shared/networks.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { freeTools, paidTools as tools } from '../../tools/index.js';
import { agentDataDir, spawnAgent, type AgentProcess } from '../support/agent.js';
import { startBaseEnvironment, type BaseEnvironment } from '../support/chain/permit2-env.js';
import { startMppMcpSeller, type MppMcpSeller } from '../support/mpp-mcp-seller.js';
import { countingTools } from '../support/paid.js';
import { startTestServer, type TestServer } from '../support/server.js';

const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
const PRICE = 1000n;

let base: BaseEnvironment;
let server: TestServer;
let runs: Map<string, number>;
let mppOnly: MppMcpSeller;
let agent: AgentProcess;
const dataDir = agentDataDir();

beforeAll(async () => {
  base = await startBaseEnvironment(1);
  const counted = countingTools(tools as unknown as AnyToolDefinition[]);
  runs = counted.runs;
  server = await startTestServer(base.env, { tools: counted.tools });
  mppOnly = await startMppMcpSeller(base, '0.001');
  const key = base.chain.accounts.find((a) => a.address === base.payers[0]!.address)!.privateKey;
  // Two remotes, each under its prefix: Tollbooth (its /mcp found from the base URL) and mppx's MCP seller.
  agent = await spawnAgent(['--remote', `tb=${server.url}`, '--remote', `mpp=${mppOnly.url}`], {
    DATA_DIR: dataDir,
    NETWORKS_JSON: base.env.NETWORKS_JSON!,
    WALLET_EVM_PRIVATE_KEY: key,
    BUDGET_NETWORKS: BASE_MAINNET,
    BUDGET_MAX_USD_PER_DAY: '0.5',
  });
}, 120_000);
afterAll(async () => {
  await agent?.close();
  await mppOnly?.close();
  await server?.close();
  await base?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('remote mode over paid MCP servers: Tollbooth and a third-party mppx MCP seller, side by side', () => {
  it("lists each remote's tools/list under its prefix, then the agent's own tools", async () => {
    const { tools: listed } = await agent.client.listTools();
    const names = listed.map((t) => t.name);
    expect(names.slice(-6)).toEqual([
      'mpp_annuity',
      'wallet-status',
      'spending-history',
      'search_services',
      'check_price',
      'fetch_paid',
    ]);
    expect(names.slice(0, -6)).toEqual([...tools, ...freeTools].map((t) => `tb_${t.name}`));
    expect(listed.find((t) => t.name === 'tb_annuity')?._meta?.['x402/price']).toMatchObject({ usd: 0.001 });
  });

  it('pays each remote its price through its own MCP form (x402 in _meta, MPP after -32042) and books both exactly', async () => {
    const payer = base.payers[0]!.address;
    const before = {
      payer: await base.balance(payer),
      payTo: await base.balance(base.payTo),
      tb: runs.get('annuity') ?? 0,
      mpp: mppOnly.runs(),
    };
    const viaTollbooth = await agent.client.callTool({ name: 'tb_annuity', arguments: args });
    expect(viaTollbooth.isError, JSON.stringify(viaTollbooth)).toBeFalsy();
    expect(viaTollbooth.structuredContent).toMatchObject({ type: 'ordinary' });
    expect(viaTollbooth._meta?.['x402/payment-response']).toMatchObject({ success: true, network: BASE_MAINNET });
    const viaMpp = await agent.client.callTool({ name: 'mpp_annuity', arguments: args });
    expect(viaMpp.isError, JSON.stringify(viaMpp)).toBeFalsy();
    expect(viaMpp.structuredContent).toEqual(viaTollbooth.structuredContent);
    expect(viaMpp._meta?.['org.paymentauth/receipt']).toMatchObject({ method: 'evm', status: 'success' });
    expect(await base.balance(payer)).toBe(before.payer - 2n * PRICE);
    expect(await base.balance(base.payTo)).toBe(before.payTo + 2n * PRICE);
    expect(runs.get('annuity')).toBe(before.tb + 1);
    expect(mppOnly.runs()).toBe(before.mpp + 1);
    const history = (await agent.client.callTool({ name: 'spending-history', arguments: {} })).structuredContent as {
      payments: Array<Record<string, unknown>>;
      budget: Record<string, unknown>;
    };
    expect(
      history.payments
        .map((p) => [p.tool, p.protocol ?? 'x402', p.amount, p.status])
        .sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    ).toEqual([
      ['mpp_annuity', 'mpp', '1000', 'settled'],
      ['tb_annuity', 'x402', '1000', 'settled'],
    ]);
    expect(history.budget).toMatchObject({ spentToday: '$0.002', remainingToday: '$0.498' });
  });
});
