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
 * `kill -9` of `tollbooth serve` (the built CLI, SQLite) while a voucher call holds its channel (its upstream request
 * held by a proxy): the dead process's reservation lapses within BATCH_RESERVATION_LEASE, not the scheme's 300 s, and
 * the restarted server takes the same channel's next call at once.
 */
const PRICE = 1000n; // annuity and perp-klines: $0.001
const LEASE_SECONDS = 2;
/** FACILITATOR_TIMEOUT_MS: with the lease, how old a voucher's claim must be before a retry may decide it. */
const VERIFY_TIMEOUT_MS = 2000;
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
  dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-batch-lease-'));
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
async function serve(extra: Record<string, string> = {}): Promise<SpawnedServer> {
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
    ...extra,
  });
  spawned.push(server);
  return server;
}

/** The channel as the store file holds it, read while no process runs. */
async function storedChannel() {
  const store = await SqliteStore.open(join(dataDir, 'tollbooth.db'));
  try {
    const [channel] = await store.channels!.list();
    const receipts = await store.ledger.listReceipts({ limit: 20 });
    return { ...channel!, abandoned: receipts.filter((r) => r.errorReason?.startsWith('abandoned_call')) };
  } finally {
    await store.close();
  }
}

describe('kill -9 while a voucher call holds its channel', () => {
  it('frees the channel within one lease, and the restarted server takes its next call at once', async () => {
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
    // A voucher call whose handler waits on its upstream: its channel is reserved while the process dies.
    const heldAtUpstream = proxy.held();
    const lost = post(first.url, '/api/perp-klines', KLINES).then(
      (res) => res.status,
      () => 'lost',
    );
    await heldAtUpstream;
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    const killedAt = Date.now();
    expect(await lost).toBe('lost');

    const left = await storedChannel();
    expect(left.chargedCumulativeAmount).toBe(PRICE.toString());
    expect(left.pendingRequest).toMatchObject({ signedMaxClaimable: (2n * PRICE).toString() });
    // Renewed at most one lease before the process died: never the scheme's 300 s.
    expect(left.pendingRequest!.expiresAt).toBeLessThanOrEqual(killedAt + LEASE_SECONDS * 1000);
    // Once the reservation lapsed and the dead call's claim is older than a live call can be without its channel
    // (verify timeout + one lease), nothing holds the channel any more.
    const free = Math.max(left.pendingRequest!.expiresAt, killedAt + VERIFY_TIMEOUT_MS + LEASE_SECONDS * 1000);
    await new Promise((resolve) => setTimeout(resolve, free + 100 - Date.now()));

    // A restart with the default STALE_CLAIM_SECONDS: its start-up pass leaves a claim this young alone.
    const second = await serve();
    // The client sends the lost call's voucher again: the claim left by the dead call is decided by the channel on the
    // spot (never charged: released) and the voucher pays this call.
    for (let i = 0; i < 3; i++) expect((await post(second.url, '/api/annuity', ANNUITY)).status).toBe(200);
    second.child.kill('SIGTERM');
    await second.exited;
    const channel = await storedChannel();
    expect(channel.chargedCumulativeAmount).toBe((4n * PRICE).toString());
    expect(channel.pendingRequest).toBeUndefined();
    // The dead call's claim ended as failed (nothing was charged for it), its voucher then paying the retry.
    expect(channel.abandoned).toMatchObject([{ tool: 'perp-klines', status: 'failed' }]);
  }, 120_000);
});
