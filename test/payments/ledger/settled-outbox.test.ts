import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/shared/log.js';
import { journalPath, readJournal, type OutboxEntry } from '../../../src/payments/ledger/settled-journal.js';
import { SettledOutbox, type OutboxLedger } from '../../../src/payments/ledger/settled-outbox.js';
import { SqliteStore } from '../../../src/store/dialects/sqlite/store.js';
import type { PaymentClaim, ReceiptRecord, Store } from '../../../src/store/store.js';

const FAST = { minDelayMs: 5, maxDelayMs: 20 };

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollbooth-outbox-'));
  store = await SqliteStore.open(join(dir, 'tollbooth.db'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The real SQLite ledger behind a switch that makes every outbox write fail, as a store that is down does. */
function switchable(): { ledger: OutboxLedger; down: boolean; writes: number } {
  const state = {
    down: false,
    writes: 0,
    ledger: {} as OutboxLedger,
  };
  const guard =
    <A extends unknown[]>(write: (...args: A) => Promise<void>) =>
    async (...args: A) => {
      state.writes++;
      if (state.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      await write(...args);
    };
  const l = store.ledger;
  state.ledger = {
    completePayment: guard((r) => l.completePayment(r)),
    completeIdempotency: guard((id, result) => l.completeIdempotency(id, result)),
    markPaymentPending: guard((key, details) => l.markPaymentPending(key, details)),
    releaseIdempotency: guard((id) => l.releaseIdempotency(id)),
  };
  return state;
}

const claimOf = (key: string): PaymentClaim => ({
  replayKey: key,
  tool: 'annuity',
  network: 'eip155:84532',
  payer: '0xPayer',
  amount: '1000',
  transport: 'http',
  protocol: 'x402',
  details: { payload: { signature: '0xsig' }, requirements: { amount: '1000' }, requestHash: `hash-${key}` },
});

const settled = (key: string, over: Partial<ReceiptRecord> = {}): OutboxEntry => ({
  type: 'settled',
  receipt: {
    replayKey: key,
    tool: 'annuity',
    network: 'eip155:84532',
    payer: '0xPayer',
    amount: '1000',
    transaction: `0x${key.padStart(64, 'a')}`,
    status: 'settled',
    transport: 'http',
    protocol: 'x402',
    createdAt: new Date().toISOString(),
    ...over,
  },
});

async function claimed(...keys: string[]): Promise<void> {
  for (const key of keys) expect(await store.ledger.claimPayment(claimOf(key))).toEqual({ type: 'claimed' });
}

const settledReceipts = async () => (await store.ledger.listReceipts()).filter((r) => r.status === 'settled');

async function until(condition: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('the settlement outbox', () => {
  it('stores a settled outcome at once when the store answers, and writes no journal', async () => {
    const { ledger } = switchable();
    await claimed('k1');
    const outbox = await SettledOutbox.open(dir, ledger, silentLogger, FAST);
    expect(await outbox.keep(settled('k1'))).toBe('stored');
    expect(await settledReceipts()).toMatchObject([{ replayKey: 'k1', transaction: `0x${'k1'.padStart(64, 'a')}` }]);
    expect(existsSync(journalPath(dir))).toBe(false);
    expect(await outbox.close(1000)).toBe(true);
  });

  it('journals an outcome the store refuses before answering, retries it until stored, then empties the journal', async () => {
    const state = switchable();
    await claimed('k1', 'k2');
    const outbox = await SettledOutbox.open(dir, state.ledger, silentLogger, FAST);
    state.down = true;
    expect(await outbox.keep(settled('k1'))).toBe('kept');
    expect(await outbox.keep(settled('k2'))).toBe('kept');
    // On disk the moment `keep` resolved: a kill now would lose nothing.
    expect((await readJournal(journalPath(dir))).map((e) => e.type === 'settled' && e.receipt.transaction)).toEqual([
      `0x${'k1'.padStart(64, 'a')}`,
      `0x${'k2'.padStart(64, 'a')}`,
    ]);
    expect([outbox.size, outbox.journaled]).toEqual([2, 2]);
    const failedSoFar = state.writes;
    await until(() => state.writes > failedSoFar + 2); // the background retry keeps trying while the store is down
    expect(await settledReceipts()).toEqual([]);

    state.down = false;
    await until(async () => (await settledReceipts()).length === 2);
    await until(() => outbox.journaled === 0);
    expect(outbox.size).toBe(0);
    expect(await readJournal(journalPath(dir))).toEqual([]);
    expect(existsSync(journalPath(dir))).toBe(false);
    expect(await outbox.close(1000)).toBe(true);
  });

  it('replays the journal at start-up: settled receipts with their transaction and the idempotent result', async () => {
    const state = switchable();
    await claimed('k1');
    expect(
      await store.ledger.claimIdempotency({
        id: 'pay_0123456789abcdef',
        tool: 'annuity',
        requestHash: 'hash-k1',
        replayKey: 'k1',
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      }),
    ).toEqual({ type: 'new' });
    const first = await SettledOutbox.open(dir, state.ledger, silentLogger, FAST);
    state.down = true;
    const entry: OutboxEntry = {
      ...(settled('k1') as Extract<OutboxEntry, { type: 'settled' }>),
      idempotency: { id: 'pay_0123456789abcdef', result: { output: { ok: 1 }, receipt: { success: true } } },
    };
    expect(await first.keep(entry)).toBe('kept');
    expect(await first.close(0)).toBe(false); // the process stops while the store is still down

    state.down = false;
    const next = await SettledOutbox.open(dir, state.ledger, silentLogger, FAST);
    expect(next.size).toBe(0);
    expect(await settledReceipts()).toMatchObject([{ replayKey: 'k1', transaction: `0x${'k1'.padStart(64, 'a')}` }]);
    expect(await readJournal(journalPath(dir))).toEqual([]);
    const again = await store.ledger.claimIdempotency({
      id: 'pay_0123456789abcdef',
      tool: 'annuity',
      requestHash: 'hash-k1',
      replayKey: 'k1',
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(again).toEqual({ type: 'done', result: { output: { ok: 1 }, receipt: { success: true } } });
    expect(await next.close(1000)).toBe(true);
  });

  it('replays an outcome already stored (its "stored" mark never written) without a second receipt', async () => {
    const { ledger } = switchable();
    await claimed('k1');
    await store.ledger.completePayment((settled('k1') as Extract<OutboxEntry, { type: 'settled' }>).receipt);
    writeFileSync(journalPath(dir), `${JSON.stringify({ op: 'add', entry: settled('k1') })}\n`);
    appendFileSync(journalPath(dir), '{"op":"add","entry":{"type":"sett'); // torn by a crash mid-write
    const outbox = await SettledOutbox.open(dir, ledger, silentLogger, FAST);
    expect(outbox.size).toBe(0);
    expect(await settledReceipts()).toHaveLength(1);
    expect(await store.ledger.claimPayment(claimOf('k1'))).toMatchObject({ type: 'spent' });
    expect(await readJournal(journalPath(dir))).toEqual([]);
    await outbox.close(1000);
  });

  it('keeps a pending outcome (with the output a retry receives) until the store takes it', async () => {
    const state = switchable();
    await claimed('k1');
    const outbox = await SettledOutbox.open(dir, state.ledger, silentLogger, FAST);
    state.down = true;
    const claim = claimOf('k1');
    const details = { ...claim.details!, transaction: '0xbroadcast', output: { answer: 42 } };
    expect(await outbox.keep({ type: 'pending', claim, details, at: new Date().toISOString() })).toBe('kept');
    expect(await store.ledger.listPending()).toEqual([]);
    state.down = false;
    await until(async () => (await store.ledger.listPending()).length === 1);
    expect((await store.ledger.listPending())[0]).toMatchObject({
      replayKey: 'k1',
      transaction: '0xbroadcast',
      output: { answer: 42 },
    });
    await outbox.close(1000);
  });

  it('flushes what waits at shutdown once the store is back within the time limit', async () => {
    const state = switchable();
    await claimed('k1', 'k2', 'k3');
    const outbox = await SettledOutbox.open(dir, state.ledger, silentLogger, {
      minDelayMs: 3_600_000,
      maxDelayMs: 3_600_000,
    });
    state.down = true;
    for (const key of ['k1', 'k2', 'k3']) expect(await outbox.keep(settled(key))).toBe('kept');
    const closing = outbox.close(60_000);
    const failedSoFar = state.writes;
    await until(() => state.writes > failedSoFar); // the flush is trying while the store is down
    state.down = false;
    expect(await closing).toBe(true);
    expect((await settledReceipts()).map((r) => r.replayKey).sort()).toEqual(['k1', 'k2', 'k3']);
    expect(await readJournal(journalPath(dir))).toEqual([]);
  });

  it('leaves in the journal, for the next start, what the store still refuses when the time limit is reached', async () => {
    const state = switchable();
    await claimed('k1');
    const outbox = await SettledOutbox.open(dir, state.ledger, silentLogger, FAST);
    state.down = true;
    expect(await outbox.keep(settled('k1'))).toBe('kept');
    expect(await outbox.close(300)).toBe(false);
    expect(await outbox.keep(settled('k2'))).toBe('kept'); // after close: journaled, never written behind its back
    expect((await readJournal(journalPath(dir))).map((e) => e.type === 'settled' && e.receipt.replayKey)).toEqual([
      'k1',
      'k2',
    ]);
    const line = readFileSync(journalPath(dir), 'utf8');
    expect(line).not.toMatch(/private|secret|token|password/i);
  });

  it("replays the journal of a process that no longer runs, and leaves a running process's journal to it", async () => {
    const { ledger } = switchable();
    await claimed('dead', 'live');
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    const deadFile = journalPath(dir, Number(gone));
    const liveFile = journalPath(dir, process.ppid); // the test runner's parent: running
    writeFileSync(deadFile, `${JSON.stringify({ op: 'add', entry: settled('dead') })}\n`);
    writeFileSync(liveFile, `${JSON.stringify({ op: 'add', entry: settled('live') })}\n`);
    const outbox = await SettledOutbox.open(dir, ledger, silentLogger, FAST);
    expect((await settledReceipts()).map((r) => r.replayKey)).toEqual(['dead']);
    expect(existsSync(deadFile)).toBe(false);
    expect(await readJournal(liveFile)).toMatchObject([{ receipt: { replayKey: 'live' } }]);
    await outbox.close(1000);
  });
});
