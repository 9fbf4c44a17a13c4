import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJournals } from '../../src/payments/ledger/settled-journal.js';
import { startHoldingProxy, type HoldingProxy } from '../support/held.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { json } from '../support/receipts.js';
import { decodeHeader } from '../support/server.js';
import { settledOnChain } from '../support/settlements.js';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';
import { startHyperliquidLookalike } from '../support/upstreams/hyperliquid.js';
import type { Lookalike } from '../support/upstreams/server.js';

/** Calls caught between their claim and their settlement when the file stops growing (distinct inputs: no sharing). */
const CALLS = [3, 4, 5].map((limit) => ({ coin: 'BTC', interval: '1h', limit }));
const isCandles = (body: unknown) => (body as { type?: unknown } | undefined)?.type === 'candleSnapshot';

/** `prlimit` (util-linux) caps the file size of a running process: its SQLite file can no longer grow (EFBIG). */
const prlimit = (() => {
  try {
    execFileSync('prlimit', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let paid: PaidEnvironment;
let hyperliquid: Lookalike;
let proxy: HoldingProxy;
let dataDir: string;
const servers: SpawnedServer[] = [];

beforeAll(async () => {
  paid = await startPaidEnvironment(2);
  hyperliquid = await startHyperliquidLookalike();
  proxy = await startHoldingProxy(hyperliquid.url, isCandles);
  dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-full-'));
}, 120_000);
afterAll(async () => {
  for (const server of servers) await server.stop();
  await proxy?.stop();
  await hyperliquid?.stop();
  await paid?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function serve(): Promise<SpawnedServer> {
  const server = await spawnServe({
    ...paid.env,
    HYPERLIQUID_API_URL: proxy.url,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
  });
  servers.push(server);
  return server;
}

async function pay(server: SpawnedServer, args: unknown, payer = 0): Promise<Response> {
  const probe = await fetch(server.url + '/api/perp-klines', { method: 'POST' });
  const entry = (decodeHeader(probe.headers.get('payment-required')) as PaymentRequired).accepts.find(
    (a) => a.network === LOCAL_NETWORK,
  ) as PaymentRequirements;
  const payment = await signExactPayment(paid.payers[payer]!, entry);
  return fetch(server.url + '/api/perp-klines', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body: JSON.stringify(args),
  });
}

const transactionOf = (res: Response) =>
  (decodeHeader(res.headers.get('payment-response')) as { transaction: string }).transaction;

describe.skipIf(!prlimit)('a SQLite file that cannot grow (the built CLI)', () => {
  it('journals the settled payments it cannot store, lists them in doubt, and stores them after a restart', async () => {
    const first = await serve();
    const calls: Array<Promise<Response>> = [];
    for (const args of CALLS) {
      const held = proxy.held();
      calls.push(pay(first, args));
      await held; // claimed and verified, its handler waiting for candles
    }
    // From now on no file of the process may grow past the write-ahead log's present size: the store's writes fail.
    const size = statSync(join(dataDir, 'tollbooth.db-wal')).size;
    execFileSync('prlimit', ['--pid', String(first.child.pid), `--fsize=${size}:${size}`]);
    proxy.release();
    const answers = await Promise.all(calls);
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200]);
    const hashes = answers.map(transactionOf);
    expect(hashes.every((hash) => /^0x[0-9a-f]{64}$/.test(hash))).toBe(true);
    expect([...(await settledOnChain(paid))].sort()).toEqual([...hashes].sort());
    const refused = await pay(first, { coin: 'ETH', interval: '1h', limit: 3 }, 1); // its claim cannot be written
    expect(refused.status).not.toBe(200);
    expect((await settledOnChain(paid)).length).toBe(hashes.length);

    // Listed all along: in doubt, each with the transaction its caller received.
    const during = await json({ DATA_DIR: dataDir });
    expect(during.payments.filter((p) => p.status === 'settled')).toEqual([]);
    expect(
      during.payments
        .filter((p) => p.status === 'in_doubt')
        .map((p) => [p.errorReason, p.transaction])
        .sort(),
    ).toEqual(hashes.map((hash) => ['settled_not_stored', hash]).sort());
    expect((await readJournals(dataDir)).length).toBe(hashes.length);
    const refusals = first
      .logs()
      .filter((l) => l.msg === 'could not store a settlement outcome; it is journaled and retried until stored');
    expect(refusals.map((l) => l.transaction).sort()).toEqual([...hashes].sort());

    // The process dies; the disk "grows" (no limit for the next one), which replays the journal before serving.
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await serve();
    expect(await second.logged('replayed the settlement journal')).toMatchObject({ outcomes: 3, stored: 3 });
    const after = await json({ DATA_DIR: dataDir });
    expect(after.payments.filter((p) => p.status !== 'settled')).toEqual([]);
    expect(after.payments.map((p) => p.transaction).sort()).toEqual([...(await settledOnChain(paid))].sort());
    expect(await readJournals(dataDir)).toEqual([]);
  });
});
