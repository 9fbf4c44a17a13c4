import { z } from 'zod';
import { IsoTimestampSchema } from '../schemas/common.js';
import { NOT_YET_AVAILABLE_NOTE, notYetAvailable } from '../src/not-yet-available.js';
import { defineTool } from '../src/tool.js';

const MECHANISMS = ['fiat-backed', 'crypto-backed', 'algorithmic'] as const;

const StablecoinsInputSchema = z.object({
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
  mechanism: z.enum(MECHANISMS).optional().describe('Peg mechanism filter: fiat-backed, crypto-backed or algorithmic.'),
});

const StablecoinRowSchema = z.object({
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
  circulatingUsd: z.number().describe('Circulating supply (on `chain` when filtered), in USD.'),
  change1dPct: z.number().nullable().describe('Supply change over 1 day, in percent; null without history.'),
  change7dPct: z.number().nullable().describe('Supply change over 7 days, in percent; null without history.'),
  change30dPct: z.number().nullable().describe('Supply change over 30 days, in percent; null without history.'),
  chainCount: z.number().int().describe('Number of chains the stablecoin circulates on.'),
  chains: z
    .array(z.object({ chain: z.string(), circulating: z.number().describe('Circulating supply on that chain.') }))
    .describe('Per-chain circulation, largest first.'),
});

const StablecoinsOutputSchema = z.object({
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
      circulatingUsd: z.number().describe('Total circulating supply of all of them, in USD.'),
    })
    .describe('Market-wide totals before filtering.'),
  matched: z.number().int().describe('Stablecoins matching the filters, before `limit`.'),
  count: z.number().int().describe('Rows returned in `stablecoins`.'),
  stablecoins: z.array(StablecoinRowSchema).describe('Rows ranked by circulating supply, largest first.'),
});

/** Stablecoin market overview: supply, price, peg deviation and chain spread, ranked by circulation. */
export const stablecoins = defineTool({
  name: 'stablecoins',
  title: 'Stablecoin market data',
  description:
    'Lists stablecoins ranked by circulating supply, with price, peg deviation, 1d/7d/30d supply change and ' +
    'per-chain circulation, plus market totals. Filters: `peg` currency (default USD; `all` for every peg), ' +
    '`chain`, `search` (name or symbol substring), `mechanism` (fiat-backed, crypto-backed, algorithmic); ' +
    '`limit` rows (default 20, max 100). Costs 3000 USDC units ($0.003) per call; $0.004 on Optimism; ' +
    '30000 units ($0.003) on Stellar.' + NOT_YET_AVAILABLE_NOTE,
  group: 'tools',
  method: 'POST',
  path: '/api/stablecoins',
  input: StablecoinsInputSchema,
  output: StablecoinsOutputSchema,
  price: { default: '3000', optimism: '4000', stellar: '30000' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  handler: notYetAvailable('stablecoins'),
});
