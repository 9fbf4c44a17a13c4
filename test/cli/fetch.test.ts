import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_MAINNET } from '../../src/shared/networks.js';
import { agentDataDir, runCli, type CliRun } from '../support/agent.js';
import { startAnswerProxy } from '../support/answer-proxy.js';
import { startBaseEnvironment, type BaseEnvironment } from '../support/chain/permit2-env.js';
import { startMppSeller, type MppSeller } from '../support/mpp-seller.js';

const input = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });
const PRICE = 1000n;

let base: BaseEnvironment;
let seller: MppSeller;
const dirs: string[] = [];

beforeAll(async () => {
  base = await startBaseEnvironment(4);
  seller = await startMppSeller(base, { price: '0.001' });
}, 120_000);
afterAll(async () => {
  await seller?.close();
  await base?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The environment of payer `i` with its own store (no REMOTE_URL: fetch needs none). */
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

/** The JSON printed on stderr after `label: `. */
function stderrJson(run: CliRun, label: string): Record<string, unknown> {
  const line = run.stderr.split('\n').find((l) => l.startsWith(`${label}: `));
  if (!line) throw new Error(`no "${label}:" line on stderr:\n${run.stderr}`);
  return JSON.parse(line.slice(label.length + 2)) as Record<string, unknown>;
}

describe('tollbooth fetch pays an MPP seller built with mppx', () => {
  it('POSTs the body with -X/-H/-d, pays the WWW-Authenticate: Payment challenge, writes the body to --output and the receipt to stderr', async () => {
    const payer = base.payers[0]!.address;
    const before = { balance: await base.balance(payer), runs: seller.runs() };
    const env = agentEnv(0);
    const out = join(env.DATA_DIR!, 'answer.json');
    const run = await runCli(
      [
        'fetch',
        `${seller.url}/api/annuity`,
        '-X',
        'POST',
        '-H',
        'Content-Type: application/json',
        '-d',
        input,
        '-o',
        out,
      ],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('');
    expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({ type: 'ordinary', presentValue: expect.any(Number) });
    expect(stderrJson(run, 'receipt')).toMatchObject({ method: 'evm', status: 'success' });
    expect(stderrJson(run, 'payment')).toMatchObject({ status: 'settled', protocol: 'mpp', amount: '1000' });
    expect(await base.balance(payer)).toBe(before.balance - PRICE);
    expect(seller.runs()).toBe(before.runs + 1);
  });

  it('--dry-run prints the price and the chosen option, exits 0 and pays nothing', async () => {
    const payer = base.payers[1]!.address;
    const before = { balance: await base.balance(payer), attempts: seller.paidAttempts() };
    const run = await runCli(['fetch', `${seller.url}/api/annuity`, '-d', input, '--dry-run'], agentEnv(1));
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      tool: 'fetch',
      url: `${seller.url}/api/annuity`,
      chosen: expect.stringMatching(/^mpp evm\/charge on eip155:8453: 1000 units of .*\(\$0\.001\)$/),
    });
    expect(await base.balance(payer)).toBe(before.balance);
    expect(seller.paidAttempts()).toBe(before.attempts);
  });

  it('tollbooth call <url> takes the same path; over the per-call cap it exits 3 without paying', async () => {
    const payer = base.payers[2]!.address;
    const before = { balance: await base.balance(payer), attempts: seller.paidAttempts() };
    const env = agentEnv(2);
    const capped = await runCli(['call', `${seller.url}/api/annuity`, '--input', input, '--max-usd', '0.0001'], env);
    expect(capped.code, capped.stderr).toBe(3);
    expect(stderrJson(capped, 'error')).toMatchObject({ error: { code: 'budget_exceeded' } });
    expect(seller.paidAttempts()).toBe(before.attempts);
    const run = await runCli(['call', `${seller.url}/api/annuity`, '--input', input], env);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ type: 'ordinary' });
    expect(await base.balance(payer)).toBe(before.balance - PRICE);
  });
});

describe('the price-drift guard against an mppx seller that raised its price', () => {
  it('a price more than AGENT_PRICE_DRIFT above the last one paid at the same origin is refused before signing: exit 3, nothing paid or booked', async () => {
    // One origin (a proxy) answered first by the seller at $0.001, then by one asking $0.002: the seller raised its price.
    const dearer = await startMppSeller(base, { price: '0.002' });
    const origin = await startAnswerProxy(seller.url);
    try {
      const payer = base.payers[3]!.address;
      const env = agentEnv(3);
      const post = ['fetch', `${origin.url}/api/annuity`, '-X', 'POST', '-H', 'Content-Type: application/json'];
      const first = await runCli([...post, '-d', input], env);
      expect(first.code, first.stderr).toBe(0);
      origin.switchTo(dearer.url);
      const balance = await base.balance(payer);
      const raised = await runCli([...post, '-d', input], env);
      expect(raised.code, raised.stderr).toBe(3);
      expect(stderrJson(raised, 'error')).toMatchObject({
        error: { code: 'budget_exceeded', details: { rule: 'price_drift', expected: '$0.001', asked: '$0.002' } },
      });
      expect(await base.balance(payer)).toBe(balance);
      expect(dearer.paidAttempts()).toBe(0);
      const spending = await runCli(['spending', '--json'], env);
      const report = JSON.parse(spending.stdout) as { today: { spent: string }; entries: { state: string }[] };
      expect(report.today.spent).toBe('$0.001');
      expect(report.entries.map((e) => e.state)).toEqual(['settled']);
    } finally {
      await origin.close();
      await dearer.close();
    }
  });
});
