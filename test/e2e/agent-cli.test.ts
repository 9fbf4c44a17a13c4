import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/shared/log.js';
import { BASE_MAINNET } from '../../src/shared/networks.js';
import { openStore } from '../../src/store/open.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { paidTools as tools } from '../../tools/index.js';
import { agentDataDir, runCli, type CliRun } from '../support/agent.js';
import { startBaseEnvironment, type BaseEnvironment } from '../support/chain/permit2-env.js';
import { countingTools } from '../support/paid.js';
import { startTestServer, type TestServer } from '../support/server.js';

const args = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
const PRICE = 1000n;

let base: BaseEnvironment;
let server: TestServer;
let runs: Map<string, number>;
const dirs: string[] = [];

beforeAll(async () => {
  base = await startBaseEnvironment(5);
  const counted = countingTools(tools as unknown as AnyToolDefinition[]);
  runs = counted.runs;
  server = await startTestServer(base.env, { tools: counted.tools });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await base?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The agent's environment for payer `i`: its key, the local Base chain, its own store (or `dataDir`). */
function agentEnv(i: number, extra: Record<string, string> = {}, dataDir?: string): Record<string, string> {
  const dir = dataDir ?? agentDataDir();
  if (!dataDir) dirs.push(dir);
  const key = base.chain.accounts.find((a) => a.address === base.payers[i]!.address)!.privateKey;
  return {
    DATA_DIR: dir,
    NETWORKS_JSON: base.env.NETWORKS_JSON!,
    WALLET_EVM_PRIVATE_KEY: key,
    BUDGET_NETWORKS: BASE_MAINNET,
    ...extra,
  };
}

const call = (tool: string, input: unknown, env: Record<string, string>, flags: string[] = []) =>
  runCli(['call', tool, '--input', JSON.stringify(input), '--remote', server.url, ...flags], env);

/** The JSON printed on stderr after `label: `. */
function stderrJson(run: CliRun, label: string): Record<string, unknown> {
  const line = run.stderr.split('\n').find((l) => l.startsWith(`${label}: `));
  if (!line) throw new Error(`no "${label}:" line on stderr:\n${run.stderr}`);
  return JSON.parse(line.slice(label.length + 2)) as Record<string, unknown>;
}

const runCount = (tool: string) => runs.get(tool) ?? 0;

describe('tollbooth call: one paid call for scripts', () => {
  it('prints the JSON result on stdout and the receipt on stderr, and the balance drops by exactly the price', async () => {
    const payer = base.payers[0]!.address;
    const before = { balance: await base.balance(payer), runs: runCount('annuity') };
    const run = await call('annuity', args, agentEnv(0));
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      type: 'ordinary',
      presentValue: expect.any(Number),
      futureValue: expect.any(Number),
    });
    expect(stderrJson(run, 'receipt')).toMatchObject({
      success: true,
      network: BASE_MAINNET,
      payer,
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect(stderrJson(run, 'payment')).toMatchObject({
      status: 'settled',
      network: BASE_MAINNET,
      amount: '1000',
      usd: '$0.001',
    });
    expect(await base.balance(payer)).toBe(before.balance - PRICE);
    expect(runCount('annuity')).toBe(before.runs + 1);
  });

  it('--dry-run prints a short summary by default: each option, the chosen one and its pay-to, the budget', async () => {
    const run = await call('annuity', args, agentEnv(1), ['--dry-run']);
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout) as { options: string[]; chosen: string; payTo: string; more: string };
    expect(summary.chosen).toMatch(
      new RegExp(`^x402 exact on ${BASE_MAINNET}: 1000 units of 0x[0-9a-fA-F]{40} \\(\\$0\\.001\\)$`),
    );
    expect(summary.payTo).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(summary.options.length).toBeGreaterThan(1);
    expect(summary.more).toMatch(/--full/);
    expect(run.stdout.split('\n').length).toBeLessThan(60);
    expect(run.stdout).not.toContain('extensions');
  });

  it('--dry-run --full shows the challenge and the option it would pick, and pays nothing', async () => {
    const payer = base.payers[1]!.address;
    const before = { balance: await base.balance(payer), runs: runCount('annuity') };
    const run = await call('annuity', args, agentEnv(1), ['--dry-run', '--full']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      chosen: Record<string, unknown>;
      options: Array<Record<string, unknown>>;
      verdict: string;
      challenge: { accepts: unknown[] };
      budget: Record<string, string>;
    };
    expect(report.chosen).toEqual({
      protocol: 'x402',
      scheme: 'exact',
      network: BASE_MAINNET,
      asset: expect.any(String),
      amount: '1000',
      usd: '$0.001',
    });
    expect(report.verdict).toBe(`would pay $0.001 with exact on ${BASE_MAINNET}`);
    // The x402 entries, then the MPP evm/charge challenges our server offers beside them (x402 is preferred).
    expect(report.challenge.accepts).toHaveLength(report.options.filter((o) => o.protocol === 'x402').length);
    expect(report.options.find((o) => o.protocol === 'x402' && o.network === 'eip155:137')).toMatchObject({
      usd: '$0.001',
      rejected: 'network_not_allowed',
    });
    expect(report.budget).toMatchObject({ spentToday: '$0.00', maxPerCall: '$0.10', maxPerDay: '$1.00' });
    expect(run.stderr).toMatch(/^dry run: would pay \$0\.001 with exact on eip155:8453$/m);
    expect(await base.balance(payer)).toBe(before.balance);
    expect(runCount('annuity')).toBe(before.runs);
  });

  it('pays a version-1 endpoint (transfers-evm, network base) with X-PAYMENT', async () => {
    const payer = base.payers[2]!.address;
    const before = await base.balance(payer);
    const run = await runCli(
      [
        'call',
        'transfers-evm',
        '--input',
        JSON.stringify({ address: payer, limit: 5 }),
        '--remote-transfers',
        server.url,
      ],
      agentEnv(2),
    );
    expect(run.code).toBe(0);
    const body = JSON.parse(run.stdout) as {
      address: string;
      chain: string;
      transfers: Array<Record<string, unknown>>;
    };
    expect(body).toMatchObject({ address: payer, chain: 'base' });
    expect(body.transfers.some((t) => t.to === payer && t.from === '0x0000000000000000000000000000000000000000')).toBe(
      true,
    );
    expect(stderrJson(run, 'receipt')).toMatchObject({ success: true, network: 'base' });
    expect(await base.balance(payer)).toBe(before - PRICE);
  });

  it('refuses over --max-usd, and over the daily budget kept in its store from one run to the next, exiting 3 without paying', async () => {
    const dataDir = agentDataDir();
    dirs.push(dataDir);
    const payer = base.payers[3]!.address;
    const before = await base.balance(payer);
    const env = agentEnv(3, { BUDGET_MAX_USD_PER_DAY: '0.001' }, dataDir);
    const capped = await call('annuity', args, env, ['--max-usd', '0.0005']);
    expect(capped.code).toBe(3);
    expect(stderrJson(capped, 'error')).toMatchObject({ error: { code: 'budget_exceeded' } });
    expect(await base.balance(payer)).toBe(before);
    expect((await call('annuity', args, env)).code).toBe(0);
    const overDay = await call('annuity', { ...args, periods: 11 }, env);
    expect(overDay.code).toBe(3);
    expect((stderrJson(overDay, 'error').error as { message: string }).message).toMatch(
      /only \$0\.00 of today's \$0\.001 budget is left/,
    );
    expect(await base.balance(payer)).toBe(before - PRICE);
  });

  it('answers usage errors with exit 2, and an invalid input naming the field before any payment', async () => {
    expect((await runCli(['call'], agentEnv(4))).code).toBe(2);
    const unknown = await runCli(['call', 'no-such-tool', '--remote', server.url], agentEnv(4));
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown tool "no-such-tool"/);
    const invalid = await call('annuity', { ...args, periods: 'ten' }, agentEnv(4));
    expect(invalid.code).toBe(3);
    expect(stderrJson(invalid, 'error')).toMatchObject({ error: { code: 'invalid_input', field: 'periods' } });
  });

  it('without a wallet pays nothing and prints a short summary of the options on stdout, not the whole challenge (exit 3)', async () => {
    const env = agentEnv(4);
    delete env.WALLET_EVM_PRIVATE_KEY;
    const run = await call('annuity', args, env);
    expect(run.code).toBe(3);
    const summary = JSON.parse(run.stdout) as { paid: boolean; reason: string; options: string[]; more: string };
    expect(summary).toMatchObject({
      paid: false,
      reason: expect.stringMatching(/No wallet is configured/),
      more: expect.stringMatching(/--dry-run/),
    });
    expect(summary.options.length).toBeGreaterThan(0);
    expect(summary.options[0]).toMatch(/^exact on eip155:\d+: \d+ units of 0x/);
    expect(run.stdout.split('\n').length).toBeLessThan(40);
    expect(run.stdout).not.toContain('extensions');
  });
});

