import { z } from 'zod';
import { CANDLE_INTERVALS, CandleIntervalSchema, IsoTimestampSchema, PerpCoinSchema } from '../schemas/common.js';
import { CandleTimeSchema, candleLimitSchema, MarketSourceSchema } from '../schemas/candles.js';
import { NOT_YET_AVAILABLE_NOTE, notYetAvailable } from '../src/not-yet-available.js';
import { defineTool } from '../src/tool.js';

const INDICATORS = ['rsi', 'macd', 'ema', 'sma', 'bollinger', 'atr', 'vwap'] as const;
type Indicator = (typeof INDICATORS)[number];

/** Fewest candles each indicator needs (spec §4.5); EMA needs 20 for ema20, 200 for ema200. */
const MIN_CANDLES: Record<Indicator, number> = {
  rsi: 15,
  macd: 34,
  ema: 20,
  sma: 20,
  bollinger: 20,
  atr: 15,
  vwap: 1,
};

const CryptoIndicatorsInputSchema = z
  .object({
    coin: PerpCoinSchema,
    limit: candleLimitSchema(200),
    points: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(20)
      .describe('Series points returned per indicator, newest last; integer 1–100, default 20.'),
    interval: CandleIntervalSchema,
    indicators: z
      .array(z.enum(INDICATORS))
      .min(1)
      .max(INDICATORS.length)
      .default(() => [...INDICATORS])
      .describe(
        'Indicators to compute, without repeats: any of rsi, macd, ema, sma, bollinger, atr, vwap; default all. ' +
          'Candles needed: MACD 34, RSI and ATR 15, SMA, EMA and Bollinger 20; EMA50/SMA50 need 50 and ' +
          'EMA200 needs 200, else they are null.',
      ),
  })
  .superRefine((input, ctx) => {
    if (!Array.isArray(input.indicators)) return;
    const seen = new Set<Indicator>();
    input.indicators.forEach((name, index) => {
      if (seen.has(name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['indicators', index],
          message: `"${name}" is listed twice; list each indicator once.`,
        });
      }
      seen.add(name);
    });
    if (typeof input.limit !== 'number') return;
    const limit = input.limit;
    const tooFew = [...seen].filter((name) => limit < MIN_CANDLES[name]);
    if (tooFew.length > 0) {
      const needs = tooFew.map((name) => `${name} ${MIN_CANDLES[name]}`).join(', ');
      ctx.addIssue({
        code: 'custom',
        path: ['limit'],
        message: `limit ${limit} is too few candles for the requested indicators (needed: ${needs}); raise limit or drop those indicators.`,
      });
    }
  });

const Num = z.number();
const NullableNum = z.number().nullable();
const Period = z.number().int().describe('Look-back period in candles.');
const ValueSeries = z
  .array(z.object({ t: CandleTimeSchema, v: Num }))
  .describe('Newest last; at most `points` entries.');

