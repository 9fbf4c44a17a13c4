import { lazyRequire } from '../shared/lazy.js';

/** `technicalindicators`, loaded on the first indicator call. */
const library = lazyRequire<typeof import('technicalindicators')>('technicalindicators');

/** The indicators crypto-indicators can compute. */
export const INDICATORS = ['rsi', 'macd', 'ema', 'sma', 'bollinger', 'atr', 'vwap'] as const;
/** One indicator name. */
export type Indicator = (typeof INDICATORS)[number];

/** Periods used (docs/spec-notes.md#indicator-periods): RSI 14, MACD 12/26/9, EMA 20/50/200, SMA 20/50, Bollinger 20 × 2σ, ATR 14. */
export const PERIODS = {
  rsi: 14,
  atr: 14,
  macdFast: 12,
  macdSlow: 26,
  macdSignal: 9,
  bollinger: 20,
  bollingerMult: 2,
} as const;

/** Fewest candles each value needs (docs/spec-notes.md#indicator-periods): EMA200 200, MACD 34, RSI/ATR 15, SMA/Bollinger 20. */
export const CANDLES_NEEDED = {
  rsi: 15,
  atr: 15,
  macd: 34,
  bollinger: 20,
  vwap: 1,
  ema20: 20,
  ema50: 50,
  ema200: 200,
  sma20: 20,
  sma50: 50,
} as const;

/** One candle as the indicators read it (oldest first). */
export interface Ohlcv {
  t: number;
  h: number;
  l: number;
  c: number;
  v: number;
}

/** A value per candle, aligned with the candles; null where the indicator has no value yet. */
export type Line = Array<number | null>;

/** Every indicator line over one candle series (computed once; the tool picks what was asked for). */
export interface Lines {
  times: number[];
  closes: number[];
  rsi: Line;
  ema20: Line;
  ema50: Line;
  ema200: Line;
  sma20: Line;
  sma50: Line;
  macd: Line;
  macdSignal: Line;
  macdHistogram: Line;
  bbLower: Line;
  bbMiddle: Line;
  bbUpper: Line;
  atr: Line;
  vwap: Line;
}

const finite = (x: number | undefined): number | null => (x === undefined || !Number.isFinite(x) ? null : x);

/** Right-aligns a library result (which starts once the indicator has enough input) with the n candles. */
function align(values: ReadonlyArray<number | undefined>, n: number): Line {
  const pad = n - values.length;
  return Array.from({ length: n }, (_, i) => (i < pad ? null : finite(values[i - pad])));
}

/**
 * RSI(14) with Wilder's smoothing from the library's AverageGain/AverageLoss. The final ratio is taken here because
 * the library's RSI rounds to 2 decimals; no movement at all (both averages 0) reads as 50, no losses as 100.
 */
function rsiLine(closes: number[]): Line {
  const { AverageGain, AverageLoss } = library();
  const period = PERIODS.rsi;
  const gains = align(AverageGain.calculate({ period, values: closes }), closes.length);
  const losses = align(AverageLoss.calculate({ period, values: closes }), closes.length);
  return gains.map((g, i) => {
    const l = losses[i];
    if (g === null || l === null || l === undefined) return null;
    if (l === 0) return g === 0 ? 50 : 100;
    return 100 - 100 / (1 + g / l);
  });
}

/** Computes every indicator line over candles (oldest first) with `technicalindicators`. */
export function computeLines(candles: readonly Ohlcv[]): Lines {
  const { ATR, BollingerBands, EMA, MACD, SMA, VWAP } = library();
  const n = candles.length;
  const closes = candles.map((k) => k.c);
  const high = candles.map((k) => k.h);
  const low = candles.map((k) => k.l);
  const volume = candles.map((k) => k.v);
  const ema = (period: number) => align(EMA.calculate({ period, values: closes }), n);
  const sma = (period: number) => align(SMA.calculate({ period, values: closes }), n);
  const macd = MACD.calculate({
    values: closes,
    fastPeriod: PERIODS.macdFast,
    slowPeriod: PERIODS.macdSlow,
    signalPeriod: PERIODS.macdSignal,
    SimpleMAOscillator: false,
    SimpleMASignal: false,
  });
  // MACD counts as available from the first candle that has a signal value (34 candles), as the spec says.
  const withSignal = macd.map((m) => (m.signal === undefined ? undefined : m));
  const bands = BollingerBands.calculate({ period: PERIODS.bollinger, stdDev: PERIODS.bollingerMult, values: closes });
  return {
    times: candles.map((k) => k.t),
    closes,
    rsi: rsiLine(closes),
    ema20: ema(20),
    ema50: ema(50),
    ema200: ema(200),
    sma20: sma(20),
    sma50: sma(50),
    macd: align(
      withSignal.map((m) => m?.MACD),
      n,
    ),
    macdSignal: align(
      withSignal.map((m) => m?.signal),
      n,
    ),
    macdHistogram: align(
      withSignal.map((m) => (m?.MACD === undefined || m.signal === undefined ? undefined : m.MACD - m.signal)),
      n,
    ),
    bbLower: align(
      bands.map((b) => b.lower),
      n,
    ),
    bbMiddle: align(
      bands.map((b) => b.middle),
      n,
    ),
    bbUpper: align(
      bands.map((b) => b.upper),
      n,
    ),
    atr: align(ATR.calculate({ high, low, close: closes, period: PERIODS.atr }), n),
    vwap: align(VWAP.calculate({ high, low, close: closes, volume }), n),
  };
}

/** The last value of a line (null when the indicator never got enough candles). */
export const last = (line: Line): number | null => line[line.length - 1] ?? null;

/** The value before the last one. */
export const previous = (line: Line): number | null => line[line.length - 2] ?? null;
