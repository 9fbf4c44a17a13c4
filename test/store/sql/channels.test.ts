import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChannelRecord, ChannelUpdateOutcome } from '../../../src/store/channels.js';
import { PostgresStore } from '../../../src/store/dialects/postgres/store.js';
import { SqliteStore } from '../../../src/store/dialects/sqlite/store.js';
import type { SqlStore } from '../../../src/store/sql/store.js';
import { writeMustBeDurable } from '../../../src/store/sql/channels.js';
import { createTestSchema, describeWithPostgres, type TestSchema } from '../../support/postgres.js';
import { channelRecord, RECORD_ID } from '../../support/batch-channel.js';

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-channels-'));
const schemas: TestSchema[] = [];
const opened: SqlStore[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close().catch(() => undefined)));
  await Promise.all(schemas.map((s) => s.drop()));
  rmSync(dir, { recursive: true, force: true });
});

const ID = RECORD_ID;
const channel = channelRecord;

/** Adds `amount` to the charged total, as the scheme commits one call; counts commits in `refundNonce`. */
const charge = (amount: bigint) => (current: ChannelRecord | undefined) => {
  const base = current ?? channel();
  return {
    ...base,
    chargedCumulativeAmount: (BigInt(base.chargedCumulativeAmount) + amount).toString(),
    refundNonce: base.refundNonce + 1,
  };
};

/**
 * What every store's channels must do, on two instances (`a`, `b`) that share one database, opened by `open`
 * (each call a separate store on the same database).
 */
function describeChannels(open: () => Promise<SqlStore>): void {
  it('store a new channel, read it back from another instance and list it', async () => {
    const [a, b] = [await open(), await open()];
    const outcome = await a.channels.updateChannel(ID, () => channel({ pendingRequest: undefined }));
    expect(outcome).toEqual({ status: 'updated', channel: channel() });
    expect(await b.channels.get(ID)).toEqual(channel());
    expect(await b.channels.get(ID.toUpperCase().replace('0X', '0x'))).toEqual(channel());
    expect(await b.channels.list()).toEqual([channel()]);
  });

  it('leave the channel alone when the update returns it as it is, and delete it when the update returns nothing', async () => {
    const [a, b] = [await open(), await open()];
    await a.channels.updateChannel(ID, () => channel({ chargedCumulativeAmount: '7' }));
    expect(await b.channels.updateChannel(ID, (current) => current)).toEqual({
      status: 'unchanged',
      channel: channel({ chargedCumulativeAmount: '7' }),
    });
    expect(await b.channels.updateChannel(ID, () => undefined)).toEqual({ status: 'deleted', channel: undefined });
    expect(await a.channels.get(ID)).toBeUndefined();
    expect(await a.channels.updateChannel(ID, () => undefined)).toEqual({ status: 'unchanged', channel: undefined });
  });

  it('keep the channel unchanged when the update is abandoned (its callback throws)', async () => {
    const [a] = [await open()];
    await a.channels.updateChannel(ID, () => channel({ chargedCumulativeAmount: '5' }));
    const failed = a.channels.updateChannel(ID, () => {
      throw new Error('the handler failed');
    });
    await expect(failed).rejects.toThrow('the handler failed');
    expect(await a.channels.get(ID)).toEqual(channel({ chargedCumulativeAmount: '5' }));
  });

  it('apply each of 50 concurrent updates from two instances exactly once, the cumulative amount exact', async () => {
    const [a, b] = [await open(), await open()];
    const amounts = Array.from({ length: 50 }, (_, i) => BigInt(i + 1));
    const outcomes: ChannelUpdateOutcome[] = await Promise.all(
      amounts.map((amount, i) => (i % 2 ? b : a).channels.updateChannel(ID, charge(amount))),
    );
    expect(outcomes.map((o) => o.status)).toEqual(amounts.map(() => 'updated'));
    // Every commit saw a different predecessor: the 50 charged totals seen are 50 distinct values.
    expect(new Set(outcomes.map((o) => o.channel?.chargedCumulativeAmount)).size).toBe(50);
    const stored = await b.channels.get(ID);
    expect(stored?.chargedCumulativeAmount).toBe('1275');
    expect(stored?.refundNonce).toBe(50);
  });

  it("decide on the stored row, never on an instance's own older copy of it", async () => {
    const [a, b] = [await open(), await open()];
    await a.channels.updateChannel(ID, () => channel({ chargedCumulativeAmount: '5' }));
    await b.channels.updateChannel(ID, charge(3n));
    // a last wrote 5: its copy is stale, so its update is decided again on the stored 8.
    expect((await a.channels.updateChannel(ID, charge(1n))).channel?.chargedCumulativeAmount).toBe('9');
    await b.channels.updateChannel(ID, charge(1n));
    // A decision to leave the channel alone is made on a fresh read only: on a's copy (9) it would keep it.
    const onlyAtTen = (c: ChannelRecord | undefined) =>
      c?.chargedCumulativeAmount === '10' ? { ...c, chargedCumulativeAmount: '11' } : c;
    expect(await a.channels.updateChannel(ID, onlyAtTen)).toMatchObject({ status: 'updated' });
    expect((await b.channels.get(ID))?.chargedCumulativeAmount).toBe('11');
  });

  it('keep a committed update when the instance that wrote it is closed and the database opened again', async () => {
    const a = await open();
    await a.channels.updateChannel(ID, () => channel({ chargedCumulativeAmount: '42' }));
    await a.close();
    const again = await open();
    expect((await again.channels.get(ID))?.chargedCumulativeAmount).toBe('42');
  });
}

