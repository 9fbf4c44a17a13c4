import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { PaymentClaim, ReceiptRecord } from '../../src/store/store.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tollbooth-store-'));
  file = join(dir, 'nested', 'tollbooth.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const claim = (key: string): PaymentClaim => ({ key, tool: 'annuity', network: 'eip155:8453', payer: '0xabc', amount: '1000', transport: 'http' });
const receipt = (key: string, status: ReceiptRecord['status'] = 'settled'): ReceiptRecord => ({
  key, tool: 'annuity', network: 'eip155:8453', payer: '0xabc', amount: '1000', transaction: '0xtx', status, transport: 'mcp', createdAt: new Date().toISOString(),
});

describe('the SQLite store', () => {
  it('creates its file and directory on first open', async () => {
    const store = await SqliteStore.open(file);
    await store.ping();
    await store.close();
  });

  it('gives a payment claim to exactly one of many concurrent claimers', async () => {
    const store = await SqliteStore.open(file);
    const results = await Promise.all(Array.from({ length: 50 }, () => store.claimPayment(claim('k1'))));
    expect(results.filter((r) => r.type === 'claimed')).toHaveLength(1);
    expect(results.filter((r) => r.type === 'in_flight')).toHaveLength(49);
    await store.close();
  });

  it('gives a claim to exactly one of two processes sharing the file', async () => {
    const a = await SqliteStore.open(file);
    const b = await SqliteStore.open(file);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).claimPayment(claim('shared'))));
    expect(results.filter((r) => r.type === 'claimed')).toHaveLength(1);
    await a.close();
    await b.close();
  });

  it('lets a released claim be claimed again', async () => {
    const store = await SqliteStore.open(file);
    expect((await store.claimPayment(claim('k2'))).type).toBe('claimed');
    await store.releasePayment('k2');
    expect((await store.claimPayment(claim('k2'))).type).toBe('claimed');
    await store.close();
  });

  it('reports a completed payment as spent with its transaction, and never releases it', async () => {
    const store = await SqliteStore.open(file);
    await store.claimPayment(claim('k3'));
    await store.completePayment(receipt('k3'));
    await store.releasePayment('k3');
    expect(await store.claimPayment(claim('k3'))).toEqual({ type: 'spent', transaction: '0xtx' });
    await store.close();
  });

  it('keeps a claim whose settlement is unknown unusable, and never lets release free it', async () => {
    const store = await SqliteStore.open(file);
    await store.claimPayment(claim('k6'));
    await store.markPaymentUnknown('k6', '0xpending');
    await store.releasePayment('k6');
    expect(await store.claimPayment(claim('k6'))).toEqual({ type: 'unknown', transaction: '0xpending' });
    await store.close();
  });

  it('keeps claims and receipts across a restart', async () => {
    const first = await SqliteStore.open(file);
    await first.claimPayment(claim('k4'));
    await first.completePayment(receipt('k4'));
    await first.recordReceipt(receipt('k5', 'failed'));
    await first.close();
    const second = await SqliteStore.open(file);
    expect((await second.claimPayment(claim('k4'))).type).toBe('spent');
    const receipts = await second.listReceipts();
    expect(receipts.map((r) => [r.key, r.status])).toEqual([
      ['k5', 'failed'],
      ['k4', 'settled'],
    ]);
    expect(receipts[1]).toMatchObject({ tool: 'annuity', amount: '1000', transaction: '0xtx', transport: 'mcp' });
    await second.close();
  });
});
