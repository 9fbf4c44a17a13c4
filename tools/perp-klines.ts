import { z } from 'zod';
import { CANDLE_INTERVALS, CandleIntervalSchema, IsoTimestampSchema, PerpCoinSchema } from '../schemas/common.js';
import { CandleTimeSchema, candleLimitSchema, MarketSourceSchema } from '../schemas/candles.js';
import { NOT_YET_AVAILABLE_NOTE, notYetAvailable } from '../src/not-yet-available.js';
import { defineTool } from '../src/tool.js';

const PerpKlinesInputSchema = z.object({
  coin: PerpCoinSchema,
  limit: candleLimitSchema(100),
  interval: CandleIntervalSchema,
});

const CandleSchema = z.object({
  t: CandleTimeSchema,
  o: z.number().describe('Open price.'),
  h: z.number().describe('High price.'),
  l: z.number().describe('Low price.'),
  c: z.number().describe('Close price.'),
  v: z.number().describe('Volume in base-asset units.'),
  trades: z.number().int().describe('Number of trades in the candle.'),
});

const PerpKlinesOutputSchema = z.object({
  source: MarketSourceSchema,
  coin: z.string().describe('Perpetual ticker the candles belong to.'),
  interval: z.enum(CANDLE_INTERVALS).describe('Candle interval used.'),
  count: z.number().int().describe('Number of candles returned.'),
  candles: z
    .array(CandleSchema)
    .describe('OHLCV candles, oldest first; the newest one may still be forming.'),
  summary: z
    .object({
      open: z.number().describe('Open of the oldest candle.'),
      close: z.number().describe('Close of the newest candle.'),
      high: z.number().describe('Highest high over all candles.'),
      low: z.number().describe('Lowest low over all candles.'),
      volume: z.number().describe('Total volume over all candles, base-asset units.'),
      changePct: z.number().describe('Percentage change from `open` to `close`.'),
    })
    .describe('Aggregate over the returned candles.'),
  fetchedAt: IsoTimestampSchema.describe('When the candles were fetched (ISO-8601).'),
});

/** Recent OHLCV candles for a perpetual-futures coin with an aggregate summary. */
export const perpKlines = defineTool({
  name: 'perp-klines',
  title: 'Perpetual futures candles',
  description:
    'Returns recent OHLCV candles (open, high, low, close, volume, trade count; oldest first) for a ' +
    'perpetual-futures coin such as BTC or ETH, plus a summary of the window (open, close, high, low, total ' +
    'volume, % change). Options: `interval` (1m … 1M, default 1h) and `limit` (default 100, max 500). ' +
    'Costs 1000 USDC units ($0.001) per call; $0.002 on Optimism; 10000 units ($0.001) on Stellar.' + NOT_YET_AVAILABLE_NOTE,
  group: 'tools',
  method: 'POST',
  path: '/api/perp-klines',
  input: PerpKlinesInputSchema,
  output: PerpKlinesOutputSchema,
  price: { default: '1000', optimism: '2000', stellar: '10000' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  handler: notYetAvailable('perp-klines'),
});
