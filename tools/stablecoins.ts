import { z } from 'zod';
import { IsoTimestampSchema } from '../schemas/common.js';
import { ToolError } from '../src/shared/errors.js';
import type {
  StablecoinAsset,
  StablecoinMarket,
  SupplyHistory,
} from '../src/providers/market/defillama-stablecoins.js';
import { defineTool, type ToolContext } from '../src/tool/tool.js';

const MECHANISMS = ['fiat-backed', 'crypto-backed', 'algorithmic'] as const;

const StablecoinsInputSchema = () =>
  z.object({
    peg: z
      .string()
      .trim()
      .regex(/^[A-Za-z]{2,8}$/, 'must be a peg currency code such as USD, EUR, JPY, GBP, CHF, VAR, or "all"')
      .toUpperCase()
      .default('USD')
      .describe(
        'Peg currency filter, e.g. USD (default), EUR, JPY, GBP, CHF, or VAR (variable peg); any case, upper-cased. ' +
          '`all` (normalised to `ALL`) returns every peg.',
      ),
    chain: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .optional()
      .describe('Chain name filter, e.g. Ethereum, Base, Solana; rows are then ranked by circulation on that chain.'),
    limit: z.number().int().min(1).max(100).default(20).describe('Rows returned; integer 1–100, default 20.'),
    search: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .optional()
      .describe('Case-insensitive substring of the stablecoin name or symbol, e.g. `usd` or `tether`.'),
    mechanism: z
      .enum(MECHANISMS)
      .optional()
      .describe('Peg mechanism filter: fiat-backed, crypto-backed or algorithmic.'),
  });

const StablecoinRowSchema = () =>
  z.object({
    id: z.string().describe('Source identifier of the stablecoin.'),
    name: z.string(),
    rank: z.number().int().describe('1-based rank by circulating supply within the filtered result.'),
    symbol: z.string(),
    geckoId: z.string().nullable().describe('CoinGecko id, or null when unknown.'),
    price: z.number().nullable().describe('Market price in USD, or null when no price is known.'),
    pegType: z.string().describe('Source peg type, e.g. `peggedUSD`.'),
    pegCurrency: z.string().describe('Peg currency code, e.g. `USD`.'),
    pegMechanism: z.string().describe('fiat-backed, crypto-backed or algorithmic.'),
    pegDeviationPct: z
      .number()
      .nullable()
      .describe('Deviation of the price from the peg, in percent; null when there is no price or FX rate.'),
    circulating: z.number().describe('Circulating supply (on `chain` when filtered), in peg-currency units.'),
    circulatingUsd: z
      .number()
      .describe(
        "Circulating supply (on `chain` when filtered) valued in USD: supply × market price (the peg's FX value when there is no price; 0 when neither is known).",
      ),
    change1dPct: z
      .number()
      .nullable()
      .describe('Supply change over 1 day (on `chain` when filtered), in percent; null without history.'),
    change7dPct: z
      .number()
      .nullable()
      .describe('Supply change over 7 days (on `chain` when filtered), in percent; null without history.'),
    change30dPct: z
      .number()
      .nullable()
      .describe('Supply change over 30 days (on `chain` when filtered), in percent; null without history.'),
    chainCount: z.number().int().describe('Number of chains the stablecoin circulates on.'),
    chains: z
      .array(z.object({ chain: z.string(), circulating: z.number().describe('Circulating supply on that chain.') }))
      .describe('Per-chain circulation, largest first.'),
  });

