import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { NewDeposit } from '../../../src/shared/agent-channels.js';
import { PostgresStore } from '../../../src/store/dialects/postgres/store.js';
import { SqliteStore } from '../../../src/store/dialects/sqlite/store.js';
import type { SqlStore } from '../../../src/store/sql/store.js';
import { createTestSchema, describeWithPostgres, type TestSchema } from '../../support/postgres.js';

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-agent-channels-'));
const schemas: TestSchema[] = [];
const opened: SqlStore[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close().catch(() => undefined)));
  await Promise.all(schemas.map((s) => s.drop()));
  rmSync(dir, { recursive: true, force: true });
});

const CHANNEL = '0x' + 'cd'.repeat(32);
const today = new Date().toISOString().slice(0, 10);
let n = 0;
const deposit = (usdMicros: number, over: Partial<NewDeposit> = {}): NewDeposit => ({
  id: `deposit-${++n}`,
  day: today,
  tool: 'fetch',
  resource: 'http://127.0.0.1/quote',
  requestHash: 'h',
  channelId: CHANNEL,
  network: 'eip155:8453',
  asset: '0xasset',
  amount: String(usdMicros),
  usdMicros,
  ...over,
});
const voucher = (usdMicros: number) => {
  const { day: _day, ...rest } = deposit(usdMicros);
  return { ...rest, id: `voucher-${n}` };
};

/** What the agent's channel book must do on either database. */
function describeBook(open: () => Promise<SqlStore>): void {
  it('keeps the scheme’s channel record across reopening, and drops it on delete while the channel stays listed', async () => {
    const store = await open();
    await store.agentChannels.set(CHANNEL, { balance: '20000', chargedCumulativeAmount: '0' });
    await store.close();
    const again = await open();
    expect(await again.agentChannels.get(CHANNEL)).toEqual({ balance: '20000', chargedCumulativeAmount: '0' });
    await again.agentChannels.delete(CHANNEL);
    expect(await again.agentChannels.get(CHANNEL)).toBeUndefined();
    expect(await again.agentChannels.list()).toMatchObject([{ channelId: CHANNEL }]);
  });

  it('claims a deposit within its origin’s day cap only, counting that origin’s deposits but no other’s', async () => {
    const { agentChannels: book, spends } = await open();
    const origin = 'http://seller.test:1';
    const other = (await spends.originSpentOn(origin, today)) + 5000;
    expect(await book.claimDeposit(deposit(4000, { origin }), 1_000_000, other)).toBe(true);
    expect(await book.claimDeposit(deposit(2000, { origin }), 1_000_000, other)).toBe(false);
    expect(await book.claimDeposit(deposit(2000, { origin: 'http://other.test:1' }), 1_000_000, 1000)).toBe(false);
    expect(await book.claimDeposit(deposit(2000, { origin: 'http://other.test:1' }), 1_000_000, 2000)).toBe(true);
    expect(await book.claimDeposit(deposit(1000, { origin }), 1_000_000, other)).toBe(true);
    expect(await spends.originSpentOn(origin, today)).toBe(other);
  });

  it('claims a deposit within the day’s budget only, then moves voucher charges from committed to spent and releases the rest', async () => {
    const { agentChannels: book, spends } = await open();
    expect(await book.claimDeposit(deposit(3000), 2000)).toBe(false);
    const d = deposit(20_000);
    expect(await book.claimDeposit(d, 1_000_000)).toBe(true);
    await book.note({
      channelId: CHANNEL,
      network: 'eip155:8453',
      asset: '0xasset',
      payTo: '0xp',
      resource: 'r',
      decimals: 6,
    });
    const first = await book.drawVoucher(voucher(1000));
    await book.endDeposit(d.id, { settled: true });
    await book.endVoucher(first, { type: 'settled', chargedMicros: 1000, amount: '1000' });
    const second = await book.drawVoucher(voucher(1000));
    await book.endVoucher(second, { type: 'settled', chargedMicros: 600, amount: '600' });
    const third = await book.drawVoucher(voucher(1000));
    await book.endVoucher(third, { type: 'released', note: 'refused' });
    expect(await book.list()).toMatchObject([{ deposited: '20000', committedMicros: 18_400, spentMicros: 1600 }]);
    expect(await spends.spentOn(today)).toBe(20_000);
    await book.released(CHANNEL, '18400', 'refunded');
    expect(await book.list()).toMatchObject([{ committedMicros: 0, spentMicros: 1600, refunded: '18400' }]);
    expect(await spends.spentOn(today)).toBe(1600);
  });
}

function sqliteOpener(): () => Promise<SqlStore> {
  const file = join(dir, `agent-${Math.random().toString(36).slice(2)}.db`);
  return async () => {
    const store = await SqliteStore.open(file);
    opened.push(store);
    return store;
  };
}

function postgresOpener(): () => Promise<SqlStore> {
  let schema: Promise<TestSchema> | undefined;
  return async () => {
    schema ??= createTestSchema('tollbooth_agent_channels').then((s) => (schemas.push(s), s));
    const store = await PostgresStore.open((await schema).url);
    opened.push(store);
    return store;
  };
}

/** A fresh database per test. */
function perTest(makeOpener: () => () => Promise<SqlStore>): () => Promise<SqlStore> {
  let current: (() => Promise<SqlStore>) | undefined;
  let test: string | undefined;
  return () => {
    const name = expect.getState().currentTestName;
    if (name !== test) [test, current] = [name, makeOpener()];
    return current!();
  };
}

describe('the agent’s batch-settlement channels on a SQLite file', () => {
  describeBook(perTest(sqliteOpener));
});

describeWithPostgres('the agent’s batch-settlement channels on PostgreSQL', () => {
  describeBook(perTest(postgresOpener));
});
