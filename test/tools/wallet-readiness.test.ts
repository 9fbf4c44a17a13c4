import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ToolError } from '../../src/shared/errors.js';
import { silentLogger } from '../../src/shared/log.js';
import { createProviders } from '../../src/providers/index.js';
import { walletReadiness } from '../../tools/wallet-readiness.js';
import { testContext } from '../support/context.js';
import { cdpTestKey, startCdpLookalike, type CdpLookalike, type CdpTestKey } from '../support/upstreams/cdp-faucet.js';
import { rpcMethod, startCannedEvmRpc, type EvmRpcProxy } from '../support/upstreams/evm-rpc.js';
import { baseSepoliaEntry } from '../support/chain/token.js';

const ADDRESS = '0x742d35Cc6634C0532925a3b844Bc454e4438f44e';

let rpc: EvmRpcProxy;
let cdp: CdpLookalike;
let key: CdpTestKey;

beforeAll(async () => {
  rpc = await startCannedEvmRpc(
    {
      chainId: 84532,
      balance: 2n * 10n ** 15n,
      tokenBalance: 7_500_000n,
      symbol: 'USDC',
      decimals: 6,
      gasPrice: 1_000_000_000n,
    },
    { slowMs: 1_500 },
  );
  key = cdpTestKey('ec');
  cdp = await startCdpLookalike(key);
});
afterAll(async () => {
  await cdp?.stop();
  await rpc?.stop();
});

function context(env: Record<string, string> = {}) {
  const network = baseSepoliaEntry(rpc.url, 'Base Sepolia (look-alike)');
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    NETWORKS_JSON: JSON.stringify({ networks: [network] }),
    WALLET_READINESS_NETWORKS: 'eip155:84532',
    UPSTREAM_RETRIES: '0',
    UPSTREAM_TIMEOUT_MS: '1000',
    CDP_API_URL: cdp.url,
    CDP_API_KEY_ID: key.keyId,
    CDP_API_KEY_SECRET: key.secret,
    ...env,
  });
  const progress: Array<[number, number, string | undefined]> = [];
  const ctx = testContext({
    providers: createProviders(config, silentLogger),
    progress: (done, total, message) => progress.push([done, total, message]),
  });
  return { ctx, progress };
}

const run = (ctx: ReturnType<typeof context>['ctx'], solanaAddress?: string) =>
  walletReadiness.handler(
    walletReadiness.input.parse({ address: ADDRESS, ...(solanaAddress ? { solanaAddress } : {}) }),
    ctx,
  ) as Promise<{
    pack: string;
    args: Record<string, unknown>;
    steps: Array<{ ok: boolean; slug: string; result: Record<string, unknown> }>;
    summary: string;
  }>;

const step = (out: Awaited<ReturnType<typeof run>>, slug: string) => out.steps.find((s) => s.slug === slug)!;