const StablecoinsOutputSchema = () =>
  z.object({
    source: z.string().describe('Name of the upstream data source.'),
    fetchedAt: IsoTimestampSchema.describe('When the source data was fetched (ISO-8601).'),
    cached: z.boolean().describe('True when served from the server cache rather than a fresh fetch.'),
    filters: z
      .object({
        peg: z.string().describe('Peg filter applied (`ALL` for none).'),
        chain: z.string().nullable(),
        search: z.string().nullable(),
        mechanism: z.string().nullable(),
      })
      .describe('Filters applied; null where no filter was given.'),
    totals: z
      .object({
        assetCount: z.number().int().describe('Stablecoins known to the source, before filtering.'),
        circulatingUsd: z
          .number()
          .describe('Total circulating supply of all of them, in USD, as the source totals it.'),
      })
      .describe('Market-wide totals before filtering.'),
    matched: z.number().int().describe('Stablecoins matching the filters, before `limit`.'),
    count: z.number().int().describe('Rows returned in `stablecoins`.'),
    stablecoins: z
      .array(StablecoinRowSchema())
      .describe('Rows ranked by circulating supply (valued in USD so pegs compare), largest first.'),
  });

type StablecoinsInput = z.output<ReturnType<typeof StablecoinsInputSchema>>;
type StablecoinRow = z.input<ReturnType<typeof StablecoinRowSchema>>;

/** Percent values are rounded to 4 decimals (1e-4 % is far below any meaningful supply or peg move). */
const pct = (x: number) => Math.round(x * 1e4) / 1e4;

/** Change from a previous record to now, in percent; null without a (positive) previous record. */
const change = (now: number, before: number | null) => (before === null ? null : pct(((now - before) / before) * 100));

/** Known peg currencies by number of coins, most first (examples for error messages). */
function pegsByCount(assets: readonly StablecoinAsset[]): string[] {
  const counts = new Map<string, number>();
  for (const a of assets) counts.set(a.pegCurrency, (counts.get(a.pegCurrency) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]).map(([peg]) => peg);
}

/** Resolves the chain filter to the upstream's own label, or refuses an unknown chain with examples. */
function resolveChain(market: StablecoinMarket, chain: string | undefined, source: string): string | null {
  if (chain === undefined) return null;
  const label = market.chainLabels.get(chain.toLowerCase());
  if (label !== undefined) return label;
  throw new ToolError(
    'not_found',
    `The ${source} lists no stablecoin on a chain named "${chain}". Chain names are like ${market.chainsByUsd.slice(0, 8).join(', ')}.`,
    { field: 'chain' },
  );
}

/** Applies the peg, mechanism and search filters and, with a chain filter, keeps coins circulating on that chain. */
function matching(market: StablecoinMarket, input: StablecoinsInput, chain: string | null, source: string) {
  if (input.peg !== 'ALL' && !market.assets.some((a) => a.pegCurrency === input.peg)) {
    throw new ToolError(
      'not_found',
      `The ${source} lists no stablecoin pegged to ${input.peg}. Known pegs: ${pegsByCount(market.assets).join(', ')}, or "all".`,
      { field: 'peg' },
    );
  }
  const search = input.search?.toLowerCase();
  const rows: Array<{ asset: StablecoinAsset; supply: SupplyHistory }> = [];
  for (const asset of market.assets) {
    if (input.peg !== 'ALL' && asset.pegCurrency !== input.peg) continue;
    if (input.mechanism !== undefined && asset.pegMechanism !== input.mechanism) continue;
    if (search !== undefined && !asset.searchText.includes(search)) continue;
    const supply = chain === null ? asset.supply : asset.chains.find((c) => c.chain === chain)?.supply;
    if (supply === undefined || supply.current <= 0) continue;
    rows.push({ asset, supply });
  }
  return rows;
}

/**
 * USD value of one peg unit: 1 for USD, the FX rate for other fiat pegs, null for a variable peg (VAR) or a currency
 * without a rate. Rates are fetched only when a non-USD coin is in the answer.
 */
async function pegValues(currencies: Set<string>, ctx: ToolContext): Promise<Map<string, number>> {
  const fiat = [...currencies].filter((c) => c !== 'USD' && c !== 'VAR');
  if (fiat.length === 0) return new Map([['USD', 1]]);
  return (await ctx.providers.stablecoins.usdRates(ctx.signal)).data;
}

