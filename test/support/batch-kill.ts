/**
 * The scene of the `kill -9` tests of batch settlement (test/e2e/batch-kill-*.test.ts): a local chain with the
 * escrow, the official facilitator over HTTP, perp-klines' upstream behind a proxy that can hold a request (so a
 * voucher call is in flight when the process dies), a data directory for `tollbooth serve` (the built CLI, SQLite),
 * the official client paying, and the store file read back while no process runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createPublicClient } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';
import { startBatchSettlementEnvironment, type BatchSettlementEnvironment } from './chain/batch-settlement.js';
import { BASE_NETWORK, startBatchParties } from './chain/batch-settlement-parties.js';
import { localTransport, localViemChain } from './chain/token.js';
import { startHoldingProxy, type HoldingProxy } from './held.js';
import { serveFacilitator, type HttpFacilitator } from './http-facilitator.js';
import { spawnServe, type SpawnedServer } from './spawn.js';
import { startHyperliquidLookalike } from './upstreams/hyperliquid.js';
import type { Lookalike } from './upstreams/server.js';

/** The price of annuity and perp-klines: $0.001. */
export const PRICE = 1000n;
/** An annuity call's body, and perp-klines' (whose upstream request the proxy can hold). */
export const ANNUITY = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });
export const KLINES = JSON.stringify({ coin: 'BTC', interval: '1h', limit: 5 });

/** The scene: start servers, pay with the official client, read the store file, stop everything. */
export interface KillScene {
  proxy: HoldingProxy;
  serve(): Promise<SpawnedServer>;
  /** A paid POST through the official client (one channel, deposits of 50 calls). */
  post(url: string, path: string, body: string): Promise<Response>;
  /** The channel, the claims still held and the abandoned-call receipts, read while no process runs. */
  stored(): ReturnType<typeof readStore>;
  stop(): Promise<void>;
}

/** Starts the scene; `serve()` runs with BATCH_RESERVATION_LEASE and FACILITATOR_TIMEOUT_MS as given. */
export async function startKillScene(settings: { leaseSeconds: number; verifyTimeoutMs: number }): Promise<KillScene> {
  const env: BatchSettlementEnvironment = await startBatchSettlementEnvironment(1);
  const facilitator: HttpFacilitator = await serveFacilitator((await startBatchParties(env, PRICE)).facilitator);
  const hyperliquid: Lookalike = await startHyperliquidLookalike();
  const isCandles = (body: unknown) => (body as { type?: unknown } | undefined)?.type === 'candleSnapshot';
  const proxy = await startHoldingProxy(hyperliquid.url, isCandles);
  const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-batch-kill-'));
  const spawned: SpawnedServer[] = [];
  const authorizerKey = generatePrivateKey();
  const account = env.payers[0]!;
  const reader = createPublicClient({ chain: localViemChain(env.chain), transport: localTransport(env.chain) });
  const scheme = new BatchClientScheme(toClientEvmSigner(account, reader), {
    depositStrategy: ({ requestAmount }) => BigInt(requestAmount) * 50n,
  });
  const pay = wrapFetchWithPayment(fetch, new x402Client().register(BASE_NETWORK, scheme));
  return {
    proxy,
    async serve() {
      const { FACILITATOR_EVM_PRIVATE_KEY: _remote, ...chainEnv } = env.env;
      const server = await spawnServe({
        ...chainEnv,
        FACILITATOR_URL: facilitator.url,
        MPP: 'off',
        BATCH_SETTLEMENT: 'on',
        BATCH_RECEIVER_AUTHORIZER_KEY: authorizerKey,
        BATCH_RESERVATION_LEASE: String(settings.leaseSeconds),
        FACILITATOR_TIMEOUT_MS: String(settings.verifyTimeoutMs),
        HYPERLIQUID_API_URL: proxy.url,
        DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
      });
      spawned.push(server);
      return server;
    },
    post: (url, path, body) =>
      pay(`${url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } }),
    stored: () => readStore(join(dataDir, 'tollbooth.db')),
    async stop() {
      for (const server of spawned) await server.stop();
      await proxy.stop();
      await hyperliquid.stop();
      await facilitator.close();
      await env.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function readStore(file: string) {
  const store = await SqliteStore.open(file);
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

/**
 * Starts `tollbooth serve`, pays one annuity call, then kills the process (SIGKILL) while a perp-klines voucher call
 * waits at its upstream, so its claim and channel reservation are left behind; resolves with the time of the kill
 * once the process is gone and the call's connection lost.
 */
export async function killDuringVoucherCall(scene: KillScene): Promise<number> {
  const first = await scene.serve();
  const paid = await scene.post(first.url, '/api/annuity', ANNUITY);
  if (paid.status !== 200) throw new Error(`the first call answered ${paid.status}`);
  const heldAtUpstream = scene.proxy.held();
  const lost = scene.post(first.url, '/api/perp-klines', KLINES).then(
    (res) => res.status,
    () => 'lost',
  );
  await heldAtUpstream;
  first.child.kill('SIGKILL');
  const exited = await first.exited;
  const killedAt = Date.now();
  const answer = await lost;
  if (exited !== 'SIGKILL' || answer !== 'lost') throw new Error(`killed: ${String(exited)}, the call: ${answer}`);
  return killedAt;
}
