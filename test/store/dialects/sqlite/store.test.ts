import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../../src/store/dialects/sqlite/store.js';
import { availableDrivers } from '../../../../src/store/dialects/sqlite/driver.js';
import { describeStoreContract } from '../../contract.js';
import type { PaymentClaim, ReceiptRecord } from '../../../../src/store/store.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tollbooth-store-'));
  file = join(dir, 'nested', 'tollbooth.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const claim = (key: string): PaymentClaim => ({
  replayKey: key,
  tool: 'annuity',
  network: 'eip155:8453',
  payer: '0xabc',
  amount: '1000',
  transport: 'http',
});
const receipt = (key: string, status: ReceiptRecord['status'] = 'settled'): ReceiptRecord => ({
  replayKey: key,
  tool: 'annuity',
  network: 'eip155:8453',
  payer: '0xabc',
  amount: '1000',
  transaction: '0xtx',
  status,
  transport: 'mcp',
  createdAt: new Date().toISOString(),
});

// Every driver this Node has (Node 22.16+: node:sqlite and libsql; Node 20: libsql), each through the whole contract.
for (const driver of availableDrivers()) {
  const contractDir = mkdtempSync(join(tmpdir(), 'tollbooth-contract-'));
  let opened = 0;
  describeStoreContract(
    `SQLite on ${driver}`,
    () => SqliteStore.open(join(contractDir, `store-${++opened}.db`), driver),
    async () => rmSync(contractDir, { recursive: true, force: true }),
  );
}

