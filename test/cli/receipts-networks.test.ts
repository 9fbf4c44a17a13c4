import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_SEPOLIA } from '../../src/shared/networks.js';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';
import { at, claimOf, json, receipts } from '../support/receipts.js';

// The README's testnet example reads the receipts back without the server's PAY_TO_EVM: a development placeholder
// drops the EVM family from the configuration's table, which must not turn Base Sepolia amounts into "unknown asset".

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-receipts-networks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  const store = await SqliteStore.open(join(dir, 'tollbooth.db'));
  try {
    await store.ledger.claimPayment(claimOf('t1', 'annuity', BASE_SEPOLIA, '1000'));
    await store.ledger.completePayment({
      ...claimOf('t1', 'annuity', BASE_SEPOLIA, '1000'),
      transaction: '0xtestnet',
      status: 'settled',
      createdAt: at(),
    });
  } finally {
    await store.close();
  }
});

describe('tollbooth receipts of testnet payments', () => {
  it('shows Base Sepolia amounts in USDC with the testnet switch and no PAY_TO_EVM', async () => {
    const report = await json({ DATA_DIR: dir, TOLLBOOTH_NETWORK_SET: 'testnet' });
    expect(report.payments.map((p) => [p.network, p.units])).toEqual([[BASE_SEPOLIA, '0.001']]);
  });

  it('shows them in USDC also on the mainnet table (payments taken before switching back)', async () => {
    const { stdout, code } = await receipts({ DATA_DIR: dir });
    expect(code).toBe(0);
    expect(stdout).not.toMatch(/unknown asset/);
  });
});
