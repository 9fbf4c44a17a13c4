import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { readJournals } from '../../src/payments/ledger/settled-journal.js';
import { defineTool, type AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { createTestSchema, describeWithPostgres, TEST_DATABASE_URL, type TestSchema } from '../support/postgres.js';
import { json } from '../support/receipts.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { settledOnChain } from '../support/settlements.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const ARGS = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
/** How many calls are caught between their handler and their settlement when the link to PostgreSQL is cut. */
const CAUGHT = 3;

let paid: PaidEnvironment;
let schema: TestSchema;
let proxy: TcpProxy;
let server: TestServer;
let gate: { open: () => void; started: number };

/** A paid tool whose handlers wait at a gate the test opens. */
function gatedTool(): AnyToolDefinition {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  gate = { open, started: 0 };
  return defineTool({
    name: 'gated',
    title: 'gated',
    description: 'Test tool that waits for the test.',
    group: 'tools',
    method: 'POST',
    path: '/api/test/gated',
    input: z.object({}),
    output: z.object({ done: z.boolean() }),
    pricing: { usd: '0.001', accepts: 'every-network' },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async () => {
      gate.started++;
      await opened;
      return { done: true };
    },
  }) as AnyToolDefinition;
}

/** The DATABASE_URL of the schema, through the proxy. */
function throughProxy(url: string, port: number): string {
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);
  return proxied.toString();
}

async function entryOf(path: string): Promise<PaymentRequirements> {
  const res = await fetch(server.url + path, { method: 'POST' });
  return (decodeHeader(res.headers.get('payment-required')) as PaymentRequired).accepts.find(
    (a) => a.network === LOCAL_NETWORK,
  )!;
}

/** Pays one call; resolves with the transaction of its PAYMENT-RESPONSE ('' when it was not answered 200). */
async function payOnce(path: string, payer: number, body: unknown): Promise<string> {
  const payment = await signExactPayment(paid.payers[payer]!, await entryOf(path));
  const res = await fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body: JSON.stringify(body),
  }).catch(() => undefined);
  if (!res) return '';
  await res.arrayBuffer();
  if (res.status !== 200) return '';
  return (decodeHeader(res.headers.get('payment-response')) as { transaction: string }).transaction;
}

/** What `tollbooth receipts` (direct to PostgreSQL, with the server's DATA_DIR) lists, by transaction. */
async function listed(): Promise<{ settled: string[]; inDoubt: string[]; inDoubtCount: number }> {
  const report = await json({ DATABASE_URL: schema.url, DATA_DIR: server.dataDir }, '--limit', '100000');
  const of = (status: string) => report.payments.filter((p) => p.status === status);
  return {
    settled: of('settled').map((p) => p.transaction),
    inDoubt: of('in_doubt')
      .map((p) => p.transaction)
      .filter(Boolean),
    inDoubtCount: of('in_doubt').length,
  };
}

/**
 * Every transfer on chain so far is listed: settled with its hash, in doubt with its hash (journaled), or in doubt
 * as a claim still being settled (its outcome not back from the facilitator yet when the listing read it).
 */
async function everySettlementListed(): Promise<void> {
  const chain = await settledOnChain(paid);
  const seen = await listed();
  const known = new Set([...seen.settled, ...seen.inDoubt]);
  const unlisted = chain.filter((hash) => !known.has(hash));
  expect(unlisted.length).toBeLessThanOrEqual(seen.inDoubtCount - seen.inDoubt.length);
}

describeWithPostgres('a PostgreSQL outage under paid load', () => {
  beforeAll(async () => {
    paid = await startPaidEnvironment(3);
    schema = await createTestSchema('tollbooth_outage');
    const target = new URL(TEST_DATABASE_URL);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    server = await startTestServer(
      { ...paid.env, DATABASE_URL: throughProxy(schema.url, proxy.port), SHUTDOWN_TIMEOUT_MS: '20000' },
      { tools: [gatedTool(), annuity as unknown as AnyToolDefinition] },
    );
  }, 120_000);
  afterAll(async () => {
    proxy?.restore();
    await server?.close();
    await proxy?.stop();
    await schema?.drop();
    await paid?.stop();
  });

  it('keeps every settled payment listed during the outage and ends with receipts equal to the chain', async () => {
    const load = { running: true, answered: [] as string[] };
    const loop = async (payer: number) => {
      while (load.running) load.answered.push(await payOnce('/api/annuity', payer, ARGS));
    };
    const loops = [loop(0), loop(1)];
    const caught = Array.from({ length: CAUGHT }, () => payOnce('/api/test/gated', 2, {}));
    while (gate.started < CAUGHT) await new Promise((resolve) => setTimeout(resolve, 20));

    proxy.cut();
    gate.open(); // the caught calls settle on chain now, while their receipts cannot be stored
    const hashes = await Promise.all(caught);
    expect(hashes.every((hash) => /^0x[0-9a-f]{64}$/.test(hash))).toBe(true);
    // The store never had these receipts: they are listed in doubt, with the transactions the callers received.
    const during = await listed();
    expect(during.inDoubt).toEqual(expect.arrayContaining(hashes));
    expect(during.settled.filter((hash) => hashes.includes(hash))).toEqual([]);
    await everySettlementListed();
    const journal = await readJournals(server.dataDir);
    expect(journal.map((e) => (e.type === 'settled' ? e.receipt.transaction : ''))).toEqual(
      expect.arrayContaining(hashes),
    );
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(Number(/^tollbooth_payments_in_doubt (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(CAUGHT);
    expect(Number(/^tollbooth_settlement_journal_entries (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(CAUGHT);
    await everySettlementListed();

    proxy.restore();
    await new Promise((resolve) => setTimeout(resolve, 500)); // paid load runs on after the store is back
    load.running = false;
    await Promise.all(loops);
    while (server.runtime.serverDeps.broker.outbox.size > 0) await new Promise((resolve) => setTimeout(resolve, 50));

    const [chain, after] = await Promise.all([settledOnChain(paid), listed()]);
    expect(after.settled.every((hash) => /^0x[0-9a-f]{64}$/.test(hash))).toBe(true);
    expect([...after.settled].sort()).toEqual([...chain].sort());
    expect(after.inDoubtCount).toBe(0);
    expect(load.answered.filter(Boolean).length).toBeGreaterThan(0);
    expect(chain).toEqual(expect.arrayContaining([...hashes, ...load.answered.filter(Boolean)]));
    expect(await readJournals(server.dataDir)).toEqual([]);
  });
});