describe('the SQLite store', () => {
  it('creates its file and directory on first open', async () => {
    const store = await SqliteStore.open(file);
    await store.ping();
    await store.close();
  });

  it('gives a claim to exactly one of two processes sharing the file, each on a driver of its own where there are two', async () => {
    const drivers = availableDrivers();
    const a = await SqliteStore.open(file, drivers[0]);
    const b = await SqliteStore.open(file, drivers.at(-1));
    expect([a.driver, b.driver]).toEqual([drivers[0], drivers.at(-1)]);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).ledger.claimPayment(claim('shared'))),
    );
    expect(results.filter((r) => r.type === 'claimed')).toHaveLength(1);
    await a.close();
    await b.close();
  });

  it('records one receipt when two reconcilers complete the same pending payment', async () => {
    const a = await SqliteStore.open(file);
    const b = await SqliteStore.open(file);
    await a.ledger.claimPayment(claim('k9'));
    await a.ledger.markPaymentPending('k9', {
      transaction: '0xp',
      payload: {},
      requirements: {},
      requestHash: 'h9',
      output: 9,
    });
    await Promise.all([
      a.ledger.completePayment(receipt('k9')),
      b.ledger.completePayment(receipt('k9')),
      b.ledger.releasePending(receipt('k9', 'failed')),
    ]);
    expect((await a.ledger.listReceipts()).filter((r) => r.replayKey === 'k9')).toHaveLength(1);
    await a.close();
    await b.close();
  });

  it('migrates a first-release database, turning unknown settlements into pending ones', async () => {
    const { default: Database } = await import('libsql');
    const { mkdirSync } = await import('node:fs');
    const { dirname } = await import('node:path');
    mkdirSync(dirname(file), { recursive: true });
    const old = new Database(file);
    old.exec(`CREATE TABLE payment_claims (key TEXT PRIMARY KEY, status TEXT NOT NULL CHECK (status IN ('claimed', 'unknown', 'spent')),
      tool TEXT NOT NULL, network TEXT NOT NULL, payer TEXT NOT NULL, amount TEXT NOT NULL, transport TEXT NOT NULL,
      transaction_id TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`);
    old.exec(
      `INSERT INTO payment_claims VALUES ('old', 'unknown', 'annuity', 'eip155:8453', '0xabc', '1000', 'http', '0xold', 'x', 'x')`,
    );
    old.close();
    const store = await SqliteStore.open(file);
    expect(await store.ledger.claimPayment(claim('old'))).toMatchObject({
      type: 'pending',
      pending: { transaction: '0xold' },
    });
    await store.ledger.markPaymentPending('old', {
      transaction: '0xold',
      payload: {},
      requirements: {},
      requestHash: 'h',
      output: 1,
    });
    await store.close();
  });

  it('migrates a database written before MPP: existing claims and receipts read as x402, new ones record their protocol', async () => {
    const { default: Database } = await import('libsql');
    const { mkdirSync } = await import('node:fs');
    const { dirname } = await import('node:path');
    mkdirSync(dirname(file), { recursive: true });
    const old = new Database(file);
    old.exec(`CREATE TABLE payment_claims (key TEXT PRIMARY KEY, status TEXT NOT NULL CHECK (status IN ('claimed', 'pending', 'spent')),
      tool TEXT NOT NULL, network TEXT NOT NULL, payer TEXT NOT NULL, amount TEXT NOT NULL, transport TEXT NOT NULL,
      transaction_id TEXT, pending_json TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`);
    old.exec(`CREATE TABLE receipts (id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, tool TEXT NOT NULL, network TEXT NOT NULL,
      payer TEXT NOT NULL, amount TEXT NOT NULL, transaction_id TEXT NOT NULL, status TEXT NOT NULL, error_reason TEXT,
      transport TEXT NOT NULL, created_at TEXT NOT NULL)`);
    old.exec(
      `INSERT INTO payment_claims VALUES ('before', 'pending', 'annuity', 'eip155:8453', '0xabc', '1000', 'http', '0xold', '{}', 'x', 'x')`,
    );
    old.exec(`INSERT INTO receipts (key, tool, network, payer, amount, transaction_id, status, transport, created_at)
      VALUES ('before-r', 'annuity', 'eip155:8453', '0xabc', '1000', '0xr', 'settled', 'http', '2026-01-01T00:00:00.000Z')`);
    old.close();
    const store = await SqliteStore.open(file);
    expect((await store.ledger.listPending())[0]).toMatchObject({ replayKey: 'before', protocol: 'x402' });
    expect((await store.ledger.listReceipts())[0]).toMatchObject({ replayKey: 'before-r', protocol: 'x402' });
    await store.ledger.claimPayment({ ...claim('after'), protocol: 'mpp' });
    await store.ledger.completePayment({ ...receipt('after'), protocol: 'mpp' });
    expect((await store.ledger.listReceipts()).find((r) => r.replayKey === 'after')).toMatchObject({ protocol: 'mpp' });
    await store.close();
    const reopened = await SqliteStore.open(file);
    expect((await reopened.ledger.listReceipts()).map((r) => r.protocol).sort()).toEqual(['mpp', 'x402']);
    await reopened.close();
  });

  it('keeps claims and receipts across a restart', async () => {
    const first = await SqliteStore.open(file);
    await first.ledger.claimPayment(claim('k4'));
    await first.ledger.completePayment(receipt('k4'));
    await first.ledger.recordReceipt(receipt('k5', 'failed'));
    await first.close();
    const second = await SqliteStore.open(file);
    expect((await second.ledger.claimPayment(claim('k4'))).type).toBe('spent');
    const receipts = await second.ledger.listReceipts();
    expect(receipts.map((r) => [r.replayKey, r.status])).toEqual([
      ['k5', 'failed'],
      ['k4', 'settled'],
    ]);
    expect(receipts[1]).toMatchObject({ tool: 'annuity', amount: '1000', transaction: '0xtx', transport: 'mcp' });
    await second.close();
  });

  it('grants at most the daily limit of drips to one subject, even to 10 concurrent callers across two processes', async () => {
    const a = await SqliteStore.open(file);
    const b = await SqliteStore.open(file);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).toolState.claimDrip('base-sepolia:0xabc', '2026-11-21', 2)),
    );
    expect(results.filter((r) => r.type === 'granted')).toHaveLength(2);
    expect(results.filter((r) => r.type === 'limit_reached').every((r) => r.count === 2)).toBe(true);
    expect((await a.toolState.claimDrip('base-sepolia:0xabc', '2026-11-22', 2)).type).toBe('granted');
    await a.toolState.releaseDrip('base-sepolia:0xabc', '2026-11-21');
    expect(await a.toolState.claimDrip('base-sepolia:0xabc', '2026-11-21', 2)).toEqual({ type: 'granted', count: 2 });
    await a.close();
    await b.close();
  });

  it('keeps orders across a restart and updates their status', async () => {
    const order = {
      orderId: '23501',
      serviceId: 1,
      link: 'https://example.com/p',
      quantity: 100,
      chargeUsd: 3,
      status: 'ordered',
      payer: '0xabc',
      replayKey: 'k',
      createdAt: 't0',
      updatedAt: 't0',
    };
    const first = await SqliteStore.open(file);
    await first.toolState.saveOrder(order);
    await first.close();
    const second = await SqliteStore.open(file);
    expect(await second.toolState.getOrder('23501')).toEqual(order);
    await second.toolState.saveOrder({ ...order, status: 'completed', updatedAt: 't1' });
    expect(await second.toolState.getOrder('23501')).toMatchObject({
      status: 'completed',
      createdAt: 't0',
      updatedAt: 't1',
    });
    expect(await second.toolState.getOrder('nope')).toBeUndefined();
    await second.close();
  });
});
