import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { runReceipts, type ReceiptsReport } from '../../src/receipts/receipts.js';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';
import type { ReceiptRecord } from '../../src/store/store.js';
import { BASE } from '../support/receipts.js';

let dir: string;
let store: SqliteStore;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollbooth-receipt-kinds-'));
  store = await SqliteStore.open(join(dir, 'tollbooth.db'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const CHANNEL = `0x${'ab'.repeat(32)}`;
const receipt = (key: string, extra: Partial<ReceiptRecord>): ReceiptRecord => ({
  replayKey: key,
  tool: 'annuity',
  network: BASE,
  payer: '0x00000000000000000000000000000000000000a1',
  amount: '1000',
  transaction: '',
  status: 'settled',
  transport: 'http',
  createdAt: new Date().toISOString(),
  ...extra,
});

async function receipts(json: boolean): Promise<string> {
  let out = '';
  const code = await runReceipts(
    loadConfig({ DATA_DIR: dir }),
    { limit: 100, json },
    { out: (t) => (out += t), err: () => undefined },
  );
  expect(code).toBe(0);
  return out;
}

describe('tollbooth receipts: receipt kinds', () => {
  it('keeps a voucher charge apart from a transfer, with its channel and cumulative amount', async () => {
    await store.ledger.recordReceipt(receipt('t1', { transaction: `0x${'11'.repeat(32)}` }));
    await store.ledger.recordReceipt(
      receipt(`batch:${BASE}:${CHANNEL}:2000`, { kind: 'voucher', channelId: CHANNEL, cumulativeAmount: '2000' }),
    );
    const [voucher, transfer] = await store.ledger.listReceipts({ limit: 2 });
    expect(voucher).toMatchObject({ kind: 'voucher', channelId: CHANNEL, cumulativeAmount: '2000', transaction: '' });
    expect(transfer?.kind).toBeUndefined();
    const report = JSON.parse(await receipts(true)) as ReceiptsReport;
    expect(report.payments.map((p) => p.kind)).toEqual(['voucher', undefined]);
    const text = await receipts(false);
    expect(text).toContain(`voucher channel ${CHANNEL} cumulative 2000`);
    expect(text).toContain(`0x${'11'.repeat(32)}`);
  });
});