/** One answer row (without its rank): supply in peg units and USD, peg deviation, changes, chain spread. */
function toRow(asset: StablecoinAsset, supply: SupplyHistory, pegUsd: number | undefined): Omit<StablecoinRow, 'rank'> {
  const unitUsd = asset.price ?? pegUsd ?? 0;
  return {
    id: asset.id,
    name: asset.name,
    symbol: asset.symbol,
    geckoId: asset.geckoId,
    price: asset.price,
    pegType: asset.pegType,
    pegCurrency: asset.pegCurrency,
    pegMechanism: asset.pegMechanism,
    pegDeviationPct: asset.price !== null && pegUsd !== undefined ? pct((asset.price / pegUsd - 1) * 100) : null,
    circulating: supply.current,
    circulatingUsd: supply.current * unitUsd,
    change1dPct: change(supply.current, supply.prevDay),
    change7dPct: change(supply.current, supply.prevWeek),
    change30dPct: change(supply.current, supply.prevMonth),
    chainCount: asset.chains.length,
    chains: asset.chains.map((c) => ({ chain: c.chain, circulating: c.supply.current })),
  };
}

/** Filters the cached coin list, values and ranks the matches, and cuts at `limit`. */
async function listStablecoins(input: StablecoinsInput, ctx: ToolContext) {
  const provider = ctx.providers.stablecoins;
  const { data: market, fetchedAt, cached } = await provider.market(ctx.signal);
  const chain = resolveChain(market, input.chain, provider.source);
  const matched = matching(market, input, chain, provider.source);
  if (matched.length === 0) {
    const filters = [input.search && `search "${input.search}"`, input.mechanism && `mechanism ${input.mechanism}`]
      .filter(Boolean)
      .join(' and ');
    throw new ToolError(
      'not_found',
      `No ${input.peg === 'ALL' ? '' : input.peg + '-pegged '}stablecoin${chain ? ` on ${chain}` : ''} matches ${filters || 'these filters'}. Loosen a filter and call again.`,
    );
  }
  const pegUsd = await pegValues(new Set(matched.map((m) => m.asset.pegCurrency)), ctx);
  const rows = matched
    .map(({ asset, supply }) => toRow(asset, supply, pegUsd.get(asset.pegCurrency)))
    .sort(
      (a, b) => b.circulatingUsd - a.circulatingUsd || b.circulating - a.circulating || a.name.localeCompare(b.name),
    )
    .slice(0, input.limit)
    .map((row, i) => ({ ...row, rank: i + 1 }));
  return {
    source: provider.source,
    fetchedAt,
    cached,
    filters: { peg: input.peg, chain, search: input.search ?? null, mechanism: input.mechanism ?? null },
    totals: { assetCount: market.assets.length, circulatingUsd: market.totalCirculatingUsd },
    matched: matched.length,
    count: rows.length,
    stablecoins: rows,
  };
}

/** Stablecoin market overview: supply, price, peg deviation and chain spread, ranked by circulation. */
export const stablecoins = defineTool({
  name: 'stablecoins',
  title: 'Stablecoin market data',
  description:
    'Lists stablecoins ranked by circulating supply, with price, peg deviation, 1d/7d/30d supply change and ' +
    'per-chain circulation, plus market totals. Filters: `peg` currency (default USD; `all` for every peg), ' +
    '`chain`, `search` (name or symbol substring), `mechanism` (fiat-backed, crypto-backed, algorithmic); ' +
    '`limit` rows (default 20, max 100). A filter that matches nothing is answered 404 and not charged.',
  group: 'tools',
  method: 'POST',
  path: '/api/stablecoins',
  input: StablecoinsInputSchema,
  output: StablecoinsOutputSchema,
  pricing: { usd: '0.003', accepts: 'every-network' },
  example: { peg: 'USD', limit: 10 },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  handler: listStablecoins,
});
