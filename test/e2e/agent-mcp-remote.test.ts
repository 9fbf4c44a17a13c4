import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_MAINNET } from '../../src/shared/networks.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { paidTools as tools } from '../../tools/index.js';
import { agentDataDir, runCli, spawnAgent, type CliRun } from '../support/agent.js';
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
const dirs: string[] = [];

beforeAll(async () => {
  base = await startBaseEnvironment(5);
  const counted = countingTools(tools as unknown as AnyToolDefinition[]);
  runs = counted.runs;
  server = await startTestServer(base.env, { tools: counted.tools });
  mppOnly = await startMppMcpSeller(base, '0.001');
}, 120_000);
afterAll(async () => {
  await mppOnly?.close();
  await server?.close();
  await base?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function agentEnv(i: number, extra: Record<string, string> = {}): Record<string, string> {
  const dir = agentDataDir();
  dirs.push(dir);
  const key = base.chain.accounts.find((a) => a.address === base.payers[i]!.address)!.privateKey;
  return {
    DATA_DIR: dir,
    NETWORKS_JSON: base.env.NETWORKS_JSON!,
    WALLET_EVM_PRIVATE_KEY: key,
    BUDGET_NETWORKS: BASE_MAINNET,
    ...extra,
  };
}

function stderrJson(run: CliRun, label: string): Record<string, unknown> {
  const line = run.stderr.split('\n').find((l) => l.startsWith(`${label}: `));
  if (!line) throw new Error(`no "${label}:" line on stderr:\n${run.stderr}`);
  return JSON.parse(line.slice(label.length + 2)) as Record<string, unknown>;
}

const call = (env: Record<string, string>) =>
  runCli(['call', 'annuity', '--input', JSON.stringify(args), '--remote', `${server.url}/mcp`], env);

describe('paying a remote MCP endpoint (--remote <base>/mcp)', () => {
  it('pays x402 in _meta["x402/payment"] by default', async () => {
    const payer = base.payers[0]!.address;
    const before = { balance: await base.balance(payer), runs: runs.get('annuity') ?? 0 };
    const run = await call(agentEnv(0));
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ type: 'ordinary' });
    expect(stderrJson(run, 'payment')).toMatchObject({
      status: 'settled',
      protocol: 'x402',
      network: BASE_MAINNET,
      amount: '1000',
    });
    expect(await base.balance(payer)).toBe(before.balance - PRICE);
    expect(runs.get('annuity')).toBe(before.runs + 1);
  });

  it('pays with an MPP credential in _meta["org.paymentauth/credential"] when only MPP is allowed', async () => {
    const payer = base.payers[1]!.address;
    const before = { balance: await base.balance(payer), runs: runs.get('annuity') ?? 0 };
    const run = await call(agentEnv(1, { PAYMENT_PROTOCOLS: 'mpp' }));
    expect(run.code, run.stderr).toBe(0);
    expect(stderrJson(run, 'receipt')).toMatchObject({
      method: 'evm',
      status: 'success',
      reference: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect(stderrJson(run, 'payment')).toMatchObject({
      status: 'settled',
      protocol: 'mpp',
      network: BASE_MAINNET,
      amount: '1000',
    });
    expect(await base.balance(payer)).toBe(before.balance - PRICE);
    expect(runs.get('annuity')).toBe(before.runs + 1);
  });

  it('tollbooth stdio --remote <base>/mcp pays the same way and returns the MPP receipt in _meta', async () => {
    const payer = base.payers[2]!.address;
    const before = await base.balance(payer);
    const agent = await spawnAgent(['--remote', `${server.url}/mcp`], agentEnv(2, { PAYMENT_PROTOCOLS: 'mpp' }));
    try {
      const result = await agent.client.callTool({ name: 'annuity', arguments: args });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      const meta = result._meta as Record<string, Record<string, unknown>>;
      expect(meta['org.paymentauth/receipt']).toMatchObject({ method: 'evm', status: 'success' });
      expect(meta['tollbooth/payment']).toMatchObject({ status: 'settled', protocol: 'mpp' });
      expect(await base.balance(payer)).toBe(before - PRICE);
    } finally {
      await agent.close();
    }
  });
});

describe("paying an MCP server that offers only MPP (mppx's MCP transport)", () => {
  it('answers the -32042 challenge with _meta["org.paymentauth/credential"] under the default protocols, and moves exactly the price', async () => {
    const payer = base.payers[3]!.address;
    const before = { balance: await base.balance(payer), payee: await base.balance(base.payTo), runs: mppOnly.runs() };
    const run = await runCli(
      ['call', 'annuity', '--input', JSON.stringify(args), '--remote', mppOnly.url],
      agentEnv(3),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ type: 'ordinary' });
    expect(stderrJson(run, 'receipt')).toMatchObject({
      method: 'evm',
      status: 'success',
      reference: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect(stderrJson(run, 'payment')).toMatchObject({
      status: 'settled',
      protocol: 'mpp',
      network: BASE_MAINNET,
      amount: '1000',
      spentToday: '$0.001',
    });
    expect(await base.balance(payer)).toBe(before.balance - PRICE);
    expect(await base.balance(base.payTo)).toBe(before.payee + PRICE);
    expect(mppOnly.runs()).toBe(before.runs + 1);
  });

  it('refuses above the approval threshold without --yes, before any credential is sent', async () => {
    const payer = base.payers[4]!.address;
    const before = { balance: await base.balance(payer), credentials: mppOnly.credentials() };
    const run = await runCli(
      ['call', 'annuity', '--input', JSON.stringify(args), '--remote', mppOnly.url],
      agentEnv(4, { BUDGET_ASK_ABOVE_USD: '0.0005' }),
    );
    expect(run.code).toBe(3);
    expect(stderrJson(run, 'error')).toMatchObject({ error: { code: 'payment_not_approved' } });
    expect(mppOnly.credentials()).toBe(before.credentials);
    expect(await base.balance(payer)).toBe(before.balance);
  });
});