const IndicatorsSchema = z
  .object({
    atr: z
      .object({
        value: Num.describe('Average true range, in quote currency.'),
        period: Period,
        pctOfClose: Num.describe('ATR as a percentage of the last close.'),
        series: ValueSeries,
      })
      .optional(),
    ema: z
      .object({
        ema20: Num,
        ema50: NullableNum.describe('Null when fewer than 50 candles were available.'),
        ema200: NullableNum.describe('Null when fewer than 200 candles were available.'),
        series: z
          .array(z.object({ t: CandleTimeSchema, ema20: Num, ema50: NullableNum, ema200: NullableNum }))
          .describe('Newest last; at most `points` entries.'),
      })
      .optional(),
    rsi: z
      .object({ value: Num.describe('Relative strength index, 0–100.'), period: Period, series: ValueSeries })
      .optional(),
    sma: z
      .object({
        sma20: Num,
        sma50: NullableNum.describe('Null when fewer than 50 candles were available.'),
        series: z
          .array(z.object({ t: CandleTimeSchema, sma20: Num, sma50: NullableNum }))
          .describe('Newest last; at most `points` entries.'),
      })
      .optional(),
    macd: z
      .object({
        fast: Period.describe('Fast EMA period.'),
        slow: Period.describe('Slow EMA period.'),
        signal: Period.describe('Signal EMA period.'),
        value: Num.describe('MACD line: fast EMA minus slow EMA.'),
        signalValue: Num.describe('Signal line: EMA of the MACD line.'),
        histogram: Num.describe('MACD line minus signal line.'),
        series: z
          .array(z.object({ t: CandleTimeSchema, macd: Num, signal: Num, histogram: Num }))
          .describe('Newest last; at most `points` entries.'),
      })
      .optional(),
    vwap: z
      .object({ value: Num.describe('Volume-weighted average price over the fetched candles.'), series: ValueSeries })
      .optional(),
    bollinger: z
      .object({
        mult: Num.describe('Band width in standard deviations.'),
        period: Period,
        lower: Num,
        upper: Num,
        middle: Num.describe('Middle band (SMA of closes).'),
        percentB: NullableNum.describe('Position of the last close in the bands (0 = lower, 1 = upper); null when the bands are flat.'),
        bandwidthPct: Num.describe('(upper − lower) / middle, in percent.'),
        series: z
          .array(z.object({ t: CandleTimeSchema, lower: Num, upper: Num, middle: Num }))
          .describe('Newest last; at most `points` entries.'),
      })
      .optional(),
  })
  .describe('One entry per requested indicator.');

const CryptoIndicatorsOutputSchema = z.object({
  coin: z.string().describe('Perpetual ticker the indicators were computed for.'),
  source: MarketSourceSchema,
  interval: z.enum(CANDLE_INTERVALS).describe('Candle interval used.'),
  candles: z.number().int().describe('Number of candles the indicators were computed over.'),
  window: z
    .object({ from: CandleTimeSchema, to: CandleTimeSchema })
    .describe('Open times of the oldest and newest candle used.'),
  lastClose: Num.describe('Close of the newest candle (which may still be forming).'),
  indicators: IndicatorsSchema,
  summary: z
    .object({
      text: z.string().describe('One-paragraph plain-language reading of the indicators.'),
      trend: z.string().describe('Overall trend label, e.g. `bullish`, `bearish`, `neutral`.'),
      rsiZone: z.string().describe('RSI zone, e.g. `overbought`, `oversold`, `neutral`.'),
      macdCross: z.string().describe('Latest MACD/signal relation, e.g. `bullish`, `bearish`, `none`.'),
      macdHistogram: z.string().describe('Histogram direction, e.g. `rising`, `falling`.'),
    })
    .describe('Plain-language interpretation of the computed indicators.'),
  fetchedAt: IsoTimestampSchema.describe('When the candles were fetched (ISO-8601).'),
});

/** Technical indicators (RSI, MACD, EMA, SMA, Bollinger, ATR, VWAP) for a perpetual-futures coin. */
export const cryptoIndicators = defineTool({
  name: 'crypto-indicators',
  title: 'Crypto technical indicators',
  description:
    'Computes technical indicators for a perpetual-futures coin (e.g. BTC, ETH) from recent exchange candles: ' +
    'RSI, MACD, EMA 20/50/200, SMA 20/50, Bollinger bands, ATR and VWAP, each with its latest value and a short ' +
    'series (newest last), plus a plain-language summary (trend, RSI zone, MACD cross). Options: `interval` ' +
    '(default 1h), `limit` candles (default 200, max 500), `points` per series (default 20, max 100), `indicators` ' +
    'subset (default all). Costs 5000 USDC units ($0.005) per call; $0.006 on Optimism; 50000 units ($0.005) on Stellar.' + NOT_YET_AVAILABLE_NOTE,
  group: 'tools',
  method: 'POST',
  path: '/api/crypto-indicators',
  input: CryptoIndicatorsInputSchema,
  output: CryptoIndicatorsOutputSchema,
  price: { default: '5000', optimism: '6000', stellar: '50000' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  handler: notYetAvailable('crypto-indicators'),
});
