import { z } from 'zod';
import { ToolError } from '../../shared/errors.js';
import type { Fetched, Upstream } from '../upstream.js';

/** FX rates change daily upstream (openexchangerates snapshots), so they are kept longer than the asset list. */
export const FX_RATES_TTL_MS = 6 * 60 * 60_000;

/** Amounts keyed by peg type (`peggedUSD`, `peggedEUR`, …); a value may be null upstream. */
const PegAmountsSchema = z.record(z.string(), z.number().nullable());

/**
 * A previous-day/week/month amount: an object like `circulating`, or `{}` / the number `0` when the upstream has
 * no record for that time (both forms occur in the upstream's code). Normalised to an object.
 */
const PreviousSchema = z
  .union([PegAmountsSchema, z.number()])
  .optional()
  .transform((v): Record<string, number | null> => (typeof v === 'object' ? v : {}));

const ChainCirculatingSchema = z.object({
  current: PegAmountsSchema,
  circulatingPrevDay: PreviousSchema,
  circulatingPrevWeek: PreviousSchema,
  circulatingPrevMonth: PreviousSchema,
});

const PeggedAssetSchema = z.object({
  id: z.union([z.string(), z.number()]).transform(String),
  name: z.string(),
  symbol: z.string(),
  gecko_id: z.string().nullable().optional(),
  pegType: z.string().regex(/^pegged[A-Z]{2,8}$/, 'must look like peggedUSD'),
  pegMechanism: z.string(),
  circulating: PegAmountsSchema,
  circulatingPrevDay: PreviousSchema,
  circulatingPrevWeek: PreviousSchema,
  circulatingPrevMonth: PreviousSchema,
  chainCirculating: z.record(z.string(), ChainCirculatingSchema),
  price: z.number().nullable().optional(),
});

/** Supply now and at the upstream's previous day/week/month records (null where there is no record). */
export interface SupplyHistory {
  current: number;
  prevDay: number | null;
  prevWeek: number | null;
  prevMonth: number | null;
}

/** One stablecoin as the tool works with it: supply in peg-currency units, price in USD. */
export interface StablecoinAsset {
  id: string;
  name: string;
  symbol: string;
  geckoId: string | null;
  /** Upstream peg type, e.g. `peggedUSD`. */
  pegType: string;
  /** Peg currency code, e.g. `USD` (the peg type without its `pegged` prefix). */
  pegCurrency: string;
  pegMechanism: string;
  /** Market price in USD, or null when the upstream has none. */
  price: number | null;
  supply: SupplyHistory;
  /** Supply per chain (display label), largest first; chains with no positive supply are left out. */
  chains: Array<{ chain: string; supply: SupplyHistory }>;
  /** Lower-cased `name symbol`, for case-insensitive search. */
  searchText: string;
}

