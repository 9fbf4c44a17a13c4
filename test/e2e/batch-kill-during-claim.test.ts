import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createPublicClient, type Hex } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchOperationKind } from '../../src/payments/batch/kinds.js';
import { pendingOperations } from '../../src/payments/batch/op-ledger.js';
import { ROUND_LEASE_MS } from '../../src/payments/batch/round-lease.js';
import { PostgresStore } from '../../src/store/dialects/postgres/store.js';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';
import type { Store } from '../../src/store/store.js';
import {
  clockAhead,
  startClaimHoldingProxy,
  type ClaimHoldingProxy,
  type ClaimHoldPoint,
} from '../support/batch-claim-hold.js';
import {
  claimedByTransaction,
  readOnchainChannel,
  readReceiverTotals,
  startBatchSettlementEnvironment,
  type BatchSettlementEnvironment,
} from '../support/chain/batch-settlement.js';
import { BASE_NETWORK, startBatchParties } from '../support/chain/batch-settlement-parties.js';
import { localTransport, localViemChain } from '../support/chain/token.js';
import { serveFacilitator, type HttpFacilitator } from '../support/http-facilitator.js';
import { recordSignedVoucher } from '../support/batch-pay.js';
import { createTestSchema, describeWithPostgres } from '../support/postgres.js';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';

/**
 * `kill -9` of `tollbooth serve` (the built CLI, on a SQLite file and on PostgreSQL) while its claim loop's claim transaction is in flight: held by
 * a proxy in front of the facilitator either before the facilitator saw it or after it landed on chain (its answer
 * never reaching the seller). The same store then serves a restart at once while another instance holds the round
 * lease (the claim stays in doubt, calls go on) and a restart past the dead round's lease (its clock 45 s on,
 * test/support/clock-offset.mjs), whose loop closes the abandoned claim and claims and settles the rest.
 */
const PAYERS = 2;
const BEFORE_KILL = 4; // paid calls per payer on the killed process
const AFTER_RESTART = 3; // paid calls per payer on the first restart
const ARGS = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });
const MINUTE = 60_000;
/** Where the claim is held when the seller is killed. */
const POINTS: [ClaimHoldPoint, string][] = [
  ['after-send', 'after the claim landed on chain, before the seller recorded it'],
  ['before-send', 'before the claim reached the facilitator'],
];

/** One payer's official client and the highest cumulative amount it signed, per channel. */
interface Lane {
  account: PrivateKeyAccount;
  pay: typeof fetch;
  signed: Map<string, bigint>;
  ok: number;
}

let env: BatchSettlementEnvironment;
let facilitator: HttpFacilitator;
let proxy: ClaimHoldingProxy;
const authorizerKey = generatePrivateKey();
const spawned: SpawnedServer[] = [];
const dirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];

/** The store one scenario's processes share (a SQLite file under its DATA_DIR, or a PostgreSQL schema), and how the test opens it. */
interface RunStore {
  dataDir: string;
  /** What the server's environment adds (DATABASE_URL for PostgreSQL). */
  env: Record<string, string>;
  open(): Promise<Store>;
}

/** A fresh DATA_DIR for one scenario. */
function freshDir(): string {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-batch-kill-claim-'));
  dirs.push(dataDir);
  return dataDir;
}

/** The stores the scenario runs on: the SQLite file, and a fresh PostgreSQL schema (skipped when none answers). */
const STORES = [
  {
    name: 'SQLite',
    describe,
    prepare: async (): Promise<RunStore> => {
      const dataDir = freshDir();
      return { dataDir, env: {}, open: () => SqliteStore.open(join(dataDir, 'tollbooth.db')) };
    },
  },
  {
    name: 'PostgreSQL',
    describe: describeWithPostgres,
    prepare: async (): Promise<RunStore> => {
      const schema = await createTestSchema('batch_kill_claim');
      cleanups.push(() => schema.drop());
      return { dataDir: freshDir(), env: { DATABASE_URL: schema.url }, open: () => PostgresStore.open(schema.url) };
    },
  },
];

beforeAll(async () => {
  env = await startBatchSettlementEnvironment(PAYERS * POINTS.length * STORES.length);
  facilitator = await serveFacilitator((await startBatchParties(env, 1000n)).facilitator);
  proxy = await startClaimHoldingProxy(facilitator.url);
}, 120_000);

afterAll(async () => {
  for (const server of spawned) await server.stop();
  for (const cleanup of cleanups) await cleanup();
  await proxy?.close();
  await facilitator?.close();
  await env?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A payer whose official client deposits for 100 calls and records the cumulative amount of each voucher it sends. */
function lane(account: PrivateKeyAccount): Lane {
  const reader = createPublicClient({ chain: localViemChain(env.chain), transport: localTransport(env.chain) });
  const scheme = new BatchClientScheme(toClientEvmSigner(account, reader), {
    depositStrategy: ({ requestAmount }) => BigInt(requestAmount) * 100n,
  });
  const signed = new Map<string, bigint>();
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    recordSignedVoucher(signed, request.headers.get('payment-signature'));
    return fetch(request);
  };
  return {
    account,
    signed,
    ok: 0,
    pay: wrapFetchWithPayment(recording, new x402Client().register(BASE_NETWORK, scheme)),
  };
}

/** `count` paid calls of `l` in a row, each answered 200. */
async function pay(l: Lane, url: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await l.pay(`${url}/api/annuity`, {
      method: 'POST',
      body: ARGS,
      headers: { 'content-type': 'application/json' },
    });
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    l.ok++;
  }
}

