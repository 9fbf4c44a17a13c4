import { z } from 'zod';
import { ToolError } from '../../shared/errors.js';
import type { CandleInterval } from '../../../schemas/candles.js';
import type { Fetched, Upstream } from '../upstream.js';

/** One OHLCV candle with numbers parsed from the exchange's decimal strings. */
export interface Candle {
  /** Open time, unix ms. */
  t: number;
  /** Close time, unix ms. */
  T: number;
  o: number;
  h: number;
  l: number;
  c: number;
  /** Volume in base-asset units. */
  v: number;
  /** Number of trades. */
  n: number;
}

/** The most recent candles of one coin and interval, oldest first. */
export interface CandleSeries {
  /** The exchange's spelling of the coin (e.g. `kPEPE`). */
  coin: string;
  interval: CandleInterval;
  candles: Candle[];
  /** When the candles were fetched from the exchange (ISO-8601; kept on cache hits). */
  fetchedAt: string;
  cached: boolean;
}

/** What a candle request names. */
export interface CandleQuery {
  coin: string;
  interval: CandleInterval;
  /** How many of the most recent candles (1–500). */
  limit: number;
  signal?: AbortSignal;
}

/** Candles and the perpetual coin list from the Hyperliquid info API. */
export interface HyperliquidProvider {
  /** Value of `source` fields for data from this provider: the upstream's label, e.g. `Hyperliquid info API`. */
  readonly source: string;
  /** Names of the listed (not delisted) perpetual coins, cached. */
  perpCoins(signal?: AbortSignal): Promise<Fetched<string[]>>;
  /** The exchange's spelling of a perpetual coin (exact, else case-insensitive); not_found naming valid examples. */
  resolveCoin(coin: string, signal?: AbortSignal): Promise<string>;
  /** The `limit` most recent candles, oldest first; the newest may still be forming. */
  candles(query: CandleQuery): Promise<CandleSeries>;
}

/** Length of each candle interval in ms (1M counted as 31 days: only used to size the requested window). */
export const INTERVAL_MS: Record<CandleInterval, number> = {
  '1m': 60_000,
  '3m': 3 * 60_000,
  '5m': 5 * 60_000,
  '15m': 15 * 60_000,
  '30m': 30 * 60_000,
  '1h': 3_600_000,
  '2h': 2 * 3_600_000,
  '4h': 4 * 3_600_000,
  '8h': 8 * 3_600_000,
  '12h': 12 * 3_600_000,
  '1d': 86_400_000,
  '3d': 3 * 86_400_000,
  '1w': 7 * 86_400_000,
  '1M': 31 * 86_400_000,
};

/** The coin list changes rarely; candles use the upstream's default TTL. */
const META_TTL_MS = 10 * 60_000;
const PREFERRED_EXAMPLES = ['BTC', 'ETH', 'SOL', 'HYPE', 'XRP', 'DOGE'];

const decimal = z
  .union([z.string().regex(/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/, 'must be a decimal string'), z.number()])
  .transform(Number)
  .pipe(z.number().finite());

const MetaSchema = z.object({
  universe: z.array(
    z.object({
      name: z.string().min(1),
      szDecimals: z.number().int(),
      maxLeverage: z.number(),
      isDelisted: z.boolean().optional(),
    }),
  ),
});

const CandleSnapshotSchema = z.array(
  z.object({
    t: z.number().int(),
    T: z.number().int(),
    s: z.string(),
    i: z.string(),
    o: decimal,
    h: decimal,
    l: decimal,
    c: decimal,
    v: decimal,
    n: z.number().int().nonnegative(),
  }),
);

type Universe = z.infer<typeof MetaSchema>['universe'];

/** The exchange's spelling of `coin` in the coin list (exact, else case-insensitive); not_found naming examples. */
function coinInUniverse(coin: string, universe: Universe, label: string): string {
  const wanted = coin.trim();
  const active = universe.filter((u) => u.isDelisted !== true).map((u) => u.name);
  if (active.includes(wanted)) return wanted;
  const folded = active.filter((name) => name.toLowerCase() === wanted.toLowerCase());
  if (folded.length === 1) return folded[0]!;
  const delisted = universe.find((u) => u.isDelisted === true && u.name.toLowerCase() === wanted.toLowerCase());
  const similar = active
    .filter((name) => wanted.length >= 2 && name.toLowerCase().includes(wanted.toLowerCase()))
    .slice(0, 5);
  const examples = [...new Set([...similar, ...PREFERRED_EXAMPLES.filter((n) => active.includes(n)), ...active])].slice(
    0,
    8,
  );
  const why = delisted
    ? `"${delisted.name}" is delisted on the ${label}`
    : `"${wanted}" is not a perpetual coin on the ${label}`;
  throw new ToolError(
    'not_found',
    `${why} (${active.length} coins are listed). Use a listed ticker such as ${examples.join(', ')}.`,
    { field: 'coin', details: { examples } },
  );
}

/** The `candleSnapshot` request: a window of `limit` candles aligned to the interval, so one candle shares a cache key. */
function candleRequest(coin: string, interval: CandleInterval, limit: number, nowMs: number) {
  const step = INTERVAL_MS[interval];
  const bucket = Math.floor(nowMs / step) * step;
  return { coin, interval, startTime: bucket - limit * step, endTime: bucket + step - 1 };
}

/** Builds the Hyperliquid provider over its upstream client (`POST /info`). */
export function createHyperliquidProvider(upstream: Upstream, now: () => number = Date.now): HyperliquidProvider {
  const label = upstream.info.label;

  async function meta(signal?: AbortSignal) {
    return upstream.request({
      method: 'POST',
      path: '/info',
      body: { type: 'meta' },
      schema: MetaSchema,
      ttlMs: META_TTL_MS,
      signal,
    });
  }

  async function perpCoins(signal?: AbortSignal): Promise<Fetched<string[]>> {
    const fetched = await meta(signal);
    return { ...fetched, data: fetched.data.universe.filter((u) => u.isDelisted !== true).map((u) => u.name) };
  }

  async function resolveCoin(coin: string, signal?: AbortSignal): Promise<string> {
    const { data } = await meta(signal);
    return coinInUniverse(coin, data.universe, label);
  }

  async function candles(query: CandleQuery): Promise<CandleSeries> {
    const coin = await resolveCoin(query.coin, query.signal);
    const req = candleRequest(coin, query.interval, query.limit, now());
    const fetched = await upstream.request({
      method: 'POST',
      path: '/info',
      body: { type: 'candleSnapshot', req },
      schema: CandleSnapshotSchema,
      signal: query.signal,
      interpret: (status, json) =>
        status === 200 && json === null
          ? new ToolError(
              'not_found',
              `The ${label} has no ${query.interval} candles for ${coin}; try another coin or interval.`,
              { field: 'coin' },
            )
          : undefined,
    });
    if (fetched.data.length === 0) {
      throw new ToolError(
        'not_found',
        `The ${label} returned no ${query.interval} candles for ${coin} yet; try a shorter interval or again later.`,
        { field: 'interval' },
      );
    }
    const series = fetched.data
      .map(({ t, T, o, h, l, c, v, n }) => ({ t, T, o, h, l, c, v, n }))
      .sort((a, b) => a.t - b.t)
      .slice(-query.limit);
    return { coin, interval: query.interval, candles: series, fetchedAt: fetched.fetchedAt, cached: fetched.cached };
  }

  return { source: label, perpCoins, resolveCoin, candles };
}
