import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANDLE_INTERVALS } from '../../../schemas/common.js';
import { loadConfig } from '../../../src/config/config.js';
import { ToolError } from '../../../src/shared/errors.js';
import { silentLogger } from '../../../src/shared/log.js';
import { INTERVAL_MS } from '../../../src/providers/market/hyperliquid.js';
import { createProviders, type Providers } from '../../../src/providers/index.js';
import { infoType, startHyperliquidLookalike } from '../../support/upstreams/hyperliquid.js';
import type { Lookalike } from '../../support/upstreams/server.js';

let lookalike: Lookalike;

beforeAll(async () => {
  lookalike = await startHyperliquidLookalike({ history: { HYPE: 40 } });
});
afterAll(async () => {
  await lookalike?.stop();
});

function providers(env: Record<string, string> = {}): Providers {
  return createProviders(
    loadConfig({ HYPERLIQUID_API_URL: lookalike.url, UPSTREAM_RETRIES: '0', UPSTREAM_TIMEOUT_MS: '2000', ...env }),
    silentLogger,
  );
}

async function failure(promise: Promise<unknown>): Promise<ToolError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return err as ToolError;
}

describe('Hyperliquid perp coin list', () => {
  it('lists the perpetual coins without the delisted ones, and caches the list', async () => {
    const { hyperliquid } = providers();
    const before = lookalike.requests;
    const coins = await hyperliquid.perpCoins();
    expect(coins.data).toContain('BTC');
    expect(coins.data).toContain('kPEPE');
    expect(coins.data).not.toContain('MATIC');
    expect((await hyperliquid.perpCoins()).cached).toBe(true);
    expect(lookalike.requests - before).toBe(1);
  });

  it("resolves a ticker to the exchange's spelling, ignoring case", async () => {
    const { hyperliquid } = providers();
    expect(await hyperliquid.resolveCoin('BTC')).toBe('BTC');
    expect(await hyperliquid.resolveCoin('eth')).toBe('ETH');
    expect(await hyperliquid.resolveCoin('KPEPE')).toBe('kPEPE');
  });

  it('answers an unknown coin with not_found naming valid examples', async () => {
    const { hyperliquid } = providers();
    const err = await failure(hyperliquid.resolveCoin('NOPE'));
    expect(err.code).toBe('not_found');
    expect(err.httpStatus).toBe(404);
    expect(err.field).toBe('coin');
    expect(err.message).toMatch(/"NOPE" is not a perpetual coin on the Hyperliquid info API/);
    expect(err.message).toMatch(/BTC, ETH, SOL/);
    expect(err.details?.examples).toContain('BTC');
    const delisted = await failure(hyperliquid.resolveCoin('matic'));
    expect(delisted.message).toMatch(/"MATIC" is delisted/);
  });

  it('suggests listed coins that contain what was typed', async () => {
    const err = await failure(providers().hyperliquid.resolveCoin('PEPE'));
    expect((err.details?.examples as string[])[0]).toBe('kPEPE');
  });
});