/** `tollbooth serve` on the run's store, the facilitator behind the proxy, a claim check every ten seconds that claims any charge. */
async function serve(run: RunStore, extra: Record<string, string> = {}): Promise<SpawnedServer> {
  const { FACILITATOR_EVM_PRIVATE_KEY: _remote, ...chainEnv } = env.env;
  const server = await spawnServe({
    ...chainEnv,
    FACILITATOR_URL: proxy.url,
    MPP: 'off',
    BATCH_SETTLEMENT: 'on',
    BATCH_RECEIVER_AUTHORIZER_KEY: authorizerKey,
    BATCH_CLAIM_INTERVAL: '10',
    BATCH_CLAIM_THRESHOLD: '1',
    RATE_LIMIT_IP_PER_MINUTE: '0',
    RATE_LIMIT_PAYER_PER_MINUTE: '0',
    RATE_LIMIT_TOOL_PER_MINUTE: '0',
    DATA_DIR: run.dataDir,
    ...run.env,
    LOG_LEVEL: 'info',
    ...extra,
  });
  spawned.push(server);
  return server;
}

/** Runs `read` on the store file (its own connection, beside a running process or none). */
async function withStore<T>(run: RunStore, read: (store: Store) => Promise<T>): Promise<T> {
  const store = await run.open();
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

/** Polls the store (no deadline) until every channel is claimed up to its charge and no operation is in doubt. */
async function untilClaimedAndSettled(run: RunStore): Promise<void> {
  for (;;) {
    const done = await withStore(run, async (store) => {
      const channels = await store.channels!.list();
      const claimed = channels.every((c) => c.totalClaimed === c.chargedCumulativeAmount);
      const inDoubt = pendingOperations(await store.ledger.listPending());
      const totals = await readReceiverTotals(env.chain, env.payTo, env.token);
      return claimed && inDoubt.length === 0 && totals.totalClaimed === totals.totalSettled;
    });
    if (done) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

for (const [s, kind] of STORES.entries()) {
  kind.describe(`kill -9 of the seller while its claim transaction is in flight (${kind.name} store)`, () => {
    for (const [p, [point, when]] of POINTS.entries()) {
      it(`${when}: claims nothing twice and settles exactly the charges once restarted`, async () => {
        const first = (s * POINTS.length + p) * PAYERS;
        const lanes = env.payers.slice(first, first + PAYERS).map(lane);
        await killDuringClaim(point, lanes, await kind.prepare());
      }, 240_000);
    }
  });
}

/** The scenario: calls, a held claim, `kill -9`, a restart while the round lease is held, a restart past it. */
async function killDuringClaim(point: ClaimHoldPoint, lanes: Lane[], run: RunStore): Promise<void> {
  const payToBefore = await env.balance(env.payTo);
  const first = await serve(run);

  // The test holds the round lease while the payers deposit and pay (one relayer account: no claim beside a
  // deposit), so the loop's first claim after its release takes every charge at once; that claim is held.
  const holding = await withStore(run, async (store) => {
    const lease = Date.now() + 600_000;
    while (!(await store.batchUpkeep!.takeLease('batch-claims', lease, Date.now()))) await sleep(50);
    for (const l of lanes) await pay(l, first.url, 1); // deposits, one after the other
    await Promise.all(lanes.map((l) => pay(l, first.url, BEFORE_KILL - 1)));
    const held = proxy.holdNextClaim(point);
    await store.batchUpkeep!.releaseLease('batch-claims', lease);
    return held;
  });
  const { transaction: landed } = await holding;
  first.child.kill('SIGKILL');
  expect(await first.exited).toBe('SIGKILL');

  const before = lanes.reduce((sum, l) => sum + l.ok, 0);
  /** What the answered calls charged, all of them or those of the killed process (`1`). */
  const charged = (of?: 1) => BigInt(of ? before : lanes.reduce((sum, l) => sum + l.ok, 0)) * 1000n;
  const onchainClaimed = (await readReceiverTotals(env.chain, env.payTo, env.token)).totalClaimed;
  // The dead process left its claim in doubt: one pending claim row for every charge so far.
  const [left] = await withStore(run, async (store) => pendingOperations(await store.ledger.listPending()));
  expect(batchOperationKind(left!.replayKey)).toBe('claim');
  expect(left!.amount).toBe(charged().toString());
  if (point === 'after-send') expect(landed).toMatch(/^0x[0-9a-f]{64}$/);

  // A restart at once, its clock six minutes on: past the mirrors' freshness (five minutes), so the facilitator
  // verifies each channel's next voucher and the store mirrors the claimed total on chain. Meanwhile the test holds
  // the round lease, as another instance running a round would: the restart's loop claims nothing and the dead claim
  // stays in doubt while calls go on. (The dead round's own lease lapsed on the restart's clock: it was held for
  // ROUND_LEASE_MS from its last renewal.)
  const shifted = 6 * MINUTE;
  const other = Date.now() + shifted + 10 * MINUTE;
  await withStore(run, async (store) => {
    expect(await store.batchUpkeep!.takeLease('batch-claims', other, Date.now() + shifted)).toBe(true);
  });
  const second = await serve(run, clockAhead(shifted));
  await Promise.all(lanes.map((l) => pay(l, second.url, AFTER_RESTART)));
  second.child.kill('SIGTERM');
  await second.exited;
  await withStore(run, async (store) => {
    await store.batchUpkeep!.releaseLease('batch-claims', other);
    const stillLeft = pendingOperations(await store.ledger.listPending());
    expect(stillLeft.map((p) => p.replayKey)).toEqual([left!.replayKey]);
    const mirrored = (await store.channels!.list()).reduce((sum, c) => sum + BigInt(c.totalClaimed), 0n);
    expect(mirrored).toBe(point === 'after-send' ? charged(1) : 0n);
  });

  // A restart past the round lease (half a minute after the dead round's last renewal; it was ten minutes before the
  // lease was renewed while held): its loop closes the abandoned claim — recorded with its transaction when it landed
  // (found by the escrow's `Claimed` events), else failed and redone — claims what is unclaimed and settles.
  const third = await serve(run, clockAhead(ROUND_LEASE_MS + 15_000));
  await untilClaimedAndSettled(run);
  expect(third.logs().map((l) => l.msg)).toContain(
    point === 'after-send'
      ? 'a claim left pending by a stopped process landed on chain; recorded with its transaction'
      : 'a batch-settlement operation left pending by a stopped process is closed; this round redoes it',
  );
  third.child.kill('SIGTERM');
  await third.exited;

  await withStore(run, async (store) => {
    const channels = await store.channels!.list();
    expect(channels).toHaveLength(PAYERS);
    for (const l of lanes) {
      const channel = channels.find((c) => c.channelConfig.payer.toLowerCase() === l.account.address.toLowerCase())!;
      const highest = l.signed.get(channel.channelId.toLowerCase())!;
      // Every answered call charged once; on chain, the channel's claimed total is its charge, never above a voucher.
      expect(BigInt(channel.chargedCumulativeAmount)).toBe(BigInt(l.ok) * 1000n);
      expect(BigInt(channel.chargedCumulativeAmount)).toBeLessThanOrEqual(highest);
      const onchain = await readOnchainChannel(env.chain, channel.channelId as Hex);
      expect(onchain.totalClaimed).toBe(BigInt(channel.chargedCumulativeAmount));
    }
    // The pay-to received exactly the charges; the receiver's claims on chain are all settled.
    expect(await env.balance(env.payTo)).toBe(payToBefore + charged());
    const totals = await readReceiverTotals(env.chain, env.payTo, env.token);
    expect(totals.totalSettled).toBe(totals.totalClaimed);
    expect(totals.totalClaimed - onchainClaimed).toBe(
      point === 'after-send' ? charged() - BigInt(left!.amount) : charged(),
    );

    // The ledger: the in-flight claim closed once (named by the transaction that landed, or abandoned when none
    // did: the earlier scenario's unanswered claim on this chain, same receiver, other channels, is not named),
    // nothing in doubt, no transaction recorded twice, and the settled settles add up to what the pay-to got.
    expect(pendingOperations(await store.ledger.listPending())).toEqual([]);
    const ops = (await store.ledger.listReceipts({ limit: 1000 })).filter((r) => r.tool === 'batch-settlement');
    expect(ops.filter((r) => r.replayKey === left!.replayKey)).toMatchObject([
      point === 'after-send'
        ? { kind: 'claim', status: 'settled', transaction: landed!.toLowerCase(), amount: left!.amount }
        : { kind: 'claim', status: 'failed', errorReason: 'claim_abandoned', amount: left!.amount },
    ]);
    const settled = ops.filter((r) => r.status === 'settled');
    const hashes = settled.map((r) => r.transaction);
    expect(new Set(hashes).size).toBe(hashes.length);
    const sum = (kind: string) => settled.filter((r) => r.kind === kind).reduce((s, r) => s + BigInt(r.amount), 0n);
    expect(sum('settle')).toBe(charged());
    // Each recorded claim claimed on chain what it says, and together they cover every charge exactly once (the
    // claim that landed unanswered among them).
    for (const claim of settled.filter((r) => r.kind === 'claim'))
      expect(await claimedByTransaction(env.chain, env.payTo, claim.transaction as Hex)).toBe(BigInt(claim.amount));
    expect(sum('claim')).toBe(charged());
  });
}
