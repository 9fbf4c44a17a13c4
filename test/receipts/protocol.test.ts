import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STELLAR_PUBNET } from '../../src/shared/networks.js';
import { PostgresStore } from '../../src/store/dialects/postgres/store.js';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';
import type { PaymentClaim, PaymentProtocol, Store } from '../../src/store/store.js';
import { createTestSchema, describeWithPostgres, type TestSchema } from '../support/postgres.js';
import { at, BASE, claimOf, json, receipts, total, type ReceiptsStore } from '../support/receipts.js';

/**
 * Six payments through both protocols: MPP settled twice on Base (two tools), failed once and pending once; x402
 * settled once on Base and once on Stellar.
 */
async function fillBothProtocols(store: Store): Promise<void> {
  const claim = (
    key: string,
    tool: string,
    network: string,
    amount: string,
    protocol: PaymentProtocol,
  ): PaymentClaim => ({ ...claimOf(key, tool, network, amount), protocol });
  const settle = async (key: string, tool: string, network: string, amount: string, protocol: PaymentProtocol) => {
    await store.ledger.claimPayment(claim(key, tool, network, amount, protocol));
    await store.ledger.completePayment({
      ...claim(key, tool, network, amount, protocol),
      transaction: `0xtx-${key}`,
      status: 'settled',
      createdAt: at(),
    });
  };
  await settle('x1', 'annuity', BASE, '1000', 'x402');
  await settle('m1', 'annuity', BASE, '1000', 'mpp');
  await settle('m2', 'geo-distance', BASE, '1000', 'mpp');
  await settle('x2', 'annuity', STELLAR_PUBNET, '10000', 'x402');
  await store.ledger.recordReceipt({
    ...claim('mf', 'annuity', BASE, '1000', 'mpp'),
    transaction: '',
    status: 'failed',
    errorReason: 'insufficient_funds',
    createdAt: at(),
  });
  await store.ledger.claimPayment(claim('mp', 'geo-distance', BASE, '1000', 'mpp'));
  await store.ledger.markPaymentPending('mp', {
    transaction: '0xmpp-pending',
    payload: {},
    requirements: {},
    requestHash: 'h',
    output: { ok: true },
  });
}

