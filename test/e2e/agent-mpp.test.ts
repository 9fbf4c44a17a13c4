import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_MAINNET } from '../../src/shared/networks.js';
import { agentDataDir, errorOf, runCli, spawnAgent, type CliRun } from '../support/agent.js';
import { startBaseEnvironment, type BaseEnvironment } from '../support/chain/permit2-env.js';
import { startMppSeller, type MppSeller } from '../support/mpp-seller.js';

const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
const PRICE = 1000n;

let base: BaseEnvironment;
let mppOnly: MppSeller;
let both: MppSeller;
let discovered: MppSeller;
const dirs: string[] = [];

beforeAll(async () => {
  base = await startBaseEnvironment(9);
  mppOnly = await startMppSeller(base, { price: '0.001' });
  both = await startMppSeller(base, { price: '0.001', alsoX402: true });
  discovered = await startMppSeller(base, { price: '0.001', discovery: 'openapi' });
}, 120_000);
afterAll(async () => {
  await mppOnly?.close();
  await both?.close();
  await discovered?.close();
  await base?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The agent's environment for payer `i`: its key, the local Base chain's table entry, its own store. */
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

const call = (seller: MppSeller, env: Record<string, string>, flags: string[] = []) =>
  runCli(['call', 'annuity', '--input', JSON.stringify(args), '--remote', seller.url, ...flags], env);

/** The JSON printed on stderr after `label: `. */
function stderrJson(run: CliRun, label: string): Record<string, unknown> {
  const line = run.stderr.split('\n').find((l) => l.startsWith(`${label}: `));
  if (!line) throw new Error(`no "${label}:" line on stderr:\n${run.stderr}`);
  return JSON.parse(line.slice(label.length + 2)) as Record<string, unknown>;
}

describe('tollbooth call pays a server that speaks only MPP', () => {
  it('signs an evm/charge credential, gets the result and the Payment-Receipt, and the balance drops by exactly the price', async () => {
    const payer = base.payers[0]!.address;
    const before = { balance: await base.balance(payer), payee: await base.balance(base.payTo), runs: mppOnly.runs() };
    const run = await call(mppOnly, agentEnv(0));
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ type: 'ordinary', presentValue: expect.any(Number) });
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
      usd: '$0.001',
      spentToday: '$0.001',
      remainingToday: '$0.999',
    });
    expect(await base.balance(payer)).toBe(before.balance - PRICE);
    expect(await base.balance(base.payTo)).toBe(before.payee + PRICE);
    expect(mppOnly.runs()).toBe(before.runs + 1);
  });

  it("counts MPP payments in the same daily budget: the second call over the day's limit is refused before signing", async () => {
    const env = agentEnv(1, { BUDGET_MAX_USD_PER_DAY: '0.0015' });
    const payer = base.payers[1]!.address;
    const first = await call(mppOnly, env);
    expect(first.code, first.stderr).toBe(0);
    const attempts = mppOnly.paidAttempts();
    const balance = await base.balance(payer);
    const second = await call(mppOnly, env);
    expect(second.code).toBe(3);
    expect(stderrJson(second, 'error')).toMatchObject({ error: { code: 'budget_exceeded' } });
    expect(mppOnly.paidAttempts()).toBe(attempts);
    expect(await base.balance(payer)).toBe(balance);
  });

  it('refuses a price above BUDGET_ASK_ABOVE_USD without --yes before signing, and pays it with --yes', async () => {
    const env = agentEnv(2, { BUDGET_ASK_ABOVE_USD: '0.0005' });
    const payer = base.payers[2]!.address;
    const before = { balance: await base.balance(payer), attempts: mppOnly.paidAttempts() };
    const refused = await call(mppOnly, env);
    expect(refused.code).toBe(3);
    expect(stderrJson(refused, 'error')).toMatchObject({ error: { code: 'payment_not_approved' } });
    expect(mppOnly.paidAttempts()).toBe(before.attempts);
    expect(await base.balance(payer)).toBe(before.balance);
    const approved = await call(mppOnly, env, ['--yes']);
    expect(approved.code, approved.stderr).toBe(0);
    expect(await base.balance(payer)).toBe(before.balance - PRICE);
  });

  it('refuses when BUDGET_NETWORKS leaves out the chain the MPP challenge names, and pays nothing', async () => {
    const payer = base.payers[3]!.address;
    const before = { balance: await base.balance(payer), attempts: mppOnly.paidAttempts() };
    const run = await call(mppOnly, agentEnv(3, { BUDGET_NETWORKS: 'eip155:137' }));
    expect(run.code).toBe(3);
    const error = stderrJson(run, 'error') as { error: { code: string; message: string } };
    expect(error.error.code).toBe('budget_exceeded');
    expect(error.error.message).toContain('MPP evm/charge on eip155:8453');
    expect(mppOnly.paidAttempts()).toBe(before.attempts);
    expect(await base.balance(payer)).toBe(before.balance);
  });

  it('--dry-run shows the MPP challenge and the option it would pay, and pays nothing', async () => {
    const run = await call(mppOnly, agentEnv(3), ['--dry-run', '--full']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as {
      chosen: Record<string, unknown>;
      mpp: Array<Record<string, unknown>>;
      verdict: string;
    };
    expect(report.chosen).toMatchObject({
      protocol: 'mpp',
      scheme: 'evm/charge',
      network: BASE_MAINNET,
      amount: '1000',
      usd: '$0.001',
    });
    expect(report.mpp[0]).toMatchObject({ method: 'evm', intent: 'charge' });
    expect(report.verdict).toBe(`would pay $0.001 with MPP evm/charge on ${BASE_MAINNET}`);
  });
});