describe('Hyperliquid candles', () => {
  it.each(CANDLE_INTERVALS.map((interval) => [interval]))(
    'returns the latest %s candles oldest first, numbers parsed',
    async (interval) => {
      const { hyperliquid } = providers();
      const limit = 30;
      const before = Date.now();
      const series = await hyperliquid.candles({ coin: 'btc', interval, limit });
      expect(series.coin).toBe('BTC');
      expect(series.interval).toBe(interval);
      expect(series.candles).toHaveLength(limit);
      for (const [i, k] of series.candles.entries()) {
        expect(k.l).toBeLessThanOrEqual(Math.min(k.o, k.c));
        expect(k.h).toBeGreaterThanOrEqual(Math.max(k.o, k.c));
        expect(k.T).toBeGreaterThan(k.t);
        if (i > 0) {
          const gap = k.t - series.candles[i - 1]!.t;
          if (interval === '1M') expect(gap).toBeGreaterThanOrEqual(28 * 86_400_000);
          else expect(gap).toBe(INTERVAL_MS[interval]);
        }
      }
      const newest = series.candles[limit - 1]!;
      expect(newest.t).toBeLessThanOrEqual(Date.now());
      expect(newest.T).toBeGreaterThanOrEqual(before - 1);
    },
  );

  it('returns fewer candles than asked for a coin with a short history', async () => {
    const series = await providers().hyperliquid.candles({ coin: 'HYPE', interval: '1h', limit: 200 });
    expect(series.candles).toHaveLength(40);
  });

  it('serves a repeated request from the cache with the original fetchedAt', async () => {
    const { hyperliquid } = providers();
    const first = await hyperliquid.candles({ coin: 'ETH', interval: '4h', limit: 50 });
    const before = lookalike.requests;
    const second = await hyperliquid.candles({ coin: 'ETH', interval: '4h', limit: 50 });
    expect(second.cached).toBe(true);
    expect(second.fetchedAt).toBe(first.fetchedAt);
    expect(second.candles).toEqual(first.candles);
    expect(lookalike.requests).toBe(before);
  });

  it('sends one meta and one candleSnapshot request for concurrent identical calls', async () => {
    const { hyperliquid } = providers();
    const before = lookalike.requests;
    const all = await Promise.all(
      Array.from({ length: 8 }, () => hyperliquid.candles({ coin: 'SOL', interval: '15m', limit: 100 })),
    );
    expect(new Set(all.map((s) => s.fetchedAt)).size).toBe(1);
    expect(lookalike.requests - before).toBe(2);
  });

  it('answers not_found when the exchange returns null or no candles for a listed coin', async () => {
    const { hyperliquid } = providers();
    await hyperliquid.perpCoins();
    lookalike.failNext('error200', 1, infoType('candleSnapshot'));
    expect((await failure(hyperliquid.candles({ coin: 'BTC', interval: '1d', limit: 10 }))).code).toBe('not_found');
    lookalike.failNext('empty', 1, infoType('candleSnapshot'));
    const empty = await failure(hyperliquid.candles({ coin: 'BTC', interval: '1d', limit: 11 }));
    expect(empty.code).toBe('not_found');
    expect(empty.message).toMatch(/returned no 1d candles for BTC/);
  });

  it('answers upstream_invalid for candles of the wrong shape and for malformed JSON', async () => {
    const { hyperliquid } = providers();
    await hyperliquid.perpCoins();
    lookalike.failNext('mismatch', 1, infoType('candleSnapshot'));
    expect((await failure(hyperliquid.candles({ coin: 'BTC', interval: '1d', limit: 12 }))).code).toBe(
      'upstream_invalid',
    );
    lookalike.failNext('malformed', 1, infoType('candleSnapshot'));
    expect((await failure(hyperliquid.candles({ coin: 'BTC', interval: '1d', limit: 13 }))).code).toBe(
      'upstream_invalid',
    );
  });

  it('answers upstream errors for a failing coin list', async () => {
    const { hyperliquid } = providers();
    lookalike.failNext('500', 1, infoType('meta'));
    expect((await failure(hyperliquid.candles({ coin: 'BTC', interval: '1h', limit: 5 }))).code).toBe(
      'upstream_unavailable',
    );
    lookalike.failNext('mismatch', 1, infoType('meta'));
    expect((await failure(hyperliquid.candles({ coin: 'BTC', interval: '1h', limit: 5 }))).code).toBe(
      'upstream_invalid',
    );
    lookalike.failNext('429', 1, infoType('meta'));
    expect((await failure(hyperliquid.candles({ coin: 'BTC', interval: '1h', limit: 5 }))).code).toBe(
      'upstream_rate_limited',
    );
  });

  it('retries a failing candle request up to UPSTREAM_RETRIES times', async () => {
    const { hyperliquid } = providers({ UPSTREAM_RETRIES: '2' });
    await hyperliquid.perpCoins();
    lookalike.failNext('500', 2, infoType('candleSnapshot'));
    const before = lookalike.requests;
    expect((await hyperliquid.candles({ coin: 'XRP', interval: '1h', limit: 5 })).candles).toHaveLength(5);
    expect(lookalike.requests - before).toBe(3);
  });

  it('answers upstream_timeout when the exchange is too slow', async () => {
    const slow = await startHyperliquidLookalike({ slowMs: 1000 });
    try {
      const { hyperliquid } = createProviders(
        loadConfig({ HYPERLIQUID_API_URL: slow.url, UPSTREAM_RETRIES: '0', UPSTREAM_TIMEOUT_MS: '150' }),
        silentLogger,
      );
      slow.failNext('slow');
      const err = await failure(hyperliquid.candles({ coin: 'BTC', interval: '1h', limit: 5 }));
      expect(err.code).toBe('upstream_timeout');
      expect(err.httpStatus).toBe(504);
    } finally {
      await slow.stop();
    }
  });

  it('rejects an unknown coin from the coin list, without asking for its candles', async () => {
    const before = lookalike.requests;
    const err = await failure(providers().hyperliquid.candles({ coin: 'FOO', interval: '1h', limit: 5 }));
    expect(err.code).toBe('not_found');
    expect(lookalike.requests - before).toBe(1);
  });
});
