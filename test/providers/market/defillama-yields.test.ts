import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createYieldsProvider, rankPools } from '../../../src/providers/market/defillama-yields.js';
import type { Lookalike } from '../../support/upstreams/server.js';
import { toolFailure, upstreamFor } from '../../support/upstreams/open-data.js';
import { generatePools, startYieldsLookalike, type PoolRow } from '../../support/upstreams/yields.js';

const POOLS = generatePools(3_000, 7);
let lookalike: Lookalike;
beforeAll(async () => {
  lookalike = await startYieldsLookalike({ pools: POOLS, slowMs: 3_000 });
});
afterAll(async () => {
  await lookalike?.stop();
});

/**
 * A provider with its own cache; its timeout is generous (a loaded machine takes more than 250 ms to serve and parse
 * 3,000 pools, and a timed-out first fetch is retried: two requests where one is expected) but for the slow case.
 */
const fresh = (timeoutMs = 10_000) => createYieldsProvider(upstreamFor('yields', lookalike.url, { timeoutMs }));
const pool = (over: Partial<PoolRow>): PoolRow => ({ ...POOLS[10]!, ...over });

describe('the DefiLlama yields provider', () => {
  it('keeps every multi-token pool with a TVL and an APY, ranked by TVL, largest first', async () => {
    const provider = fresh();
    expect(provider.source).toBe('DefiLlama yields API');
    const { data } = await provider.pools();
    expect(data.upstreamRows).toBe(POOLS.length);
    const expected = POOLS.filter(
      (p) => p.exposure === 'multi' && (p.apy !== null || p.apyBase !== null || p.apyReward !== null),
    );
    expect(data.pools).toHaveLength(expected.length);
    for (let i = 1; i < data.pools.length; i++)
      expect(data.pools[i - 1]!.row.tvlUsd).toBeGreaterThanOrEqual(data.pools[i]!.row.tvlUsd);
    const top = data.pools[0]!.row;
    const source = POOLS.find((p) => p.pool === top.pool)!;
    expect(top).toEqual({
      pool: source.pool,
      chain: source.chain,
      project: source.project,
      symbol: source.symbol,
      tvlUsd: Math.round(source.tvlUsd),
      apy: source.apy,
    });
  });

  it('leaves out single-token positions (lending, staking)', async () => {
    const { data } = await fresh().pools();
    const single = new Set(POOLS.filter((p) => p.exposure === 'single').map((p) => p.pool));
    expect(single.size).toBeGreaterThan(0);
    expect(data.pools.some((p) => single.has(p.row.pool))).toBe(false);
  });

  it('falls back to base plus reward APY when the total is missing, and drops a pool with no APY at all', () => {
    const ranking = rankPools([
      pool({ pool: 'a', exposure: 'multi', tvlUsd: 10.6, apy: null, apyBase: 3.25, apyReward: null }),
      pool({ pool: 'b', exposure: 'multi', tvlUsd: 20, apy: null, apyBase: 1, apyReward: 2.5 }),
      pool({ pool: 'c', exposure: 'multi', tvlUsd: 30, apy: null, apyBase: null, apyReward: null }),
    ]);
    expect(ranking.pools.map((p) => [p.row.pool, p.row.apy, p.row.tvlUsd])).toEqual([
      ['b', 3.5, 20],
      ['a', 3.25, 11],
    ]);
  });

  it('indexes chains case-insensitively and lists them by total TVL', () => {
    const ranking = rankPools([
      pool({ pool: 'a', chain: 'Base', exposure: 'multi', tvlUsd: 5 }),
      pool({ pool: 'b', chain: 'Ethereum', exposure: 'multi', tvlUsd: 3 }),
      pool({ pool: 'c', chain: 'Ethereum', exposure: 'multi', tvlUsd: 4 }),
    ]);
    expect(ranking.chainLabels.get('ethereum')).toBe('Ethereum');
    expect(ranking.chainsByTvl).toEqual(['Ethereum', 'Base']);
    expect(ranking.pools[0]).toMatchObject({ chainKey: 'base', projectKey: POOLS[10]!.project.toLowerCase() });
  });

  it('fetches the list once, ranks it once, and serves the same ranking from the cache', async () => {
    const provider = fresh();
    const before = lookalike.requests;
    const first = await provider.pools();
    const second = await provider.pools();
    expect(second.cached).toBe(true);
    expect(second.data).toBe(first.data);
    expect(lookalike.requests).toBe(before + 1);
  });

  it('shares one upstream request among concurrent callers', async () => {
    const provider = fresh();
    const before = lookalike.requests;
    const results = await Promise.all(Array.from({ length: 8 }, () => provider.pools()));
    expect(lookalike.requests).toBe(before + 1);
    expect(new Set(results.map((r) => r.data)).size).toBe(1);
  });

  const failures = [
    ['an HTTP 200 answer whose status is not "success"', 'error200', 1, 'upstream_unavailable'],
    ['an empty pool list', 'empty', 1, 'upstream_unavailable'],
    ['TVL in the wrong type', 'mismatch', 1, 'upstream_invalid'],
    ['truncated JSON', 'malformed', 1, 'upstream_invalid'],
    ['HTTP 500 on every attempt', '500', 2, 'upstream_unavailable'],
    ['HTTP 429 on every attempt', '429', 2, 'upstream_rate_limited'],
    ['no answer within the timeout', 'slow', 2, 'upstream_timeout'],
  ] as const;
  for (const [label, mode, times, code] of failures) {
    it(`answers ${label} with ${code} and caches nothing`, async () => {
      const provider = fresh(mode === 'slow' ? 1_000 : undefined);
      lookalike.failNext(mode, times);
      const err = await toolFailure(provider.pools());
      expect(err.code).toBe(code);
      expect(err.message).toMatch(/DefiLlama yields API.*Try again/);
      expect((await provider.pools()).cached).toBe(false);
    });
  }
});
