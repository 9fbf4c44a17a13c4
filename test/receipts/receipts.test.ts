import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STELLAR_PUBNET } from '../../src/shared/networks.js';
import type { ReceiptsReport } from '../../src/receipts/receipts.js';
import { PostgresStore } from '../../src/store/dialects/postgres/store.js';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';
import type { ReceiptRecord, Store } from '../../src/store/store.js';
import { createTestSchema, describeWithPostgres, type TestSchema } from '../support/postgres.js';
import { at, BASE, claimOf, json, receipts, total, type ReceiptsStore } from '../support/receipts.js';

const UNKNOWN = 'eip155:999999';

/**
 * Eight payments: settled on Base (3 × 0.001 USDC over two tools, plus one 0.001 under the version-1 name `base`),
 * on Stellar (0.001 at 7 decimals) and on a network the table does not know; one failed, one pending.
 */
async function fill(store: Store): Promise<void> {
  const settle = async (key: string, tool: string, network: string, amount: string) => {
    await store.ledger.claimPayment(claimOf(key, tool, network, amount));
    const r: ReceiptRecord = {
      ...claimOf(key, tool, network, amount),
      transaction: `0xtx-${key}`,
      status: 'settled',
      transport: 'mcp',
      createdAt: at(),
    };
    await store.ledger.completePayment(r);
  };
  await settle('s1', 'annuity', BASE, '1000');
  await settle('s2', 'annuity', BASE, '1000');
  await settle('s3', 'geo-distance', BASE, '1000');
  await settle('v1', 'transfers-evm', 'base', '1000');
  await settle('s4', 'annuity', STELLAR_PUBNET, '10000');
  await settle('s5', 'annuity', UNKNOWN, '123');
  await store.ledger.recordReceipt({
    ...claimOf('f1', 'annuity', BASE, '1000'),
    transaction: '',
    status: 'failed',
    errorReason: 'insufficient_funds',
    createdAt: at(),
  });
  await store.ledger.claimPayment(claimOf('p1', 'geo-distance', BASE, '1000'));
  await store.ledger.markPaymentPending('p1', {
    transaction: '0xpending',
    payload: {},
    requirements: {},
    requestHash: 'h',
    output: { ok: true },
  });
}

