import { CANDLES_NEEDED, last, type Line, type Lines, previous } from './compute.js';

/** The plain-language reading of the indicators. */
export interface Summary {
  text: string;
  trend: 'bullish' | 'bearish' | 'neutral' | 'unknown';
  rsiZone: 'overbought' | 'oversold' | 'neutral' | 'unknown';
  macdCross: 'bullish' | 'bearish' | 'none' | 'unknown';
  macdHistogram: 'rising' | 'falling' | 'flat' | 'unknown';
}

/** Candles looked back over for a fresh MACD cross. */
export const CROSS_LOOKBACK = 3;

/**
 * The summary rules (also in the tool description and docs/tools.md), always read from the full set of lines computed
 * over the same candles, whichever indicators were requested:
 * - trend: `bullish` when last close > EMA20 > EMA50, `bearish` when last close < EMA20 < EMA50, else `neutral`;
 *   `unknown` below 50 candles;
 * - rsiZone: RSI(14) ≥ 70 `overbought`, ≤ 30 `oversold`, else `neutral`; `unknown` below 15 candles;
 * - macdCross: `bullish`/`bearish` when the MACD line crossed above/below its signal line within the last 3 candles
 *   (the histogram changed sign; the most recent cross wins), else `none`; `unknown` below 34 candles;
 * - macdHistogram: last histogram value vs the one before: `rising`, `falling` or `flat`; `unknown` below 35 candles.
 */
export function summarize(lines: Lines, coin: string, interval: string): Summary {
  const n = lines.times.length;
  const close = lines.closes[n - 1]!;
  const [ema20, ema50, ema200, rsi] = [last(lines.ema20), last(lines.ema50), last(lines.ema200), last(lines.rsi)];
  const trend = trendOf(close, ema20, ema50);
  const rsiZone = rsi === null ? 'unknown' : rsi >= 70 ? 'overbought' : rsi <= 30 ? 'oversold' : 'neutral';
  const macdCross = crossOf(lines.macdHistogram);
  const [hist, histBefore] = [last(lines.macdHistogram), previous(lines.macdHistogram)];
  const macdHistogram =
    hist === null || histBefore === null
      ? 'unknown'
      : hist > histBefore
        ? 'rising'
        : hist < histBefore
          ? 'falling'
          : 'flat';

  const parts: string[] = [`${coin} on ${interval} candles (${n}), last close ${num(close)}.`];
  if (trend === 'unknown') parts.push(`Trend unknown: EMA50 needs ${CANDLES_NEEDED.ema50} candles.`);
  else {
    const side = (x: number) => (close > x ? 'above' : close < x ? 'below' : 'at');
    const long = ema200 === null ? '' : `; it is ${side(ema200)} EMA200 (${num(ema200)})`;
    parts.push(
      `Trend ${trend}: close is ${side(ema20!)} EMA20 (${num(ema20!)}) and EMA20 is ${ema20! >= ema50! ? 'above' : 'below'} EMA50 (${num(ema50!)})${long}.`,
    );
  }
  parts.push(
    rsi === null ? `RSI unknown: it needs ${CANDLES_NEEDED.rsi} candles.` : `RSI(14) ${num(rsi)}: ${rsiZone}.`,
  );
  const macd = last(lines.macd);
  const signal = last(lines.macdSignal);
  if (macd === null || signal === null) parts.push(`MACD unknown: it needs ${CANDLES_NEEDED.macd} candles.`);
  else {
    const cross =
      macdCross === 'none'
        ? `no cross in the last ${CROSS_LOOKBACK} candles`
        : `${macdCross} cross in the last ${CROSS_LOOKBACK} candles`;
    const histText = macdHistogram === 'unknown' ? '' : `histogram ${macdHistogram}, `;
    parts.push(
      `MACD ${num(macd)} is ${macd >= signal ? 'above' : 'below'} its signal ${num(signal)} (${histText}${cross}).`,
    );
  }
  const [lower, upper, atr] = [last(lines.bbLower), last(lines.bbUpper), last(lines.atr)];
  if (lower !== null && upper !== null && upper > lower) {
    parts.push(`Close sits at ${Math.round(((close - lower) / (upper - lower)) * 100)}% of the Bollinger band width.`);
  }
  if (atr !== null && close !== 0) parts.push(`ATR(14) is ${num((atr / close) * 100)}% of the close.`);
  return { text: parts.join(' '), trend, rsiZone, macdCross, macdHistogram };
}

function trendOf(close: number, ema20: number | null, ema50: number | null): Summary['trend'] {
  if (ema20 === null || ema50 === null) return 'unknown';
  if (close > ema20 && ema20 > ema50) return 'bullish';
  if (close < ema20 && ema20 < ema50) return 'bearish';
  return 'neutral';
}

function crossOf(histogram: Line): Summary['macdCross'] {
  const n = histogram.length;
  if (histogram[n - 1] == null) return 'unknown';
  for (let j = n - 1; j >= Math.max(1, n - CROSS_LOOKBACK); j--) {
    const [before, after] = [histogram[j - 1], histogram[j]];
    if (before == null || after == null) break;
    if (before <= 0 && after > 0) return 'bullish';
    if (before >= 0 && after < 0) return 'bearish';
  }
  return 'none';
}

/** A number with 6 significant digits, without trailing zeros. */
function num(x: number): string {
  return String(Number(x.toPrecision(6)));
}