/** Each test gets its own database: a SQLite file, opened as often as the test asks. */
function sqliteOpener(): () => Promise<SqlStore> {
  const file = join(dir, `channels-${Math.random().toString(36).slice(2)}.db`);
  return async () => {
    const store = await SqliteStore.open(file);
    opened.push(store);
    return store;
  };
}

function postgresOpener(): () => Promise<SqlStore> {
  let schema: Promise<TestSchema> | undefined;
  return async () => {
    schema ??= createTestSchema('tollbooth_channels').then((s) => (schemas.push(s), s));
    const store = await PostgresStore.open((await schema).url);
    opened.push(store);
    return store;
  };
}

/** Runs the channel contract with a fresh database per test. */
function perTest(makeOpener: () => () => Promise<SqlStore>): () => Promise<SqlStore> {
  let current: (() => Promise<SqlStore>) | undefined;
  let test: string | undefined;
  return () => {
    const name = expect.getState().currentTestName;
    if (name !== test) [test, current] = [name, makeOpener()];
    return current!();
  };
}

describe('the batch-settlement channels on a SQLite file', () => {
  describeChannels(perTest(sqliteOpener));
});

describeWithPostgres('the batch-settlement channels on PostgreSQL', () => {
  describeChannels(perTest(postgresOpener));
});

describe('which channel writes wait for the disk', () => {
  it('a charge, a signature, the chain view, a new or deleted channel do; a reservation or its release alone does not', () => {
    const reserved = channel({ pendingRequest: { pendingId: 'p1', signedMaxClaimable: '10', expiresAt: 5 } });
    expect(writeMustBeDurable(channel(), reserved)).toBe(false);
    expect(writeMustBeDurable(reserved, channel({ lastRequestTimestamp: 9 }))).toBe(false);
    expect(writeMustBeDurable(reserved, channel({ chargedCumulativeAmount: '10' }))).toBe(true);
    expect(writeMustBeDurable(reserved, { ...reserved, signedMaxClaimable: '10', signature: '0x01' })).toBe(true);
    expect(writeMustBeDurable(channel(), channel({ balance: '5', totalClaimed: '1' }))).toBe(true);
    expect(writeMustBeDurable(undefined, channel())).toBe(true);
    expect(writeMustBeDurable(channel(), undefined)).toBe(true);
  });

  it('a new reservation holding the next voucher does not (the charge writes it again and waits), one changing the charge does', () => {
    const committed = channel({ signedMaxClaimable: '10', signature: '0x01', chargedCumulativeAmount: '10' });
    const reserving = (over: Partial<ChannelRecord>) =>
      channel({ ...committed, pendingRequest: { pendingId: 'p2', signedMaxClaimable: '20', expiresAt: 5 }, ...over });
    expect(writeMustBeDurable(committed, reserving({ signedMaxClaimable: '20', signature: '0x02' }))).toBe(false);
    expect(writeMustBeDurable(committed, reserving({ chargedCumulativeAmount: '20' }))).toBe(true);
    expect(writeMustBeDurable(committed, reserving({ totalClaimed: '10' }))).toBe(true);
    // The charge of that reservation: the same voucher, now charged.
    const held = reserving({ signedMaxClaimable: '20', signature: '0x02' });
    expect(writeMustBeDurable(held, { ...held, chargedCumulativeAmount: '20', pendingRequest: undefined })).toBe(true);
  });

  it('compares by value: a copied config is no change, a field that appears or disappears is', () => {
    const signed = { ...channel(), signature: '0x01' };
    expect(writeMustBeDurable(signed, { ...signed, channelConfig: structuredClone(signed.channelConfig) })).toBe(false);
    expect(writeMustBeDurable(channel(), signed)).toBe(true);
    const { signature: _dropped, ...unsigned } = signed;
    expect(writeMustBeDurable(signed, unsigned as ChannelRecord)).toBe(true);
    expect(writeMustBeDurable(signed, { ...signed, channelConfig: { ...signed.channelConfig, salt: '0x02' } })).toBe(
      true,
    );
  });
});