function describeReceiptsCli(label: string, setUp: () => Promise<ReceiptsStore>) {
  describe(`tollbooth receipts on ${label}`, () => {
    let env: Record<string, string>;
    let tearDown: () => Promise<void>;
    /** The unfiltered JSON report, read once for the tests that only look at it. */
    let full: ReceiptsReport;
    beforeAll(async () => {
      const made = await setUp();
      env = made.env;
      tearDown = made.tearDown;
      const store = await made.open();
      await fill(store);
      await store.close();
      full = await json(env);
    });
    afterAll(async () => tearDown());

    it('lists settled, pending and failed payments, most recent first', async () => {
      const report = full;
      expect(report.count).toEqual({ shown: 8, total: 8 });
      expect(report.payments.map((p) => [p.status, p.tool, p.network])).toEqual([
        ['pending', 'geo-distance', BASE],
        ['failed', 'annuity', BASE],
        ['settled', 'annuity', UNKNOWN],
        ['settled', 'annuity', STELLAR_PUBNET],
        ['settled', 'transfers-evm', 'base'],
        ['settled', 'geo-distance', BASE],
        ['settled', 'annuity', BASE],
        ['settled', 'annuity', BASE],
      ]);
      expect(report.payments[0]).toMatchObject({ transaction: '0xpending', amount: '1000', units: '0.001' });
      expect(report.payments[1]).toMatchObject({ errorReason: 'insufficient_funds' });
    });

    it('totals each network in its own asset and decimals, never adding networks together', async () => {
      const { byNetwork } = full.totals;
      expect(byNetwork.map((t) => t.network).sort()).toEqual([BASE, UNKNOWN, STELLAR_PUBNET].sort());
      expect(total(byNetwork, BASE)).toMatchObject({
        decimals: 6,
        assetName: 'USD Coin',
        settled: { count: 4, amount: '4000', units: '0.004' },
        pending: { count: 1, amount: '1000', units: '0.001' },
        failed: { count: 1, amount: '1000', units: '0.001' },
      });
      expect(total(byNetwork, STELLAR_PUBNET)).toMatchObject({
        decimals: 7,
        settled: { count: 1, amount: '10000', units: '0.001' },
      });
      expect(total(byNetwork, UNKNOWN)).toMatchObject({
        decimals: null,
        settled: { count: 1, amount: '123', units: null },
      });
    });

    it('totals each tool per network, counting version-1 names under their network id', async () => {
      const { byTool } = full.totals;
      expect(total(byTool, BASE, 'annuity')).toMatchObject({
        settled: { count: 2, units: '0.002' },
        failed: { count: 1 },
        pending: { count: 0 },
      });
      expect(total(byTool, BASE, 'geo-distance')).toMatchObject({
        settled: { count: 1, units: '0.001' },
        pending: { count: 1 },
      });
      expect(total(byTool, STELLAR_PUBNET, 'annuity')).toMatchObject({ settled: { count: 1, units: '0.001' } });
      expect(total(byTool, BASE, 'transfers-evm')).toMatchObject({ settled: { count: 1, units: '0.001' } });
      expect(byTool).toHaveLength(5);
    });

    it('shows only the payments of one status with --status, totals included', async () => {
      const report = await json(env, '--status', 'pending');
      expect(report.payments.map((p) => p.transaction)).toEqual(['0xpending']);
      expect(report.totals.byNetwork).toHaveLength(1);
      expect(total(report.totals.byNetwork, BASE)?.settled.count).toBe(0);
    });

    it('shows the N most recent with --limit N but totals everything', async () => {
      const report = await json(env, '--limit', '2');
      expect(report.count).toEqual({ shown: 2, total: 8 });
      expect(report.payments.map((p) => p.status)).toEqual(['pending', 'failed']);
      expect(total(report.totals.byNetwork, BASE)?.settled.count).toBe(4);
    });

    it('prints a readable table with decimal amounts by default', async () => {
      const { code, stdout } = await receipts(env);
      expect(code).toBe(0);
      expect(stdout).toMatch(/^Store: (SQLite|PostgreSQL) /);
      expect(stdout).toContain('Payments: 8 most recent of 8');
      expect(stdout).toMatch(/eip155:8453\s+Base\s+USD Coin \(6 decimals\)\s+4: 0\.004\s+1: 0\.001\s+1: 0\.001/);
      expect(stdout).toMatch(/stellar:pubnet\s+Stellar\s+CCW67T…MI75 \(7 decimals\)\s+1: 0\.001/);
      expect(stdout).toMatch(
        /eip155:999999\s+unknown asset \(not in the network table: atomic units\)\s+1: 123 atomic/,
      );
    });
  });
}

describe('tollbooth receipts options', () => {
  it('refuses an unknown status with the usage line (exit 2)', async () => {
    const result = await receipts({ DATA_DIR: tmpdir() }, '--status', 'refunded');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--status must be settled, pending, in_doubt or failed');
    expect(result.stderr).toContain('Usage: tollbooth receipts');
  });

  it('refuses a limit that is not a positive whole number (exit 2)', async () => {
    const result = await receipts({ DATA_DIR: tmpdir() }, '--limit', '0');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--limit must be at least 1');
  });

  it('says which database it could not reach, without its password (exit 1)', async () => {
    const result = await receipts({ DATABASE_URL: 'postgres://ops:hunter2-secret@127.0.0.1:1/payments' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Could not open the PostgreSQL store at postgres://ops@127.0.0.1:1/payments');
    expect(result.stderr + result.stdout).not.toContain('hunter2-secret');
  });

  it('says where it looked when there is no store file, and creates none (exit 1)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollbooth-receipts-empty-'));
    try {
      const result = await receipts({ DATA_DIR: dir });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`No store at ${join(dir, 'tollbooth.db')}`);
      expect(existsSync(join(dir, 'tollbooth.db'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describeReceiptsCli('the SQLite file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollbooth-receipts-'));
  return {
    env: { DATA_DIR: dir },
    open: () => SqliteStore.open(join(dir, 'tollbooth.db')),
    tearDown: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describeWithPostgres('tollbooth receipts with DATABASE_URL', () => {
  describeReceiptsCli('PostgreSQL', async () => {
    const schema: TestSchema = await createTestSchema('tollbooth_receipts');
    return {
      env: { DATABASE_URL: schema.url },
      open: () => PostgresStore.open(schema.url),
      tearDown: () => schema.drop(),
    };
  });
});
