import { z } from 'zod';
import { CANDLE_INTERVALS, CandleIntervalSchema, IsoTimestampSchema, PerpCoinSchema } from '../schemas/common.js';
import { CandleTimeSchema, candleLimitSchema, MarketSourceSchema } from '../schemas/candles.js';
import { defineTool } from '../src/tool/tool.js';

const PerpKlinesInputSchema = () =>
  z.object({
    coin: PerpCoinSchema,
    limit: candleLimitSchema(100),
    interval: CandleIntervalSchema,
  });

const CandleSchema = () =>
  z.object({
    t: CandleTimeSchema,
    o: z.number().describe('Open price.'),
    h: z.number().describe('High price.'),
    l: z.number().describe('Low price.'),
    c: z.number().describe('Close price.'),
    v: z.number().describe('Volume in base-asset units.'),
    trades: z.number().int().describe('Number of trades in the candle.'),
  });

const PerpKlinesOutputSchema = () =>
  z.object({
    source: MarketSourceSchema,
    coin: z.string().describe("The exchange's spelling of the perpetual ticker the candles belong to (e.g. `kPEPE`)."),
    interval: z.enum(CANDLE_INTERVALS).describe('Candle interval used.'),
    count: z.number().int().describe('Number of candles returned.'),
    candles: z.array(CandleSchema()).describe('OHLCV candles, oldest first; the newest one may still be forming.'),
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
    fetchedAt: IsoTimestampSchema.describe(
      'When the candles were fetched from the exchange (ISO-8601); an answer from our short cache keeps the original time.',
    ),
  });

/**
 * Recent OHLCV candles for a perpetual-futures coin with an aggregate summary, from the Hyperliquid info API
 * (`candleSnapshot`, decimal strings parsed to numbers). The coin is checked against the exchange's cached coin list
 * first (case-insensitive), so an unknown ticker is a 404 naming valid ones.
 */
export const perpKlines = defineTool({
  name: 'perp-klines',
  title: 'Perpetual futures candles',
  description:
    'Returns recent OHLCV candles (open, high, low, close, volume, trade count; oldest first) for a ' +
    'perpetual-futures coin listed on Hyperliquid, such as BTC or ETH, plus a summary of the window (open, close, high, ' +
    'low, total volume, % change). Options: `interval` (1m … 1M, default 1h) and `limit` (default 100, max 500); the ' +
    'exchange keeps only its latest 5,000 candles per coin and interval, so a young coin may return fewer. ' +
    'Unknown coin → 404 with valid examples; exchange down or rate-limiting → 502/503/504 and no charge.',
  group: 'tools',
  method: 'POST',
  path: '/api/perp-klines',
  input: PerpKlinesInputSchema,
  output: PerpKlinesOutputSchema,
  pricing: { usd: '0.001', accepts: 'every-network' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  example: { coin: 'ETH', interval: '1h', limit: 24 },
  handler: async ({ coin, limit, interval }, ctx) => {
    const hyperliquid = ctx.providers.hyperliquid;
    const series = await hyperliquid.candles({ coin, interval, limit, signal: ctx.signal });
    const candles = series.candles.map(({ t, o, h, l, c, v, n }) => ({ t, o, h, l, c, v, trades: n }));
    const open = candles[0]!.o;
    const close = candles[candles.length - 1]!.c;
    return {
      source: hyperliquid.source,
      coin: series.coin,
      interval,
      count: candles.length,
      candles,
      summary: {
        open,
        close,
        high: Math.max(...candles.map((k) => k.h)),
        low: Math.min(...candles.map((k) => k.l)),
        volume: candles.reduce((sum, k) => sum + k.v, 0),
        changePct: open === 0 ? 0 : ((close - open) / open) * 100,
      },
      fetchedAt: series.fetchedAt,
    };
  },
});
