import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createPublicClient } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';
import { startBatchSettlementEnvironment, type BatchSettlementEnvironment } from '../support/chain/batch-settlement.js';
import { BASE_NETWORK, startBatchParties } from '../support/chain/batch-settlement-parties.js';
import { localTransport, localViemChain } from '../support/chain/token.js';
import { startHoldingProxy, type HoldingProxy } from '../support/held.js';
import { serveFacilitator, type HttpFacilitator } from '../support/http-facilitator.js';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';
import { startHyperliquidLookalike } from '../support/upstreams/hyperliquid.js';
import type { Lookalike } from '../support/upstreams/server.js';

/**
 * `kill -9` of `tollbooth serve` (the built CLI, SQLite) while a voucher call holds its channel, then a restart on
 * the same machine: the restarted server knows the killed process is gone (its claim and reservation name it), so
 * it decides the lost call's claim and frees the channel at once — with a lease and a verify timeout far longer
 * than the test, nothing here waits for them. (test/e2e/batch-kill-reservation.test.ts covers what happens when the
 * holder cannot be judged: the lease lapses.)
 */
const PRICE = 1000n; // annuity and perp-klines: $0.001
const LEASE_SECONDS = 600;
const VERIFY_TIMEOUT_MS = 60_000;
const ANNUITY = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });
const KLINES = JSON.stringify({ coin: 'BTC', interval: '1h', limit: 5 });
const isCandles = (body: unknown) => (body as { type?: unknown } | undefined)?.type === 'candleSnapshot';

let env: BatchSettlementEnvironment;
let facilitator: HttpFacilitator;
let hyperliquid: Lookalike;
let proxy: HoldingProxy;
let dataDir: string;
const spawned: SpawnedServer[] = [];
const authorizerKey = generatePrivateKey();

beforeAll(async () => {
  env = await startBatchSettlementEnvironment(1);
  facilitator = await serveFacilitator((await startBatchParties(env, PRICE)).facilitator);
  hyperliquid = await startHyperliquidLookalike();
  proxy = await startHoldingProxy(hyperliquid.url, isCandles);
  dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-batch-restart-'));
}, 120_000);

afterAll(async () => {
  for (const server of spawned) await server.stop();
  await proxy?.stop();
  await hyperliquid?.stop();
  await facilitator?.close();
  await env?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** `tollbooth serve` on the test's store file, the facilitator over HTTP and perp-klines' upstream behind the proxy. */
async function serve(): Promise<SpawnedServer> {
  const { FACILITATOR_EVM_PRIVATE_KEY: _remote, ...chainEnv } = env.env;
  const server = await spawnServe({
    ...chainEnv,
    FACILITATOR_URL: facilitator.url,
    MPP: 'off',
    BATCH_SETTLEMENT: 'on',
    BATCH_RECEIVER_AUTHORIZER_KEY: authorizerKey,
    BATCH_RESERVATION_LEASE: String(LEASE_SECONDS),
    FACILITATOR_TIMEOUT_MS: String(VERIFY_TIMEOUT_MS),
    HYPERLIQUID_API_URL: proxy.url,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
  });
  spawned.push(server);
  return server;
}

/** The channel and the abandoned-call receipts as the store file holds them, read while no process runs. */
async function stored() {
  const store = await SqliteStore.open(join(dataDir, 'tollbooth.db'));
  try {
    const [channel] = await store.channels!.list();
    const claims = await store.ledger.listStaleClaims(new Date(Date.now() + 1000).toISOString());
    const receipts = await store.ledger.listReceipts({ limit: 20 });
    return {
      channel: channel!,
      claims,
      abandoned: receipts.filter((r) => r.errorReason?.startsWith('abandoned_call')),
    };
  } finally {
    await store.close();
  }
}

describe('a restart on the same machine after kill -9 while a voucher call holds its channel', () => {
  it('decides the killed call at once: its voucher pays the retry and the channel takes the next calls, without waiting for the lease', async () => {
    const account = env.payers[0]!;
    const reader = createPublicClient({ chain: localViemChain(env.chain), transport: localTransport(env.chain) });
    const scheme = new BatchClientScheme(toClientEvmSigner(account, reader), {
      depositStrategy: ({ requestAmount }) => BigInt(requestAmount) * 50n,
    });
    const pay = wrapFetchWithPayment(fetch, new x402Client().register(BASE_NETWORK, scheme));
    const post = (url: string, path: string, body: string) =>
      pay(`${url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });

    const first = await serve();
    expect((await post(first.url, '/api/annuity', ANNUITY)).status).toBe(200);
    const heldAtUpstream = proxy.held();
    const lost = post(first.url, '/api/perp-klines', KLINES).then(
      (res) => res.status,
      () => 'lost',
    );
    await heldAtUpstream;
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(await lost).toBe('lost');

    const left = await stored();
    // Both the claim and the reservation name the killed process, and would hold for minutes by the clock.
    expect(left.channel.pendingRequest?.owner).toMatch(/^proc1:/);
    expect(left.channel.pendingRequest!.expiresAt).toBeGreaterThan(Date.now() + 60_000);
    expect(left.claims).toMatchObject([{ owner: left.channel.pendingRequest!.owner }]);

    const second = await serve();
    // The client sends the lost call's voucher again, then pays on: each paid and answered, none told to wait.
    for (let i = 0; i < 3; i++) expect((await post(second.url, '/api/annuity', ANNUITY)).status).toBe(200);
    second.child.kill('SIGTERM');
    await second.exited;

    const after = await stored();
    expect(after.channel.chargedCumulativeAmount).toBe((4n * PRICE).toString());
    expect(after.channel.pendingRequest).toBeUndefined();
    expect(after.claims).toEqual([]);
    // The killed call's claim ended as failed (nothing was charged for it), its voucher then paying the retry.
    expect(after.abandoned).toMatchObject([{ tool: 'perp-klines', status: 'failed' }]);
  }, 120_000);
});
