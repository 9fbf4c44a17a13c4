import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStablecoinsProvider } from '../../../src/providers/market/defillama-stablecoins.js';
import type { Lookalike } from '../../support/upstreams/server.js';
import { toolFailure, upstreamFor } from '../../support/upstreams/open-data.js';
import { FX_FIXTURE, STABLECOIN_FIXTURE, startStablecoinsLookalike } from '../../support/upstreams/stablecoins.js';

let lookalike: Lookalike;
beforeAll(async () => {
  lookalike = await startStablecoinsLookalike({ slowMs: 400 });
});
afterAll(async () => {
  await lookalike?.stop();
});

const fresh = () => createStablecoinsProvider(upstreamFor('stablecoins', lookalike.url, { timeoutMs: 250 }));
const spec = (symbol: string) => STABLECOIN_FIXTURE.find((c) => c.symbol === symbol)!;
const sum = (xs: Array<number | null>) => xs.reduce<number>((s, x) => s + (x ?? 0), 0);

describe('the DefiLlama stablecoins provider', () => {
  it('names the upstream and normalises every asset: supply now and at the previous day, week and month', async () => {
    const provider = fresh();
    expect(provider.source).toBe('DefiLlama stablecoins API');
    const { data } = await provider.market();
    expect(data.assets).toHaveLength(STABLECOIN_FIXTURE.length);
    const usdc = data.assets.find((a) => a.symbol === 'USDC')!;
    const chains = Object.values(spec('USDC').chains);
    expect(usdc).toMatchObject({
      id: '2',
      name: 'USD Coin',
      geckoId: 'usd-coin',
      pegType: 'peggedUSD',
      pegCurrency: 'USD',
      pegMechanism: 'fiat-backed',
      price: 0.9998,
    });
    expect(usdc.supply.current).toBeCloseTo(sum(chains.map((c) => c[0])), 0);
    expect(usdc.supply.prevDay).toBeCloseTo(sum(chains.map((c) => c[1])), 0);
    expect(usdc.supply.prevMonth).toBeCloseTo(sum(chains.map((c) => c[3])), 0);
    expect(usdc.chains.map((c) => c.chain)).toEqual(['Ethereum', 'Solana', 'Base', 'Arbitrum', 'Polygon', 'Avalanche']);
    expect(usdc.chains[0]!.supply).toEqual({ current: 46.1e9, prevDay: 45.9e9, prevWeek: 45.2e9, prevMonth: 46.6e9 });
  });

  it('reads the peg currency from the peg type and keeps a missing price as null', async () => {
    const { data } = await fresh().market();
    expect(data.assets.find((a) => a.symbol === 'EURC')).toMatchObject({ pegType: 'peggedEUR', pegCurrency: 'EUR' });
    expect(data.assets.find((a) => a.symbol === 'FPI')).toMatchObject({ pegCurrency: 'VAR' });
    expect(data.assets.find((a) => a.symbol === 'BUCK')!.price).toBeNull();
  });

  it('treats previous records written as {} and as the number 0 alike: no record, null', async () => {
    const { data } = await fresh().market();
    const usdg = data.assets.find((a) => a.symbol === 'USDG')!;
    expect(usdg.supply).toMatchObject({ prevDay: null, prevWeek: null, prevMonth: null });
    const ustc = data.assets.find((a) => a.symbol === 'USTC')!;
    expect(ustc.supply.prevDay).not.toBeNull();
    expect(ustc.chains.find((c) => c.chain === 'Ethereum')!.supply).toMatchObject({
      prevDay: null,
      prevWeek: null,
      prevMonth: null,
    });
    const buck = data.assets.find((a) => a.symbol === 'BUCK')!;
    expect(buck.supply.prevWeek).toBeNull();
  });

  it('indexes chain labels case-insensitively and totals the market in USD as the upstream does', async () => {
    const { data } = await fresh().market();
    expect(data.chainLabels.get('bsc')).toBe('BSC');
    expect(data.chainLabels.get('hyperliquid l1')).toBe('Hyperliquid L1');
    let expected = 0;
    for (const coin of STABLECOIN_FIXTURE) {
      const unit = coin.price ?? (coin.pegType === 'peggedUSD' ? 1 : 0);
      for (const [now] of Object.values(coin.chains)) expected += now * unit;
    }
    expect(data.totalCirculatingUsd).toBeCloseTo(expected, -2);
    expect(data.chainsByUsd.slice(0, 2)).toEqual(['Ethereum', 'Tron']);
  });

  it('turns the newest FX snapshot into the USD value of one unit of each currency', async () => {
    const { data } = await fresh().usdRates();
    expect(data.get('USD')).toBe(1);
    expect(data.get('EUR')).toBeCloseTo(1 / FX_FIXTURE.EUR!, 12);
    expect(data.get('JPY')).toBeCloseTo(1 / FX_FIXTURE.JPY!, 12);
  });

  it('fetches the list once and serves it from the cache with the original fetch time', async () => {
    const provider = fresh();
    const before = lookalike.requests;
    const first = await provider.market();
    const second = await provider.market();
    expect(first.cached).toBe(false);
    expect(second.cached).toBe(true);
    expect(second.fetchedAt).toBe(first.fetchedAt);
    expect(lookalike.requests).toBe(before + 1);
  });

  it('refuses an empty list as an upstream failure and does not cache it', async () => {
    const provider = fresh();
    lookalike.failNext('empty');
    expect((await toolFailure(provider.market())).code).toBe('upstream_unavailable');
    const again = await provider.market();
    expect(again.cached).toBe(false);
    expect(again.data.assets.length).toBeGreaterThan(0);
  });

  // Retryable modes fail both attempts (retries: 1); the others are not retried.
  const failures = [
    ['an HTTP 200 error object', 'error200', 1, 'upstream_invalid'],
    ['amounts in the wrong type', 'mismatch', 1, 'upstream_invalid'],
    ['truncated JSON', 'malformed', 1, 'upstream_invalid'],
    ['HTTP 500 on every attempt', '500', 2, 'upstream_unavailable'],
    ['HTTP 429 on every attempt', '429', 2, 'upstream_rate_limited'],
    ['no answer within the timeout', 'slow', 2, 'upstream_timeout'],
  ] as const;
  for (const [label, mode, times, code] of failures) {
    it(`answers ${label} with ${code}`, async () => {
      lookalike.failNext(mode, times);
      const err = await toolFailure(fresh().market());
      expect(err.code).toBe(code);
      expect(err.message).toMatch(/DefiLlama stablecoins API/);
      expect(err.message).toMatch(/Try again/);
    });
  }
});
