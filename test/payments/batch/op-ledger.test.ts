import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LandedClaim } from '../../../src/payments/batch/landed-claims.js';
import { OperationRows, pendingOperations } from '../../../src/payments/batch/op-ledger.js';
import type { Logger } from '../../../src/shared/log.js';
import { SqliteStore } from '../../../src/store/dialects/sqlite/store.js';

const SCOPE = {
  network: 'eip155:8453',
  token: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
  receiver: '0x' + '22'.repeat(20),
};
const id = (n: number) => '0x' + n.toString(16).padStart(64, '0');
const hash = (n: number) => '0x' + n.toString(16).padStart(64, 'f');

let dir: string;
let store: SqliteStore;
let warnings: string[];
const log: Logger = { info: () => undefined, warn: (msg) => warnings.push(msg), error: () => undefined };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tollbooth-op-ledger-'));
});
beforeEach(async () => {
  await store?.close();
  store = await SqliteStore.open(join(dir, `${Date.now()}-${Math.random()}.db`));
  warnings = [];
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A claim row as a process leaves it when it is killed before the claim's answer. */
const deadClaim = (amount: bigint, claims?: string[]) =>
  new OperationRows(store.ledger, SCOPE, log).begin('claim', { amount, ...(claims && { claims }) });

/** The next round's view: every row written so far is older than its lease. */
const nextRound = (landed?: (since: number) => Promise<LandedClaim[]>) =>
  new OperationRows(store.ledger, SCOPE, log).closeAbandoned(Date.now() + 1, landed);

const receiptOf = async (key: string) =>
  (await store.ledger.listReceipts({ limit: 100 })).find((r) => r.replayKey === key);

describe('closing the claim rows a stopped process left pending', () => {
  it('records a claim that landed with its transaction: the one on chain whose channels are all the row’s', async () => {
    const row = await deadClaim(3000n, [id(1), id(2)]);
    const [pending] = pendingOperations(await store.ledger.listPending());
    const asked: number[] = [];
    const closed = await nextRound(async (since) => {
      asked.push(since);
      return [
        { transaction: hash(9), amount: 500n, channels: [id(7)] }, // another deployment's channel, same receiver
        { transaction: hash(8), amount: 3000n, channels: [id(1), id(2)] },
      ];
    });
    expect(asked).toEqual([Date.parse(pending!.createdAt)]);
    expect(closed).toEqual([{ kind: 'claim', amount: 3000n, transaction: hash(8) }]);
    expect(await receiptOf(row.replayKey)).toMatchObject({ status: 'settled', kind: 'claim', transaction: hash(8) });
    expect(pendingOperations(await store.ledger.listPending())).toEqual([]);
    expect(warnings).toEqual([
      'a claim left pending by a stopped process landed on chain; recorded with its transaction',
    ]);
  });

  it('never names a transaction a receipt already names, nor one of two that both fit', async () => {
    const named = await deadClaim(1000n, [id(1)]);
    await new OperationRows(store.ledger, SCOPE, log).settled(named, hash(1));
    const row = await deadClaim(1000n, [id(1), id(2)]);
    const twice = await deadClaim(1000n, [id(3)]);
    const closed = await nextRound(async () => [
      { transaction: hash(1), amount: 1000n, channels: [id(1)] },
      { transaction: hash(3), amount: 1000n, channels: [id(3)] },
      { transaction: hash(4), amount: 1000n, channels: [id(3)] },
    ]);
    expect(closed.map((c) => c.transaction)).toEqual([undefined, undefined]);
    expect(await receiptOf(row.replayKey)).toMatchObject({ status: 'failed', errorReason: 'claim_abandoned' });
    expect(await receiptOf(twice.replayKey)).toMatchObject({ status: 'failed', errorReason: 'claim_abandoned' });
  });

  it('closes the rows as abandoned when the chain cannot be asked, and says so', async () => {
    const row = await deadClaim(2000n, [id(5)]);
    const closed = await nextRound(async () => {
      throw new Error('HTTP request failed');
    });
    expect(closed).toEqual([{ kind: 'claim', amount: 2000n }]);
    expect(await receiptOf(row.replayKey)).toMatchObject({
      status: 'failed',
      errorReason: 'claim_abandoned',
      transaction: '',
    });
    expect(warnings[0]).toBe('the chain could not be asked for claims left unanswered; they close as abandoned');
  });

  it('does not ask the chain for a row that recorded no channels (written before rows recorded them)', async () => {
    const row = await deadClaim(2000n);
    let asked = false;
    await nextRound(async () => {
      asked = true;
      return [{ transaction: hash(2), amount: 2000n, channels: [id(5)] }];
    });
    expect(asked).toBe(false);
    expect(await receiptOf(row.replayKey)).toMatchObject({ status: 'failed', errorReason: 'claim_abandoned' });
  });
});
