import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { journalPath, type OutboxEntry } from '../../src/payments/ledger/settled-journal.js';
import { runReceipts, type ReceiptsReport } from '../../src/receipts/receipts.js';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';
import type { PaymentClaim, ReceiptRecord, Store } from '../../src/store/store.js';
import { BASE } from '../support/receipts.js';

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollbooth-in-doubt-'));
  store = await SqliteStore.open(join(dir, 'tollbooth.db'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const claimOf = (key: string): PaymentClaim => ({
  replayKey: key,
  tool: 'annuity',
  network: BASE,
  payer: `0xpayer-${key}`,
  amount: '1000',
  transport: 'http',
  details: { payload: {}, requirements: {}, requestHash: `hash-${key}` },
});
const receiptOf = (key: string): ReceiptRecord => ({
  ...claimOf(key),
  transaction: `0xtx-${key}`,
  status: 'settled',
  createdAt: new Date().toISOString(),
});

/** `tollbooth receipts --json` over this directory, in-process. */
async function report(...status: Array<'in_doubt' | 'settled'>): Promise<ReceiptsReport> {
  let out = '';
  const code = await runReceipts(
    loadConfig({ DATA_DIR: dir }),
    { limit: 100, json: true, ...(status[0] ? { status: status[0] } : {}) },
    { out: (t) => (out += t), err: () => undefined },
  );
  expect(code).toBe(0);
  return JSON.parse(out) as ReceiptsReport;
}

describe('tollbooth receipts: payments whose outcome is not stored yet', () => {
  it('lists a claim whose call runs or is being settled as in_doubt, with its age', async () => {
    await store.ledger.claimPayment(claimOf('c1'));
    const listed = await report();
    expect(listed.payments).toMatchObject([
      { status: 'in_doubt', errorReason: 'in_flight', payer: '0xpayer-c1', amount: '1000', transaction: '' },
    ]);
    expect(listed.payments[0]!.ageSeconds).toBeGreaterThanOrEqual(0);
    expect(listed.totals.byNetwork[0]).toMatchObject({ inDoubt: { count: 1, amount: '1000' }, settled: { count: 0 } });
  });

  it('names the transaction of a settled payment the journal holds until the store has its receipt', async () => {
    await store.ledger.claimPayment(claimOf('c1'));
    await store.ledger.claimPayment(claimOf('c2'));
    const entry: OutboxEntry = { type: 'settled', receipt: receiptOf('c1') };
    writeFileSync(journalPath(dir), `${JSON.stringify({ op: 'add', entry })}\n`);
    const listed = await report('in_doubt');
    expect(listed.payments.map((p) => [p.payer, p.errorReason, p.transaction]).sort()).toEqual([
      ['0xpayer-c1', 'settled_not_stored', '0xtx-c1'],
      ['0xpayer-c2', 'in_flight', ''],
    ]);

    await store.ledger.completePayment(receiptOf('c1')); // stored; the journal's "stored" mark not written yet
    const after = await report();
    expect(after.payments.map((p) => [p.status, p.payer, p.transaction]).sort()).toEqual([
      ['in_doubt', '0xpayer-c2', ''],
      ['settled', '0xpayer-c1', '0xtx-c1'],
    ]);
  });

  it('lists a pending outcome the journal holds over the claim it belongs to, once', async () => {
    const claim = claimOf('c1');
    await store.ledger.claimPayment(claim);
    const entry: OutboxEntry = {
      type: 'pending',
      claim,
      details: { ...claim.details!, transaction: '0xbroadcast', output: {} },
      at: new Date().toISOString(),
    };
    writeFileSync(journalPath(dir), `${JSON.stringify({ op: 'add', entry })}\n`);
    expect((await report()).payments).toMatchObject([
      { status: 'in_doubt', errorReason: 'pending_not_stored', transaction: '0xbroadcast' },
    ]);
  });

  it('still prints what the journal holds when the store cannot be reached (exit 1)', async () => {
    const entry: OutboxEntry = { type: 'settled', receipt: receiptOf('c1') };
    writeFileSync(journalPath(dir), `${JSON.stringify({ op: 'add', entry })}\n`);
    let err = '';
    const code = await runReceipts(
      loadConfig({ DATA_DIR: dir, DATABASE_URL: 'postgres://ops@127.0.0.1:1/payments' }),
      { limit: 10, json: false },
      { out: () => undefined, err: (t) => (err += t) },
    );
    expect(code).toBe(1);
    expect(err).toContain('Could not open the PostgreSQL store');
    expect(err).toContain('in_doubt settled');
    expect(err).toContain('0xtx-c1');
  });
});
