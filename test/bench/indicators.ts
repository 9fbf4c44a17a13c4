import { performance } from 'node:perf_hooks';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/shared/log.js';
import { createHyperliquidProvider } from '../../src/providers/market/hyperliquid.js';
import type { Providers } from '../../src/providers/index.js';
import { Upstream } from '../../src/providers/upstream.js';
import { cryptoIndicators } from '../../tools/crypto-indicators.js';
import { testContext } from '../support/context.js';
import { startHyperliquidLookalike } from '../support/upstreams/hyperliquid.js';

/** Handler-level timings of crypto-indicators from a warm cache, in milliseconds. */
export interface IndicatorTimings {
  calls: number;
  times: number[];
  /** Upstream requests made after the warm-up (0 = every measured call was served from the cache). */
  upstreamRequestsWhileMeasuring: number;
}

/** crypto-indicators with all indicators on 500 candles, the candles already in the upstream cache. */
export async function measureCryptoIndicators(calls: number): Promise<IndicatorTimings> {
  const lookalike = await startHyperliquidLookalike();
  try {
    const settings = loadConfig({ HYPERLIQUID_API_URL: lookalike.url }).upstreams.hyperliquid;
    // A long TTL so the measured calls all hit the cache however slow the machine is.
    const upstream = new Upstream({ ...settings, cacheTtlMs: 10 * 60_000 }, silentLogger);
    const providers = { hyperliquid: createHyperliquidProvider(upstream) } as Providers;
    const ctx = testContext({ providers });
    const input = cryptoIndicators.input.parse({ coin: 'BTC', interval: '1h', limit: 500 });
    for (let i = 0; i < 20; i++) await cryptoIndicators.handler(input, ctx); // warm-up: fills the cache and the JIT
    const before = upstream.upstreamCalls;
    const times: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      const out = await cryptoIndicators.handler(input, ctx);
      times.push(performance.now() - t0);
      if (out.candles !== 500) throw new Error(`expected 500 candles, got ${out.candles}`);
    }
    return { calls, times, upstreamRequestsWhileMeasuring: upstream.upstreamCalls - before };
  } finally {
    await lookalike.stop();
  }
}