describe('wallet-readiness', () => {
  it('runs the three steps and reports balances, gas and a working onramp link, with progress per step', async () => {
    const { ctx, progress } = context();
    const out = await run(ctx);
    expect(out).toMatchObject({
      pack: 'wallet-readiness',
      args: { address: ADDRESS, solanaAddress: null },
      summary: '3/3 steps succeeded',
    });
    expect(out.steps.map((s) => s.slug)).toEqual(['wallet-balances', 'gas-snapshot', 'onramp-link']);
    expect(step(out, 'wallet-balances').result).toMatchObject({
      networks: [
        {
          network: 'eip155:84532',
          ok: true,
          native: { symbol: 'ETH', formatted: '0.002' },
          stablecoin: { symbol: 'USDC', raw: '7500000', formatted: '7.5' },
        },
      ],
      stablecoinTotalUsd: '7.5',
    });
    expect(step(out, 'gas-snapshot').result).toMatchObject({
      networks: [
        {
          ok: true,
          gasPriceWei: '1000000000',
          gasPriceGwei: '1',
          stablecoinTransfer: { gas: 65_000, fee: { formatted: '0.000065' } },
        },
      ],
    });
    expect(step(out, 'onramp-link').result).toEqual({
      url: cdp.sessions.at(-1)!.url,
      provider: 'Coinbase Onramp',
      network: 'base',
      asset: 'USDC',
      expiresInSeconds: 300,
    });
    expect(progress[0]).toEqual([0, 3, expect.stringContaining('running')]);
    expect(progress.slice(1).map(([done, total]) => [done, total])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    expect(
      progress
        .slice(1)
        .map(([, , m]) => m)
        .sort(),
    ).toEqual(['gas-snapshot succeeded', 'onramp-link succeeded', 'wallet-balances succeeded']);
  });

  it('still answers when wallet-balances fails: 2/3, with the reason in the failed step', async () => {
    const { ctx } = context();
    rpc.failNext('error200', 1, rpcMethod('eth_getBalance'));
    const out = await run(ctx);
    expect(out.summary).toBe('2/3 steps succeeded');
    expect(step(out, 'wallet-balances')).toMatchObject({
      ok: false,
      result: { code: 'upstream_unavailable', error: expect.stringMatching(/No network answered the balance read/) },
    });
    expect(JSON.stringify(step(out, 'wallet-balances'))).not.toMatch(/not charged/);
  });

  it('still answers when gas-snapshot fails: 2/3', async () => {
    const { ctx } = context();
    rpc.failNext('error200', 1, rpcMethod('eth_gasPrice'));
    const out = await run(ctx);
    expect(out.summary).toBe('2/3 steps succeeded');
    expect(step(out, 'gas-snapshot').ok).toBe(false);
    expect(step(out, 'wallet-balances').ok).toBe(true);
  });

  it('still answers when onramp-link fails, saying why: the onramp needs a server-minted session token', async () => {
    const { ctx } = context({ CDP_API_KEY_ID: '', CDP_API_KEY_SECRET: '' });
    const out = await run(ctx);
    expect(out.summary).toBe('2/3 steps succeeded');
    expect(step(out, 'onramp-link')).toMatchObject({
      ok: false,
      result: { code: 'not_implemented', error: expect.stringMatching(/session token/) },
    });
  });

  it('fails a step that runs past its time limit, and only that step', async () => {
    const { ctx } = context({ WALLET_STEP_TIMEOUT_MS: '300', UPSTREAM_TIMEOUT_MS: '5000' });
    rpc.failNext('slow', 1, rpcMethod('eth_gasPrice'));
    const out = await run(ctx);
    expect(step(out, 'gas-snapshot')).toMatchObject({
      ok: false,
      result: { code: 'upstream_timeout', error: expect.stringMatching(/within 300 ms/) },
    });
    expect(step(out, 'wallet-balances').ok).toBe(true);
    expect(out.summary).toBe('2/3 steps succeeded');
  });

  it('fails the call when all three steps fail', async () => {
    const { ctx } = context();
    rpc.failNext('error200', 1, rpcMethod('eth_getBalance'));
    rpc.failNext('error200', 1, rpcMethod('eth_gasPrice'));
    cdp.failNext('500');
    const err = await run(ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).code).toBe('upstream_unavailable');
    expect((err as ToolError).message).toMatch(/wallet-balances.*gas-snapshot.*Try again in a minute\.$/);
    expect(((err as ToolError).details?.steps as unknown[]).length).toBe(3);
  });

  it('fails the call when both chain steps fail even though the onramp link worked (a link alone is not a readiness report)', async () => {
    const { ctx } = context();
    rpc.failNext('error200', 1, rpcMethod('eth_getBalance'));
    rpc.failNext('error200', 1, rpcMethod('eth_gasPrice'));
    const err = await run(ctx).catch((e: unknown) => e);
    expect((err as ToolError).code).toBe('upstream_unavailable');
  });
});