function describeProtocolSplit(label: string, setUp: () => Promise<ReceiptsStore>) {
  describe(`tollbooth receipts split by protocol on ${label}`, () => {
    let env: Record<string, string>;
    let tearDown: () => Promise<void>;
    beforeAll(async () => {
      const made = await setUp();
      env = made.env;
      tearDown = made.tearDown;
      const store = await made.open();
      await fillBothProtocols(store);
      await store.close();
    });
    afterAll(async () => tearDown());

    it('lists each payment with the protocol it came in, x402 or mpp', async () => {
      const report = await json(env);
      expect(report.filter.protocol).toBeNull();
      expect(report.payments.map((p) => [p.transaction, p.status, p.protocol])).toEqual([
        ['0xmpp-pending', 'pending', 'mpp'],
        ['', 'failed', 'mpp'],
        ['0xtx-x2', 'settled', 'x402'],
        ['0xtx-m2', 'settled', 'mpp'],
        ['0xtx-m1', 'settled', 'mpp'],
        ['0xtx-x1', 'settled', 'x402'],
      ]);
    });

    it('totals each protocol per network, in the shape of the network totals', async () => {
      const { byProtocol, byNetwork } = (await json(env)).totals;
      expect(byProtocol.map((t) => [t.protocol, t.network])).toEqual([
        ['mpp', BASE],
        ['x402', BASE],
        ['x402', STELLAR_PUBNET],
      ]);
      expect(byProtocol[0]).toEqual({
        ...total(byNetwork, BASE),
        protocol: 'mpp',
        settled: { count: 2, amount: '2000', units: '0.002' },
        pending: { count: 1, amount: '1000', units: '0.001' },
        failed: { count: 1, amount: '1000', units: '0.001' },
      });
      expect(byProtocol[1]).toMatchObject({
        settled: { count: 1, units: '0.001' },
        pending: { count: 0 },
        failed: { count: 0 },
      });
      expect(byProtocol[2]).toMatchObject({ decimals: 7, settled: { count: 1, amount: '10000', units: '0.001' } });
      expect(byProtocol.every((t) => t.tool === undefined)).toBe(true);
    });

    it('shows only the payments of one protocol with --protocol, totals included, and combines with --status', async () => {
      const mpp = await json(env, '--protocol', 'mpp');
      expect(mpp.filter).toMatchObject({ protocol: 'mpp', status: null });
      expect(mpp.count).toEqual({ shown: 4, total: 4 });
      expect(mpp.payments.every((p) => p.protocol === 'mpp')).toBe(true);
      expect(mpp.totals.byProtocol.map((t) => t.protocol)).toEqual(['mpp']);
      expect(total(mpp.totals.byNetwork, BASE)).toMatchObject({
        settled: { count: 2 },
        pending: { count: 1 },
        failed: { count: 1 },
      });
      const x402 = await json(env, '--protocol', 'x402');
      expect(x402.payments.map((p) => p.transaction)).toEqual(['0xtx-x2', '0xtx-x1']);
      expect(x402.totals.byNetwork.map((t) => t.network).sort()).toEqual([BASE, STELLAR_PUBNET].sort());
      const settledMpp = await json(env, '--protocol', 'mpp', '--status', 'settled');
      expect(settledMpp.payments.map((p) => p.transaction)).toEqual(['0xtx-m2', '0xtx-m1']);
    });

    it('prints a PROTOCOL column and totals by protocol and network', async () => {
      const { code, stdout } = await receipts(env);
      expect(code).toBe(0);
      expect(stdout).toMatch(/^TIME\s+STATUS\s+TOOL\s+NETWORK\s+AMOUNT\s+VIA\s+PROTOCOL\s+PAYER/m);
      expect(stdout).toMatch(/settled\s+geo-distance\s+eip155:8453\s+0\.001\s+http\s+mpp\s+0xpayer-m2/);
      expect(stdout).toMatch(/settled\s+annuity\s+eip155:8453\s+0\.001\s+http\s+x402\s+0xpayer-x1/);
      const section = stdout.slice(stdout.indexOf('Totals by protocol and network:'));
      expect(section).toMatch(/^PROTOCOL\s+NETWORK\s+LABEL\s+ASSET\s+SETTLED\s+PENDING\s+FAILED\s+IN DOUBT$/m);
      expect(section).toMatch(
        /^mpp\s+eip155:8453\s+Base\s+USD Coin \(6 decimals\)\s+2: 0\.002\s+1: 0\.001\s+1: 0\.001\s+-$/m,
      );
      expect(section).toMatch(/^x402\s+eip155:8453\s+Base\s+USD Coin \(6 decimals\)\s+1: 0\.001\s+-\s+-\s+-$/m);
      expect(section).toMatch(/^x402\s+stellar:pubnet\s+Stellar\s+CCW67T…MI75 \(7 decimals\)\s+1: 0\.001/m);
      const only = await receipts(env, '--protocol', 'mpp', '--status', 'settled');
      expect(only.stdout).toContain('Payments (settled, mpp only): 2 most recent of 2');
      expect(only.stdout).toContain('Totals by protocol and network (settled, mpp only):');
      expect(only.stdout).not.toMatch(/\sx402\s/);
    });
  });
}

describe('tollbooth receipts --protocol', () => {
  it('refuses an unknown protocol with the usage line naming --protocol (exit 2)', async () => {
    const result = await receipts({ DATA_DIR: tmpdir() }, '--protocol', 'lightning');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--protocol must be x402 or mpp');
    expect(result.stderr).toContain('[--protocol x402|mpp]');
  });
});

describeProtocolSplit('the SQLite file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollbooth-receipts-protocol-'));
  return {
    env: { DATA_DIR: dir },
    open: () => SqliteStore.open(join(dir, 'tollbooth.db')),
    tearDown: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describeWithPostgres('tollbooth receipts split by protocol with DATABASE_URL', () => {
  describeProtocolSplit('PostgreSQL', async () => {
    const schema: TestSchema = await createTestSchema('tollbooth_receipts_protocol');
    return {
      env: { DATABASE_URL: schema.url },
      open: () => PostgresStore.open(schema.url),
      tearDown: () => schema.drop(),
    };
  });
});
