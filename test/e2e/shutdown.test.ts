import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/shared/log.js';
import { openStore } from '../../src/store/open.js';
import { startHoldingProxy, type HoldingProxy } from '../support/held.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader } from '../support/server.js';
import { spawnServe, spawnStdio, type SpawnedServer, type SpawnedStdio } from '../support/spawn.js';
import { startHyperliquidLookalike } from '../support/upstreams/hyperliquid.js';
import type { Lookalike } from '../support/upstreams/server.js';

const ARGS = { coin: 'BTC', interval: '1h', limit: 5 };
const isCandles = (body: unknown) => (body as { type?: unknown } | undefined)?.type === 'candleSnapshot';

let paid: PaidEnvironment;
let hyperliquid: Lookalike;
let proxy: HoldingProxy;
let running: { stop(): Promise<void> } | undefined;
beforeAll(async () => {
  paid = await startPaidEnvironment(3);
  hyperliquid = await startHyperliquidLookalike();
}, 120_000);
afterEach(async () => {
  await running?.stop();
  await proxy?.stop();
});
afterAll(async () => {
  await hyperliquid?.stop();
  await paid?.stop();
});

/** Where perp-klines' candles come from: the look-alike behind a proxy that holds candle requests until released. */
async function environment(dataDir: string): Promise<Record<string, string>> {
  proxy = await startHoldingProxy(hyperliquid.url, isCandles);
  return {
    ...paid.env,
    HYPERLIQUID_API_URL: proxy.url,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    SHUTDOWN_TIMEOUT_MS: '60000',
  };
}

function freshRequest(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    get(url + '/healthz', { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

async function storedReceipts(dataDir: string) {
  const store = await openStore(loadConfig({ DATA_DIR: dataDir }), silentLogger);
  try {
    return await store.ledger.listReceipts();
  } finally {
    await store.close();
  }
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('SIGTERM in the middle of a paid call (the built CLI)', () => {
  it('serve: refuses new connections, finishes the call, settles it exactly once, stores the receipt and exits 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-sigterm-'));
    const server: SpawnedServer = await spawnServe(await environment(dataDir));
    running = { stop: async () => (await server.stop(), rmSync(dataDir, { recursive: true, force: true })) };
    const probe = await fetch(server.url + '/api/perp-klines', { method: 'POST' });
    const entry = (decodeHeader(probe.headers.get('payment-required')) as PaymentRequired).accepts.find(
      (a) => a.network === LOCAL_NETWORK,
    ) as PaymentRequirements;
    const payer = paid.payers[0]!;
    const before = await paid.balance(payer.address);
    const payment = encodePayment(await signExactPayment(payer, entry));

    const held = proxy.held();
    const call = fetch(server.url + '/api/perp-klines', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': payment },
      body: JSON.stringify(ARGS),
    });
    await held;
    server.child.kill('SIGTERM');
    await server.logged('shutting down');
    expect(await freshRequest(server.url)).toBe('ECONNREFUSED');

    proxy.release();
    const res = await call;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { count: number }).count).toBe(5);
    expect((decodeHeader(res.headers.get('payment-response')) as { success: boolean }).success).toBe(true);
    expect(await server.exited).toBe(0);
    expect(await paid.balance(payer.address)).toBe(before - BigInt(entry.amount));
    expect(await storedReceipts(dataDir)).toMatchObject([
      { tool: 'perp-klines', status: 'settled', payer: payer.address, transport: 'http' },
    ]);
    const line = server.logs().filter((l) => l.msg === 'paid call' && l.outcome === 'settled');
    expect(line).toMatchObject([
      { tool: 'perp-klines', network: LOCAL_NETWORK, amount: entry.amount, payer: payer.address },
    ]);
    expect(server.logs().find((l) => l.msg === 'stopped')).toMatchObject({ drained: true });
  });

  it('stdio: answers the running call with its receipt, settles it once and exits 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-sigterm-stdio-'));
    const stdio: SpawnedStdio = await spawnStdio(await environment(dataDir));
    running = { stop: async () => (await stdio.stop(), rmSync(dataDir, { recursive: true, force: true })) };
    const unpaid = await stdio.client.callTool({ name: 'perp-klines', arguments: ARGS });
    const entry = (unpaid.structuredContent as unknown as PaymentRequired).accepts.find(
      (a) => a.network === LOCAL_NETWORK,
    )!;
    const payer = paid.payers[1]!;
    const before = await paid.balance(payer.address);
    const payment = await signExactPayment(payer, entry);

    const held = proxy.held();
    const call = stdio.client.callTool({ name: 'perp-klines', arguments: ARGS, _meta: { 'x402/payment': payment } });
    await held;
    stdio.child.kill('SIGTERM');
    await until(() => stdio.stderr().includes('"msg":"shutting down"'));
    proxy.release();
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect((result._meta?.['x402/payment-response'] as { success: boolean }).success).toBe(true);
    expect(await stdio.exited).toBe(0);
    expect(await paid.balance(payer.address)).toBe(before - BigInt(entry.amount));
    expect(await storedReceipts(dataDir)).toMatchObject([{ tool: 'perp-klines', status: 'settled', transport: 'mcp' }]);
  });

  it('stdio: exits 0 when its client closes stdin', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-stdin-'));
    const stdio = await spawnStdio({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    running = { stop: async () => (await stdio.stop(), rmSync(dataDir, { recursive: true, force: true })) };
    expect((await stdio.client.listTools()).tools.length).toBeGreaterThan(0);
    stdio.child.stdin!.end();
    expect(await stdio.exited).toBe(0);
    expect(stdio.stderr()).toContain('"reason":"stdin closed"');
  });
});
