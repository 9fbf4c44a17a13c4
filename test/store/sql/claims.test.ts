import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteDb } from '../../../src/store/dialects/sqlite/db.js';
import { SqlitePort } from '../../../src/store/dialects/sqlite/port.js';
import { SqliteStore } from '../../../src/store/dialects/sqlite/store.js';
import type { PaymentClaim } from '../../../src/store/ledger.js';
import { sqlPaymentLedger } from '../../../src/store/sql/ledger.js';
import type { SqlPort } from '../../../src/store/sql/port.js';

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-claims-'));
const path = join(dir, 'tollbooth.db');
let db: SqliteDb;
/** The syncs asked of the port, counted. */
let syncs = 0;

/** The real SQLite port of the file, counting `durable()`. */
function countingPort(inner: SqlitePort): SqlPort {
  return new Proxy(inner, {
    get(target, key, receiver) {
      if (key === 'durable')
        return () => {
          syncs++;
          return target.durable();
        };
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const claim = (replayKey: string, over: Partial<PaymentClaim> = {}): PaymentClaim => ({
  replayKey,
  tool: 'annuity',
  network: 'eip155:8453',
  payer: '0x00000000000000000000000000000000000000a1',
  amount: '1000',
  transport: 'http',
  details: { payload: { x402Version: 2 }, requirements: { scheme: 'exact' }, requestHash: 'h' },
  ...over,
});

beforeAll(async () => {
  await (await SqliteStore.open(path)).close(); // the schema
  db = SqliteDb.open(path);
});

afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the replay guard on SQLite', () => {
  it('starts the sync of a new claim at once, unless a later durable write settles it (a voucher)', async () => {
    const ledger = sqlPaymentLedger(countingPort(new SqlitePort(db)));
    syncs = 0;
    expect(await ledger.claimPayment(claim('exact-1'))).toEqual({ type: 'claimed' });
    expect(syncs).toBe(1);
    expect(await ledger.claimPayment(claim('batch:voucher-1', { syncEarly: false }))).toEqual({ type: 'claimed' });
    expect(syncs).toBe(1);
    // Held either way: the claim row is written whatever its sync.
    expect(await ledger.claimPayment(claim('batch:voucher-1', { syncEarly: false }))).toEqual({ type: 'in_flight' });
    await ledger.durable();
    expect(syncs).toBe(2);
  });
});
