import { performance } from 'node:perf_hooks';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/shared/log.js';
import { createYieldsProvider } from '../../src/providers/market/defillama-yields.js';
import type { Providers } from '../../src/providers/index.js';
import { Upstream } from '../../src/providers/upstream.js';
import { dexTopPools } from '../../tools/dex-top-pools.js';
import { testContext } from '../support/context.js';
import { startYieldsLookalike } from '../support/upstreams/yields.js';

/** Handler-level timings of dex-top-pools over a cached list, in milliseconds, per query shape and overall. */
export interface DexTopPoolsTimings {
  pools: number;
  calls: number;
  times: number[];
  byQuery: Record<string, number[]>;
  /** Upstream requests made after the warm-up (0 = every measured call was served from the cache). */
  upstreamRequestsWhileMeasuring: number;
  /** The one upstream fetch: download, JSON parse, schema check and ranking of the whole list. */
  coldFetchMs: number;
}

/**
 * Query shapes from cheapest to dearest: the default top 10; limit 50; a big chain; a small chain (walks most of the
 * list before 50 matches); a project substring on one chain.
 */
const QUERIES: Record<string, Record<string, unknown>> = {
  'all chains, top 10': {},
  'all chains, top 50': { limit: 50 },
  'chain=ethereum, top 50': { chain: 'ethereum', limit: 50 },
  'chain=Ton, top 50': { chain: 'Ton', limit: 50 },
  'chain=base project=aero': { chain: 'base', project: 'aero', limit: 50 },
};

/** dex-top-pools over a ~20k-pool list already in the provider's cache (one upstream fetch before measuring). */
export async function measureDexTopPools(calls: number, poolCount = 20_000): Promise<DexTopPoolsTimings> {
  const lookalike = await startYieldsLookalike({ poolCount });
  try {
    const settings = loadConfig({ DEFILLAMA_YIELDS_URL: lookalike.url }).upstreams.yields;
    // A long TTL and timeout so the measured calls all hit the cache however slow the machine is.
    const upstream = new Upstream({ ...settings, cacheTtlMs: 10 * 60_000, timeoutMs: 60_000 }, silentLogger);
    const ctx = testContext({ providers: { yields: createYieldsProvider(upstream) } as Providers });
    const inputs = Object.entries(QUERIES).map(([name, body]) => [name, dexTopPools.input.parse(body)] as const);
    const t0 = performance.now();
    await dexTopPools.handler(inputs[0]![1], ctx);
    const coldFetchMs = performance.now() - t0;
    for (let i = 0; i < 50; i++) for (const [, input] of inputs) await dexTopPools.handler(input, ctx); // JIT warm-up
    const before = upstream.upstreamCalls;
    const byQuery: Record<string, number[]> = {};
    const times: number[] = [];
    for (let i = 0; i < calls; i++) {
      const [name, input] = inputs[i % inputs.length]!;
      const start = performance.now();
      const out = await dexTopPools.handler(input, ctx);
      const ms = performance.now() - start;
      if (out.count < 1) throw new Error(`expected pools for ${name}`);
      times.push(ms);
      (byQuery[name] ??= []).push(ms);
    }
    return {
      pools: poolCount,
      calls,
      times,
      byQuery,
      upstreamRequestsWhileMeasuring: upstream.upstreamCalls - before,
      coldFetchMs,
    };
  } finally {
    await lookalike.stop();
  }
}
