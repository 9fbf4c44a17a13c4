import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { x402Client } from '@x402/core/client';
import type { PaymentRequired } from '@x402/core/types';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createPublicClient } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pendingOperations } from '../../src/payments/batch/op-ledger.js';
import { PostgresStore } from '../../src/store/dialects/postgres/store.js';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';
import type { Store } from '../../src/store/store.js';
import { claimLoopForServer } from '../support/batch-claims.js';
import {
  readOnchainChannel,
  startBatchSettlementEnvironment,
  type BatchSettlementEnvironment,
} from '../support/chain/batch-settlement.js';
import { BASE_NETWORK, startBatchParties } from '../support/chain/batch-settlement-parties.js';
import { localTransport, localViemChain } from '../support/chain/token.js';
import { serveFacilitator, type HttpFacilitator } from '../support/http-facilitator.js';
import { createTestSchema, describeWithPostgres } from '../support/postgres.js';
import { recordSignedVoucher } from '../support/batch-pay.js';
import { decodeHeader } from '../support/server.js';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';

/**
 * `kill -9` of `tollbooth serve` (the built CLI; once on its SQLite file, once on a PostgreSQL schema) while several official clients pay by voucher, each on
 * its own channel; then a restart on the same store and more calls. Each payer's signed vouchers are read off the
 * wire (the PAYMENT-SIGNATURE header the official client sends), so the test knows the highest one it signed.
 */
const PAYERS = 4;
const BEFORE_KILL = 40; // paid answers, all payers together, before the kill
const AFTER_RESTART = 5; // calls per payer on the restarted server
const ARGS = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });
/** BATCH_RESERVATION_LEASE: a dead process's reservation lapses within it (a live one renews its calls'). */
const LEASE_SECONDS = 2;

/** One payer's official client, what it signed and what it was answered. */
interface Lane {
  account: PrivateKeyAccount;
  pay: typeof fetch;
  /** The highest `maxClaimableAmount` of every voucher it sent, by channel. */
  signed: Map<string, bigint>;
  ok: number;
  /** Paid requests whose answer never came (the process died under them, or was already dead). */
  lost: number;
  statuses: number[];
  /** Paid requests answered 402 (the corrective 402 when the server's channel state was ahead of the client's). */
  corrected: { count: number };
}

/** The store one run's processes share, and how the test opens it while no process runs. */
interface RunStore {
  /** What the server's environment adds (DATABASE_URL for PostgreSQL; nothing for the SQLite file under DATA_DIR). */
  env: Record<string, string>;
  open(): Promise<Store>;
}

/** The stores the scenario runs on: the SQLite file, and a fresh PostgreSQL schema (skipped when none answers). */
const STORES = [
  {
    name: 'SQLite',
    describe,
    prepare: async (): Promise<RunStore> => ({ env: {}, open: () => SqliteStore.open(join(dataDir, 'tollbooth.db')) }),
  },
  {
    name: 'PostgreSQL',
    describe: describeWithPostgres,
    prepare: async (): Promise<RunStore> => {
      const schema = await createTestSchema('batch_kill9');
      cleanups.push(() => schema.drop());
      return { env: { DATABASE_URL: schema.url }, open: () => PostgresStore.open(schema.url) };
    },
  },
];

let env: BatchSettlementEnvironment;
let facilitator: HttpFacilitator;
let dataDir: string;
const authorizerKey = generatePrivateKey();
const spawned: SpawnedServer[] = [];
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  // Each run has its own payers: their channels (keyed by payer, receiver and authorizer) are new in each store.
  env = await startBatchSettlementEnvironment(PAYERS * STORES.length);
  facilitator = await serveFacilitator((await startBatchParties(env, 1000n)).facilitator);
  dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-batch-kill9-'));
}, 120_000);

