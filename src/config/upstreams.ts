/** The market and open-data upstreams: their labels, default base URLs and caches, and the settings read from the environment. */
import type { Env } from './env.js';
import type { UpstreamSettings } from '../providers/upstream.js';

/** The upstreams the market and open-data endpoints read from. */
export type UpstreamId =
  'hyperliquid' | 'stablecoins' | 'yields' | 'worldbank' | 'kalshi' | 'goplus' | 'dexscreener' | 'smm';

/** Label, default base URL, cache TTL and cache size of each upstream (the URLs are the defaults in docs/operators.md#configuration). */
export const UPSTREAM_DEFAULTS: Record<
  UpstreamId,
  { label: string; baseUrl: string; cacheTtlMs: number; cacheMaxEntries: number }
> = {
  hyperliquid: {
    label: 'Hyperliquid info API',
    baseUrl: 'https://api.hyperliquid.xyz',
    cacheTtlMs: 5_000,
    cacheMaxEntries: 500,
  },
  stablecoins: {
    label: 'DefiLlama stablecoins API',
    baseUrl: 'https://stablecoins.llama.fi',
    cacheTtlMs: 10 * 60_000,
    cacheMaxEntries: 20,
  },
  yields: {
    label: 'DefiLlama yields API',
    baseUrl: 'https://yields.llama.fi',
    cacheTtlMs: 10 * 60_000,
    cacheMaxEntries: 5,
  },
  worldbank: {
    label: 'World Bank Indicators API',
    baseUrl: 'https://api.worldbank.org/v2',
    cacheTtlMs: 60 * 60_000,
    cacheMaxEntries: 500,
  },
  kalshi: {
    label: 'Kalshi Trade API',
    baseUrl: 'https://api.elections.kalshi.com/trade-api/v2',
    cacheTtlMs: 30_000,
    cacheMaxEntries: 500,
  },
  goplus: {
    label: 'GoPlus token security API',
    baseUrl: 'https://api.gopluslabs.io/api/v1',
    cacheTtlMs: 10 * 60_000,
    cacheMaxEntries: 2_000,
  },
  dexscreener: {
    label: 'DexScreener API',
    baseUrl: 'https://api.dexscreener.com',
    cacheTtlMs: 60_000,
    cacheMaxEntries: 2_000,
  },
  // No default panel: the operator names one (SMM_PANEL_URL, the panel's `/api/v2` endpoint).
  smm: { label: 'marketing panel', baseUrl: '', cacheTtlMs: 10 * 60_000, cacheMaxEntries: 500 },
};

/** Each upstream's settings: its base URL (the `*_API_URL` / `*_URL` setting, else the default), timeout, retries and cache. */
export function upstreamSettings(env: Env): Record<UpstreamId, UpstreamSettings> {
  const urls: Record<UpstreamId, string | undefined> = {
    hyperliquid: env.HYPERLIQUID_API_URL,
    stablecoins: env.DEFILLAMA_STABLECOINS_URL,
    yields: env.DEFILLAMA_YIELDS_URL,
    worldbank: env.WORLDBANK_API_URL,
    kalshi: env.KALSHI_API_URL,
    goplus: env.GOPLUS_API_URL,
    dexscreener: env.DEXSCREENER_API_URL,
    smm: env.SMM_PANEL_URL,
  };
  const timeoutMs = env.UPSTREAM_TIMEOUT_MS ?? 8_000;
  const retries = env.UPSTREAM_RETRIES ?? 2;
  const ids = Object.keys(UPSTREAM_DEFAULTS) as UpstreamId[];
  return Object.fromEntries(
    ids.map((name) => {
      const { baseUrl, ...rest } = UPSTREAM_DEFAULTS[name];
      return [
        name,
        Object.freeze({ name, ...rest, baseUrl: (urls[name] ?? baseUrl).replace(/\/+$/, ''), timeoutMs, retries }),
      ];
    }),
  ) as Record<UpstreamId, UpstreamSettings>;
}
