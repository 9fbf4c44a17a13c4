import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ToolError } from '../../src/shared/errors.js';
import { silentLogger } from '../../src/shared/log.js';
import { createProviders, type Providers } from '../../src/providers/index.js';
import { perpKlines } from '../../tools/perp-klines.js';
import { testContext } from '../support/context.js';
import { infoType, startHyperliquidLookalike } from '../support/upstreams/hyperliquid.js';
import type { Lookalike } from '../support/upstreams/server.js';

let lookalike: Lookalike;
let providers: Providers;

beforeAll(async () => {
  lookalike = await startHyperliquidLookalike();
  providers = createProviders(loadConfig({ HYPERLIQUID_API_URL: lookalike.url, UPSTREAM_RETRIES: '0' }), silentLogger);
});
afterAll(async () => {
  await lookalike?.stop();
});

const run = async (input: Record<string, unknown>) =>
  perpKlines.handler(perpKlines.input.parse(input), testContext({ providers }));

describe('perp-klines handler', () => {
  it('returns the exchange candles oldest first with trade counts and a summary of the window', async () => {
    const out = await run({ coin: 'ETH', interval: '4h', limit: 48 });
    expect(perpKlines.output.safeParse(out).error).toBeUndefined();
    const upstream = await providers.hyperliquid.candles({ coin: 'ETH', interval: '4h', limit: 48 });
    expect(upstream.cached).toBe(true);
    expect(out).toMatchObject({
      source: 'Hyperliquid info API',
      coin: 'ETH',
      interval: '4h',
      count: 48,
      fetchedAt: upstream.fetchedAt,
    });
    expect(out.candles).toEqual(
      upstream.candles.map((k) => ({ t: k.t, o: k.o, h: k.h, l: k.l, c: k.c, v: k.v, trades: k.n })),
    );
    let [high, low, volume] = [-Infinity, Infinity, 0];
    for (const k of upstream.candles) {
      high = Math.max(high, k.h);
      low = Math.min(low, k.l);
      volume += k.v;
    }
    const open = upstream.candles[0]!.o;
    const close = upstream.candles[47]!.c;
    expect(out.summary).toEqual({ open, close, high, low, volume, changePct: ((close - open) / open) * 100 });
  });

  it('uses the defaults of the specification: 100 candles of 1h', async () => {
    const out = await run({ coin: 'BTC' });
    expect(out).toMatchObject({ coin: 'BTC', interval: '1h', count: 100 });
    expect(out.candles[1]!.t - out.candles[0]!.t).toBe(3_600_000);
  });

  it("answers with the exchange's spelling of a coin typed in another case", async () => {
    expect((await run({ coin: 'kpepe', limit: 3 })).coin).toBe('kPEPE');
  });

  it('answers an unknown coin with not_found naming valid examples', async () => {
    const err = await run({ coin: 'DOESNOTEXIST' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).code).toBe('not_found');
    expect((err as ToolError).message).toMatch(/Use a listed ticker such as BTC, ETH/);
  });

  it('passes upstream failures on as errors, never a half-filled answer', async () => {
    lookalike.failNext('mismatch', 1, infoType('candleSnapshot'));
    const err = await run({ coin: 'SOL', limit: 7 }).catch((e: unknown) => e);
    expect((err as ToolError).code).toBe('upstream_invalid');
  });
});