/** The stablecoin list, normalised once when it is fetched (the cached value). */
export interface StablecoinMarket {
  assets: StablecoinAsset[];
  /** Market total in USD as the upstream computes it (sum of its per-chain USD totals over every peg). */
  totalCirculatingUsd: number;
  /** Lower-cased chain label → the label as the upstream writes it. */
  chainLabels: Map<string, string>;
  /** Chain labels by total circulating USD, largest first (examples for error messages). */
  chainsByUsd: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const positiveOrNull = (v: number | null | undefined): number | null => (typeof v === 'number' && v > 0 ? v : null);

function history(
  pegType: string,
  current: Record<string, number | null>,
  prev: Record<'day' | 'week' | 'month', Record<string, number | null>>,
): SupplyHistory {
  return {
    current: current[pegType] ?? 0,
    prevDay: positiveOrNull(prev.day[pegType]),
    prevWeek: positiveOrNull(prev.week[pegType]),
    prevMonth: positiveOrNull(prev.month[pegType]),
  };
}

function toAsset(raw: z.output<typeof PeggedAssetSchema>): StablecoinAsset {
  const { pegType } = raw;
  const chains = Object.entries(raw.chainCirculating)
    .map(([chain, c]) => ({
      chain,
      supply: history(pegType, c.current, {
        day: c.circulatingPrevDay,
        week: c.circulatingPrevWeek,
        month: c.circulatingPrevMonth,
      }),
    }))
    .filter((c) => c.supply.current > 0)
    .sort((a, b) => b.supply.current - a.supply.current);
  return {
    id: raw.id,
    name: raw.name,
    symbol: raw.symbol,
    geckoId: raw.gecko_id ?? null,
    pegType,
    pegCurrency: pegType.slice('pegged'.length),
    pegMechanism: raw.pegMechanism,
    price: raw.price ?? null,
    supply: history(pegType, raw.circulating, {
      day: raw.circulatingPrevDay,
      week: raw.circulatingPrevWeek,
      month: raw.circulatingPrevMonth,
    }),
    chains,
    searchText: `${raw.name} ${raw.symbol}`.toLowerCase(),
  };
}

/** `GET /stablecoins`: validated, then normalised into a StablecoinMarket (once per fetch, not per call). */
const StablecoinsResponseSchema = z
  .object({
    peggedAssets: z.array(PeggedAssetSchema),
    chains: z.array(z.object({ name: z.string(), totalCirculatingUSD: PegAmountsSchema })),
  })
  .transform((body): StablecoinMarket => {
    const assets = body.peggedAssets.map(toAsset);
    const chainLabels = new Map<string, string>();
    for (const asset of assets) for (const { chain } of asset.chains) chainLabels.set(chain.toLowerCase(), chain);
    const chainTotals = body.chains.map((c) => ({
      name: c.name,
      usd: Object.values(c.totalCirculatingUSD).reduce<number>((s, v) => s + (v ?? 0), 0),
    }));
    return {
      assets,
      totalCirculatingUsd: chainTotals.reduce((s, c) => s + c.usd, 0),
      chainLabels,
      chainsByUsd: chainTotals.sort((a, b) => b.usd - a.usd).map((c) => c.name),
    };
  });

/**
 * `GET /rates`: daily FX snapshots `[{date, rates: {USD: 1, EUR: 0.92, …}}]` (units per US dollar). Normalised to the
 * USD value of one unit of each currency, from the newest snapshot.
 */
const RatesResponseSchema = z
  .array(z.object({ date: z.union([z.number(), z.string()]), rates: z.record(z.string(), z.number().nullable()) }))
  .min(1, 'must hold at least one snapshot')
  .transform((snapshots): Map<string, number> => {
    const newest = snapshots.reduce((a, b) => (Number(b.date) > Number(a.date) ? b : a));
    const perUsd = newest.rates.USD ?? 1;
    const usdPerUnit = new Map<string, number>();
    for (const [currency, units] of Object.entries(newest.rates)) {
      if (typeof units === 'number' && units > 0) usdPerUnit.set(currency.toUpperCase(), perUsd / units);
    }
    usdPerUnit.set('USD', 1);
    return usdPerUnit;
  });

/** Stablecoin supply and prices from the DefiLlama stablecoins API. */
export interface StablecoinsProvider {
  /** Name of the upstream, for `source` fields. */
  readonly source: string;
  /** Every stablecoin with supply history and per-chain supply (cached for the upstream's TTL). */
  market(signal?: AbortSignal): Promise<Fetched<StablecoinMarket>>;
  /** USD value of one unit of each currency (for non-USD pegs), from the newest daily FX snapshot. */
  usdRates(signal?: AbortSignal): Promise<Fetched<Map<string, number>>>;
}

/** Creates the stablecoins provider on its upstream client. */
export function createStablecoinsProvider(upstream: Upstream): StablecoinsProvider {
  const label = upstream.info.label;
  return {
    source: label,
    market(signal) {
      return upstream.request({
        path: '/stablecoins',
        query: { includePrices: 'true' },
        schema: StablecoinsResponseSchema,
        // An empty list is an upstream hiccup, not an answer: refused before it reaches the cache.
        interpret: (status, json) =>
          status === 200 && isObject(json) && Array.isArray(json.peggedAssets) && json.peggedAssets.length === 0
            ? new ToolError(
                'upstream_unavailable',
                `The ${label} returned an empty stablecoin list. Try again in a minute.`,
              )
            : undefined,
        ...(signal ? { signal } : {}),
      });
    },
    usdRates(signal) {
      return upstream.request({
        path: '/rates',
        schema: RatesResponseSchema,
        ttlMs: FX_RATES_TTL_MS,
        ...(signal ? { signal } : {}),
      });
    },
  };
}
