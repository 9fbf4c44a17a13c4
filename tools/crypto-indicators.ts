import { z } from 'zod';
import { CANDLE_INTERVALS, CandleIntervalSchema, IsoTimestampSchema, PerpCoinSchema } from '../schemas/common.js';
import { CandleTimeSchema, candleLimitSchema, MarketSourceSchema } from '../schemas/candles.js';
import { INDICATORS, type Indicator } from '../src/indicators/compute.js';
import { defineTool } from '../src/tool/tool.js';

const CryptoIndicatorsInputSchema = () =>
  z
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
            'Candles needed: MACD 34, RSI and ATR 15, SMA20, EMA20 and Bollinger 20, EMA50/SMA50 50, EMA200 200; ' +
            'with fewer, those values are null and the indicator carries an `unavailable` note.',
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
    });

const Num = () => z.number();
const NullableNum = () => z.number().nullable();
const Period = () => z.number().int().describe('Look-back period in candles.');
const ValueSeries = () =>
  z
    .array(z.object({ t: CandleTimeSchema, v: Num() }))
    .describe('Newest last; at most `points` entries; candles where the indicator has no value yet are left out.');
const Unavailable = () =>
  z
    .object({
      values: z
        .array(z.string())
        .describe('The fields of this indicator that are null for lack of candles, e.g. `ema200`.'),
      candlesNeeded: z
        .number()
        .int()
        .describe('Candles needed to compute all of them (compare with the top-level `candles`).'),
      message: z.string().describe('The same in words, with what to do about it.'),
    })
    .optional()
    .describe('Present only when some values of this indicator could not be computed: too few candles were available.');
const orNull = (what: string, needed: number) =>
  NullableNum().describe(`${what}; null when fewer than ${needed} candles were available.`);

/** The moving-average and volatility entries of `indicators` (a shape, built when the schema is). */
const averageIndicators = () => ({
  atr: z
    .object({
      value: orNull('Average true range (Wilder, 14), in quote currency', 15),
      period: Period(),
      pctOfClose: orNull('ATR as a percentage of the last close', 15),
      series: ValueSeries(),
      unavailable: Unavailable(),
    })
    .optional(),
  ema: z
    .object({
      ema20: orNull('EMA of closes over 20 candles', 20),
      ema50: orNull('EMA over 50 candles', 50),
      ema200: orNull('EMA over 200 candles', 200),
      series: z
        .array(z.object({ t: CandleTimeSchema, ema20: Num(), ema50: NullableNum(), ema200: NullableNum() }))
        .describe('Newest last; at most `points` entries; ema50/ema200 are null at candles before they have a value.'),
      unavailable: Unavailable(),
    })
    .optional(),
  rsi: z
    .object({
      value: orNull("Relative strength index (Wilder's smoothing, 14), 0–100", 15),
      period: Period(),
      series: ValueSeries(),
      unavailable: Unavailable(),
    })
    .optional(),
  sma: z
    .object({
      sma20: orNull('Simple moving average of closes over 20 candles', 20),
      sma50: orNull('SMA over 50 candles', 50),
      series: z
        .array(z.object({ t: CandleTimeSchema, sma20: Num(), sma50: NullableNum() }))
        .describe('Newest last; at most `points` entries.'),
      unavailable: Unavailable(),
    })
    .optional(),
});

/** The MACD, VWAP and Bollinger entries of `indicators`. */
const bandIndicators = () => ({
  macd: z
    .object({
      fast: Period().describe('Fast EMA period.'),
      slow: Period().describe('Slow EMA period.'),
      signal: Period().describe('Signal EMA period.'),
      value: orNull('MACD line: fast EMA minus slow EMA', 34),
      signalValue: orNull('Signal line: EMA of the MACD line', 34),
      histogram: orNull('MACD line minus signal line', 34),
      series: z
        .array(z.object({ t: CandleTimeSchema, macd: Num(), signal: Num(), histogram: Num() }))
        .describe('Newest last; at most `points` entries.'),
      unavailable: Unavailable(),
    })
    .optional(),
  vwap: z
    .object({
      value: NullableNum().describe(
        'Volume-weighted average of the typical price (high+low+close)/3 over all fetched candles; null when their volume is 0.',
      ),
      series: ValueSeries().describe('Running VWAP from the oldest fetched candle to each candle; newest last.'),
      unavailable: Unavailable(),
    })
    .optional(),
  bollinger: z
    .object({
      mult: Num().describe('Band width in standard deviations.'),
      period: Period(),
      lower: orNull('Lower band: middle − 2 population standard deviations', 20),
      upper: orNull('Upper band: middle + 2 population standard deviations', 20),
      middle: orNull('Middle band (SMA of closes over 20 candles)', 20),
      percentB: NullableNum().describe(
        'Position of the last close in the bands (0 = lower, 1 = upper); null when the bands are flat or missing.',
      ),
      bandwidthPct: NullableNum().describe('(upper − lower) / middle, in percent; null when the bands are missing.'),
      series: z
        .array(z.object({ t: CandleTimeSchema, lower: Num(), upper: Num(), middle: Num() }))
        .describe('Newest last; at most `points` entries.'),
      unavailable: Unavailable(),
    })
    .optional(),
});

const IndicatorsSchema = () =>
  z.object({ ...averageIndicators(), ...bandIndicators() }).describe('One entry per requested indicator.');