describe('tollbooth call against a development server (placeholder pay-to addresses)', () => {
  it('signs nothing for a server advertising the shipped DEV_PAY_TO addresses: exit 3, and --dry-run says why', async () => {
    const dev = await startTestServer(); // a bare start: prices shown, every pay-to the development placeholder
    try {
      const dataDir = agentDataDir();
      dirs.push(dataDir);
      // The built-in network table (Base mainnet among it): what a user pointing the agent at a dev server has.
      const env = { DATA_DIR: dataDir, WALLET_EVM_PRIVATE_KEY: agentEnv(4).WALLET_EVM_PRIVATE_KEY! };
      const run = await runCli(['call', 'annuity', '--input', JSON.stringify(args), '--remote', dev.url], env);
      expect(run.code).toBe(3);
      expect(stderrJson(run, 'error')).toMatchObject({
        error: {
          code: 'placeholder_pay_to',
          message: expect.stringMatching(
            /development server with placeholder addresses; nobody controls them — not paying.*0x00000000000000000000000000000000DeaDBeef/,
          ),
        },
      });
      const dry = await runCli(
        ['call', 'annuity', '--input', JSON.stringify(args), '--remote', dev.url, '--dry-run', '--full'],
        env,
      );
      expect(dry.code).toBe(0);
      const report = JSON.parse(dry.stdout) as { verdict: string; options: Array<{ rejected?: string }> };
      expect(report.verdict).toMatch(/^would not pay: this seller is a development server with placeholder addresses/);
      expect(report.options.every((o) => o.rejected === 'placeholder_pay_to')).toBe(true);
      const store = await openStore(loadConfig({ DATA_DIR: dataDir }), silentLogger);
      try {
        expect(
          await store.spends.listSpends({ statuses: ['reserved', 'settled', 'pending', 'failed', 'cancelled'] }),
        ).toEqual([]);
      } finally {
        await store.close();
      }
    } finally {
      await dev.close();
    }
  }, 60_000);
});