describe('a server offering both x402 and MPP', () => {
  it('is paid with x402 by default', async () => {
    const payer = base.payers[4]!.address;
    const before = { balance: await base.balance(payer), x402: both.settled.x402, mpp: both.settled.mpp };
    const run = await call(both, agentEnv(4));
    expect(run.code, run.stderr).toBe(0);
    expect(stderrJson(run, 'payment')).toMatchObject({ status: 'settled', protocol: 'x402', amount: '1000' });
    expect(both.settled).toEqual({ x402: before.x402 + 1, mpp: before.mpp });
    expect(await base.balance(payer)).toBe(before.balance - PRICE);
  });

  it('is paid with MPP when PAYMENT_PROTOCOLS puts mpp first', async () => {
    const payer = base.payers[5]!.address;
    const before = { balance: await base.balance(payer), x402: both.settled.x402, mpp: both.settled.mpp };
    const run = await call(both, agentEnv(5, { PAYMENT_PROTOCOLS: 'mpp,x402' }));
    expect(run.code, run.stderr).toBe(0);
    expect(stderrJson(run, 'payment')).toMatchObject({ status: 'settled', protocol: 'mpp', amount: '1000' });
    expect(both.settled).toEqual({ x402: before.x402, mpp: before.mpp + 1 });
    expect(await base.balance(payer)).toBe(before.balance - PRICE);
  });
});

describe('tollbooth stdio --remote pays an MPP-only server over HTTP', () => {
  it('returns the result with the MPP receipt in _meta, records the protocol in spending-history, and moves exactly the price', async () => {
    const payer = base.payers[6]!.address;
    const before = await base.balance(payer);
    const agent = await spawnAgent(['--remote', mppOnly.url], agentEnv(6));
    try {
      const result = await agent.client.callTool({ name: 'annuity', arguments: args });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ type: 'ordinary' });
      const meta = result._meta as Record<string, Record<string, unknown>>;
      expect(meta['org.paymentauth/receipt']).toMatchObject({
        method: 'evm',
        status: 'success',
        reference: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      });
      expect(meta['tollbooth/payment']).toMatchObject({
        status: 'settled',
        protocol: 'mpp',
        usd: '$0.001',
        spentToday: '$0.001',
      });
      const history = (await agent.client.callTool({ name: 'spending-history', arguments: {} })).structuredContent as {
        payments: Array<Record<string, unknown>>;
      };
      expect(history.payments[0]).toMatchObject({
        tool: 'annuity',
        protocol: 'mpp',
        status: 'settled',
        payer,
        transaction: meta['org.paymentauth/receipt']!.reference,
      });
      expect(await base.balance(payer)).toBe(before - PRICE);
    } finally {
      await agent.close();
    }
  });

  it('refuses above the approval threshold when the user declines, before anything is signed', async () => {
    const payer = base.payers[7]!.address;
    const before = { balance: await base.balance(payer), attempts: mppOnly.paidAttempts() };
    const agent = await spawnAgent(['--remote', mppOnly.url], agentEnv(7, { BUDGET_ASK_ABOVE_USD: '0.0005' }), () => ({
      action: 'decline',
    }));
    try {
      const result = await agent.client.callTool({ name: 'annuity', arguments: args });
      expect(result.isError).toBe(true);
      expect(errorOf(result).code).toBe('payment_not_approved');
      expect(agent.asked[0]).toContain('with MPP');
      expect(mppOnly.paidAttempts()).toBe(before.attempts);
      expect(await base.balance(payer)).toBe(before.balance);
    } finally {
      await agent.close();
    }
  });
});

describe("tollbooth stdio --remote over an mppx seller publishing only mppx's own discovery (/openapi.json)", () => {
  it('lists its paid route with the request body schema as input and no dollar price, and pays it over MPP', async () => {
    const payer = base.payers[8]!.address;
    const before = { balance: await base.balance(payer), runs: discovered.runs() };
    const agent = await spawnAgent(['--remote', `mpp=${discovered.url}`], agentEnv(8));
    try {
      const { tools } = await agent.client.listTools();
      const tool = tools.find((t) => t.name === 'mpp_annuity');
      expect(tool?.inputSchema).toMatchObject({ type: 'object', properties: { payment: {}, periods: {} } });
      expect(tool?._meta).toBeUndefined();
      const result = await agent.client.callTool({ name: 'mpp_annuity', arguments: args });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ type: 'ordinary', presentValue: expect.any(Number) });
      expect((result._meta as Record<string, unknown>)['org.paymentauth/receipt']).toMatchObject({ status: 'success' });
      expect(await base.balance(payer)).toBe(before.balance - PRICE);
      expect(discovered.runs()).toBe(before.runs + 1);
      expect(discovered.settled.mpp).toBe(1);
    } finally {
      await agent.close();
    }
  });
});