const CryptoIndicatorsOutputSchema = () =>
  z.object({
    coin: z.string().describe("The exchange's spelling of the perpetual ticker the indicators were computed for."),
    source: MarketSourceSchema,
    interval: z.enum(CANDLE_INTERVALS).describe('Candle interval used.'),
    candles: z
      .number()
      .int()
      .describe('Number of candles the indicators were computed over (may be below `limit` for a young coin).'),
    window: z
      .object({ from: CandleTimeSchema, to: CandleTimeSchema })
      .describe('Open times of the oldest and newest candle used.'),
    lastClose: Num().describe('Close of the newest candle (which may still be forming).'),
    indicators: IndicatorsSchema(),
    summary: z
      .object({
        text: z.string().describe('A few plain-language sentences reading the indicators.'),
        trend: z
          .enum(['bullish', 'bearish', 'neutral', 'unknown'])
          .describe(
            '`bullish` if last close > EMA20 > EMA50, `bearish` if last close < EMA20 < EMA50, else `neutral`; `unknown` below 50 candles.',
          ),
        rsiZone: z
          .enum(['overbought', 'oversold', 'neutral', 'unknown'])
          .describe('RSI(14) ≥ 70 `overbought`, ≤ 30 `oversold`, else `neutral`; `unknown` below 15 candles.'),
        macdCross: z
          .enum(['bullish', 'bearish', 'none', 'unknown'])
          .describe(
            '`bullish`/`bearish` if the MACD line crossed above/below its signal line within the last 3 candles, else `none`; `unknown` below 34 candles.',
          ),
        macdHistogram: z
          .enum(['rising', 'falling', 'flat', 'unknown'])
          .describe('Last MACD histogram value against the one before; `unknown` below 35 candles.'),
      })
      .describe(
        'Plain-language reading by fixed rules, always from RSI, EMA20/50 and MACD over the same candles, whichever indicators were requested.',
      ),
    fetchedAt: IsoTimestampSchema.describe(
      'When the candles were fetched from the exchange (ISO-8601); an answer from our short cache keeps the original time.',
    ),
  });

/**
 * Technical indicators (RSI, MACD, EMA, SMA, Bollinger, ATR, VWAP) for a perpetual-futures coin, computed with
 * `technicalindicators` over the exchange's most recent candles. Values that need more candles than were available
 * are null with a per-indicator `unavailable` note, never invented. Summary rules (see src/indicators/summary.ts):
 * trend from close vs EMA20 vs EMA50; RSI zone at 70/30; MACD cross within the last 3 candles; histogram direction
 * from the last two values.
 */
export const cryptoIndicators = defineTool({
  name: 'crypto-indicators',
  title: 'Crypto technical indicators',
  description:
    'Computes technical indicators for a perpetual-futures coin listed on Hyperliquid (e.g. BTC, ETH) from its most recent ' +
    'candles: RSI(14), MACD(12,26,9), EMA 20/50/200, SMA 20/50, Bollinger(20, 2σ), ATR(14) and VWAP, each with its latest ' +
    'value and a short series (newest last), plus a summary with fixed rules: `trend` bullish if close > EMA20 > EMA50, ' +
    'bearish if close < EMA20 < EMA50, else neutral; `rsiZone` overbought ≥ 70, oversold ≤ 30; `macdCross` bullish/bearish ' +
    'when the MACD line crossed its signal line within the last 3 candles, else none; `macdHistogram` rising/falling. ' +
    'Candles needed: EMA200 200, EMA50/SMA50 50, MACD 34, SMA20/EMA20/Bollinger 20, RSI/ATR 15; with fewer, those values ' +
    'are null and the indicator says so in `unavailable` (nothing is invented). Options: `interval` (1m … 1M, default 1h), ' +
    '`limit` candles (default 200, max 500), `points` per series (default 20, max 100), `indicators` subset (default all). ' +
    'Unknown coin → 404 with valid examples; exchange down or rate-limiting → 502/503/504 and no charge.',
  group: 'tools',
  method: 'POST',
  path: '/api/crypto-indicators',
  input: CryptoIndicatorsInputSchema,
  output: CryptoIndicatorsOutputSchema,
  pricing: { usd: '0.005', accepts: 'every-network' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  example: { coin: 'BTC', interval: '1h', limit: 200, points: 5, indicators: ['rsi', 'macd', 'ema'] },
  // The indicator maths runs on a worker thread (the upstream fetch stays here); `ctx.offload` runs it.
  worker: { job: 'indicators' },
  handler: async ({ coin, limit, points, interval, indicators }, ctx) => {
    const hyperliquid = ctx.providers.hyperliquid;
    const series = await hyperliquid.candles({ coin, interval, limit, signal: ctx.signal });
    const report = await ctx.offload('indicators', {
      candles: series.candles,
      indicators,
      points,
      coin: series.coin,
      interval,
    });
    const first = series.candles[0]!;
    const newest = series.candles[series.candles.length - 1]!;
    return {
      coin: series.coin,
      source: hyperliquid.source,
      interval,
      candles: series.candles.length,
      window: { from: first.t, to: newest.t },
      lastClose: newest.c,
      indicators: report.indicators,
      summary: report.summary,
      fetchedAt: series.fetchedAt,
    };
  },
});
