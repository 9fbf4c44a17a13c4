import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpendingReport } from '../../src/agent/spending.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/shared/log.js';
import { BASE_MAINNET } from '../../src/shared/networks.js';
import type { NewSpend } from '../../src/shared/spends.js';
import { openStore } from '../../src/store/open.js';
import { runCli } from '../support/agent.js';

// The agent's ledger is written through the store as remote mode writes it; the built CLI reads it back.

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-spending-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const today = new Date().toISOString().slice(0, 10);
const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

const spend = (id: string, tool: string, usdMicros: number): NewSpend => ({
  id,
  day: today,
  tool,
  resource: `https://tollbooth.example/api/${tool}`,
  requestHash: `hash-${id}`,
  network: BASE_MAINNET,
  asset: USDC,
  amount: String(usdMicros),
  usdMicros,
  protocol: 'x402',
});

beforeAll(async () => {
  const store = await openStore(loadConfig({ DATA_DIR: dir }), silentLogger);
  try {
    const { spends } = store;
    const limit = 1_000_000;
    await spends.claimSpend(spend('a', 'annuity', 1000), limit);
    await spends.completeSpend('a', { status: 'settled', transaction: '0xabc123' });
    await spends.claimSpend(spend('b', 'perp-klines', 2000), limit);
    await spends.completeSpend('b', { status: 'pending', note: 'settlement outcome unknown' });
    await spends.claimSpend(spend('c', 'annuity', 5000), limit);
    await spends.releaseSpend('c', 'the remote refused the input; nothing was charged');
  } finally {
    await store.close();
  }
});

const spending = (args: string[]) =>
  runCli(['spending', ...args], { DATA_DIR: dir, BUDGET_MAX_USD_PER_DAY: '0.5', LOG_LEVEL: 'warn' });

describe('tollbooth spending', () => {
  it("shows today's counted total against the daily budget and each payment with its state", async () => {
    const run = await spending(['--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as SpendingReport;
    // Settled and pending count; the released claim gave its amount back.
    expect(report.today).toMatchObject({ day: today, spent: '$0.003', maxPerDay: '$0.50', remaining: '$0.497' });
    expect(report.entries.map((e) => [e.tool, e.state, e.usd]).sort()).toEqual([
      ['annuity', 'released', '$0.005'],
      ['annuity', 'settled', '$0.001'],
      ['perp-klines', 'pending', '$0.002'],
    ]);
    expect(report.entries.find((e) => e.state === 'settled')?.transaction).toBe('0xabc123');
    expect(report.totals).toEqual({ counted: '$0.003', settled: '$0.001' });
  });

  it('filters by state, tool and time', async () => {
    const released = JSON.parse((await spending(['--json', '--state', 'released'])).stdout) as SpendingReport;
    expect(released.entries.map((e) => e.state)).toEqual(['released']);
    const annuity = JSON.parse((await spending(['--json', '--tool', 'annuity'])).stdout) as SpendingReport;
    expect(annuity.entries.every((e) => e.tool === 'annuity')).toBe(true);
    expect(annuity.count.total).toBe(2);
    const recent = JSON.parse((await spending(['--json', '--since', '1h'])).stdout) as SpendingReport;
    expect(recent.count.total).toBe(3);
    const future = JSON.parse((await spending(['--json', '--since', '2999-01-01'])).stdout) as SpendingReport;
    expect(future.entries).toEqual([]);
  });

  it('prints readable lines by default', async () => {
    const run = await spending([]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^Today \\(${today}, UTC\\): \\$0\\.003 spent of \\$0\\.50`));
    expect(run.stdout).toMatch(/ settled +annuity +\$0\.001 +x402 eip155:8453 +tx 0xabc123/);
    expect(run.stdout).toMatch(/ pending +perp-klines/);
    expect(run.stdout).toMatch(/3 of 3 payment\(s\) shown/);
  });

  it('refuses a wrong filter as a usage error', async () => {
    const run = await spending(['--state', 'lost']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--state must be reserved, settled, pending, failed, released/);
    expect((await spending(['--since', 'yesterdayish'])).code).toBe(2);
  });

  it('says where it looked when the agent has no store there', async () => {
    const run = await runCli(['spending'], { DATA_DIR: join(dir, 'nothing-here') });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/No store at .*nothing-here/);
  });
});