afterAll(async () => {
  for (const server of spawned) await server.stop();
  for (const cleanup of cleanups) await cleanup();
  await facilitator?.close();
  await env?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** The server's environment: batch settlement on, the facilitator over HTTP, the run's store that outlives the process. */
function serverEnv(store: RunStore): Record<string, string> {
  const { FACILITATOR_EVM_PRIVATE_KEY: _remote, ...chainEnv } = env.env;
  return {
    ...chainEnv,
    ...store.env,
    FACILITATOR_URL: facilitator.url,
    MPP: 'off',
    BATCH_SETTLEMENT: 'on',
    BATCH_RECEIVER_AUTHORIZER_KEY: authorizerKey,
    RATE_LIMIT_IP_PER_MINUTE: '0',
    RATE_LIMIT_PAYER_PER_MINUTE: '0',
    RATE_LIMIT_TOOL_PER_MINUTE: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    BATCH_RESERVATION_LEASE: String(LEASE_SECONDS),
  };
}

/** A payer whose official client deposits for 200 calls at once and records each voucher it sends. */
function lane(account: PrivateKeyAccount): Lane {
  const reader = createPublicClient({ chain: localViemChain(env.chain), transport: localTransport(env.chain) });
  const scheme = new BatchClientScheme(toClientEvmSigner(account, reader), {
    depositStrategy: ({ requestAmount }) => BigInt(requestAmount) * 200n,
  });
  const signed = new Map<string, bigint>();
  const corrected = { count: 0 };
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const header = request.headers.get('payment-signature');
    recordSignedVoucher(signed, header);
    const res = await fetch(request);
    if (header && res.status === 402) corrected.count++;
    return res;
  };
  const pay = wrapFetchWithPayment(recording, new x402Client().register(BASE_NETWORK, scheme));
  return { account, pay, signed, corrected, ok: 0, lost: 0, statuses: [] };
}

/**
 * What the dead process left, per the store: the payers whose channel a call of it still reserves (and when the last
 * of those reservations lapses), and how many payments it had claimed for calls that never ended.
 */
async function leftByTheDead(run: RunStore): Promise<{ held: Set<string>; until: number; claims: number }> {
  const store = await run.open();
  try {
    const now = Date.now();
    const channels = await store.channels!.list();
    const held = channels.filter((c) => c.pendingRequest && c.pendingRequest.expiresAt > now);
    const claims = await store.ledger.listStaleClaims(new Date(now + 1000).toISOString());
    const until = Math.max(now, ...held.map((c) => c.pendingRequest!.expiresAt));
    return { held: new Set(held.map((c) => c.channelConfig.payer.toLowerCase())), until, claims: claims.length };
  } finally {
    await store.close();
  }
}

/** One paid call of `lane` to `url`: false when the answer was lost. */
async function call(lane: Lane, url: string): Promise<boolean> {
  try {
    const res = await lane.pay(`${url}/api/annuity`, {
      method: 'POST',
      body: ARGS,
      headers: { 'content-type': 'application/json' },
    });
    await res.arrayBuffer();
    lane.statuses.push(res.status);
    if (res.status === 200) lane.ok++;
    return true;
  } catch {
    lane.lost++;
    return false;
  }
}

for (const [index, kind] of STORES.entries()) {
  kind.describe(`kill -9 of the server while official clients pay by voucher (${kind.name} store)`, () => {
    it('charges no call twice and claims no more than any payer signed', async () => {
      const run = await kind.prepare();
      await killUnderVouchers(env.payers.slice(index * PAYERS, (index + 1) * PAYERS).map(lane), run);
    }, 240_000);
  });
}

/** The scenario on one store: load, `kill -9`, restart, more calls, then the store's and the chain's account. */
async function killUnderVouchers(lanes: Lane[], run: RunStore): Promise<void> {
  const first = await spawnServe(serverEnv(run));
  spawned.push(first);
  const probe = await fetch(`${first.url}/api/annuity`, {
    method: 'POST',
    body: ARGS,
    headers: { 'content-type': 'application/json' },
  });
  expect(probe.status, first.stderr()).toBe(402);
  const entry = (decodeHeader(probe.headers.get('payment-required')) as PaymentRequired).accepts.find(
    (a) => a.scheme === 'batch-settlement',
  )!;
  const price = BigInt(entry.amount);

  // Each payer deposits in turn (the facilitator relays from one account), then all pay at once in a loop until
  // the process dies under them.
  for (const l of lanes) expect(await call(l, first.url)).toBe(true);
  const running = lanes.map(async (l) => {
    while (await call(l, first.url));
  });
  const answered = () => lanes.reduce((sum, l) => sum + l.ok, 0);
  while (answered() < BEFORE_KILL) await new Promise((r) => setTimeout(r, 20));
  first.child.kill('SIGKILL');
  expect(await first.exited).toBe('SIGKILL');
  const killedAt = Date.now();
  await Promise.all(running);

  // What the dead process left (read while no process runs); the new one decides its claims at start. Its
  // reservations were renewed at most one lease before it died: none holds its channel longer than that (the scheme
  // alone would hold one for 300 s). Once they lapsed, every channel is free again.
  const { held, until, claims } = await leftByTheDead(run);
  expect(until).toBeLessThanOrEqual(killedAt + LEASE_SECONDS * 1000);
  await new Promise((r) => setTimeout(r, Math.max(1_100, until + 100 - Date.now()))); // and older than STALE_CLAIM_SECONDS=1

  // The same store, a new process: every payer goes on paying on the channel it has, the ones the dead process's
  // calls reserved too (their claims were decided at start: never charged → released, charged → spent).
  const second = await spawnServe({ ...serverEnv(run), STALE_CLAIM_SECONDS: '1' });
  spawned.push(second);
  const decided = (l: Record<string, unknown>) => /^(reconciled pending|payments still in doubt)/.test(String(l.msg));
  while (claims > 0 && !second.logs().some(decided)) await new Promise((r) => setTimeout(r, 20));
  for (const l of lanes) {
    for (let i = 0; i < AFTER_RESTART; i++) expect(await call(l, second.url)).toBe(true);
    expect(l.statuses.slice(-AFTER_RESTART)).toEqual(Array(AFTER_RESTART).fill(200));
  }
  second.child.kill('SIGTERM');
  await second.exited;

  const store = await run.open();
  try {
    const channels = await store.channels!.list();
    expect(channels).toHaveLength(PAYERS);
    // In doubt are at most the calls whose channel the dead process's reservation still held at the restart (each
    // payer's one call); the restart decided the others; no claim, settle or refund was under way.
    const pending = await store.ledger.listPending();
    expect(pending.length).toBeLessThanOrEqual(held.size);
    for (const p of pending) expect(held.has(p.payer.toLowerCase())).toBe(true);
    expect(pendingOperations(pending)).toEqual([]);
    for (const l of lanes) {
      const channel = channels.find((c) => c.channelConfig.payer.toLowerCase() === l.account.address.toLowerCase())!;
      const highest = l.signed.get(channel.channelId.toLowerCase())!;
      const charged = BigInt(channel.chargedCumulativeAmount);
      // Never more than the payer signed; every answered call charged once, at most the lost ones besides.
      expect(charged).toBeLessThanOrEqual(highest);
      expect(BigInt(channel.signedMaxClaimable)).toBeLessThanOrEqual(highest);
      expect(charged % price).toBe(0n);
      expect(charged / price).toBeGreaterThanOrEqual(BigInt(l.ok));
      expect(charged / price).toBeLessThanOrEqual(BigInt(l.ok + l.lost));
      // A client behind the server (its paid answer lost) resynchronised from one corrective 402, then paid on.
      expect(l.corrected.count).toBeLessThanOrEqual(l.lost);
    }

    // One claim round over the store: on chain, each channel's claimed total is its charge, under its vouchers.
    const loop = await claimLoopForServer(env, authorizerKey, store, facilitator.url);
    const [round] = (await loop.tick())!;
    const total = channels.reduce((sum, c) => sum + BigInt(c.chargedCumulativeAmount), 0n);
    expect(round).toMatchObject({ claimed: total, failures: [] });
    // The claim and the settle are receipts with their transactions, none left pending in the operation ledger.
    const operations = (await store.ledger.listReceipts({ limit: 1000 })).filter((r) => r.tool === 'batch-settlement');
    expect(operations.map((r) => `${r.kind}:${r.status}:${r.amount}`).sort()).toEqual([
      `claim:settled:${total}`,
      `settle:settled:${total}`,
    ]);
    const hashes = [round!.settleTransaction!, ...round!.claimTransactions];
    expect(operations.map((r) => r.transaction).sort()).toEqual(hashes.sort());
    expect(pendingOperations(await store.ledger.listPending())).toEqual([]);
    for (const l of lanes) {
      const channel = channels.find((c) => c.channelConfig.payer.toLowerCase() === l.account.address.toLowerCase())!;
      const onchain = await readOnchainChannel(env.chain, channel.channelId as `0x${string}`);
      expect(onchain.totalClaimed).toBe(BigInt(channel.chargedCumulativeAmount));
      expect(onchain.totalClaimed).toBeLessThanOrEqual(l.signed.get(channel.channelId.toLowerCase())!);
    }
  } finally {
    await store.close();
  }
}
