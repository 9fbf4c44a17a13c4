import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ToolError } from '../../src/shared/errors.js';
import { computeLines, type Ohlcv } from '../../src/indicators/compute.js';
import { buildReport } from '../../src/indicators/report.js';
import { summarize } from '../../src/indicators/summary.js';
import { silentLogger } from '../../src/shared/log.js';
import { createProviders, type Providers } from '../../src/providers/index.js';
import { cryptoIndicators } from '../../tools/crypto-indicators.js';
import { testContext } from '../support/context.js';
import { startHyperliquidLookalike } from '../support/upstreams/hyperliquid.js';
import type { Lookalike } from '../support/upstreams/server.js';

// ---- Independent reference formulas (textbook definitions, no library) ----

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sma = (xs: number[], p: number) => mean(xs.slice(-p));
/** EMA seeded with the SMA of the first p values, k = 2/(p+1); returns the whole series from index p−1. */
function emaSeries(xs: number[], p: number): number[] {
  const k = 2 / (p + 1);
  const out = [mean(xs.slice(0, p))];
  for (let i = p; i < xs.length; i++) out.push(xs[i]! * k + out[out.length - 1]! * (1 - k));
  return out;
}
/** Wilder's smoothing: first value the plain mean of p values, then (prev·(p−1) + x)/p. */
function wilder(xs: number[], p: number): number {
  let avg = mean(xs.slice(0, p));
  for (let i = p; i < xs.length; i++) avg = (avg * (p - 1) + xs[i]!) / p;
  return avg;
}
function rsi(closes: number[], p = 14): number {
  const changes = closes.slice(1).map((c, i) => c - closes[i]!);
  const gain = wilder(
    changes.map((d) => Math.max(d, 0)),
    p,
  );
  const loss = wilder(
    changes.map((d) => Math.max(-d, 0)),
    p,
  );
  return 100 - 100 / (1 + gain / loss);
}
function macd(closes: number[]) {
  const fast = emaSeries(closes, 12).slice(26 - 12);
  const slow = emaSeries(closes, 26);
  const line = slow.map((s, i) => fast[i]! - s);
  const signal = emaSeries(line, 9);
  const value = line[line.length - 1]!;
  const signalValue = signal[signal.length - 1]!;
  return { value, signalValue, histogram: value - signalValue };
}
function bollinger(closes: number[]) {
  const window = closes.slice(-20);
  const middle = mean(window);
  const sd = Math.sqrt(mean(window.map((x) => (x - middle) ** 2)));
  return { middle, upper: middle + 2 * sd, lower: middle - 2 * sd };
}
function atr(candles: Ohlcv[], p = 14): number {
  const tr = candles.slice(1).map((k, i) => {
    const prev = candles[i]!.c;
    return Math.max(k.h - k.l, Math.abs(k.h - prev), Math.abs(k.l - prev));
  });
  return wilder(tr, p);
}
const vwap = (candles: Ohlcv[]) =>
  candles.reduce((s, k) => s + ((k.h + k.l + k.c) / 3) * k.v, 0) / candles.reduce((s, k) => s + k.v, 0);

function expectClose(actual: number | null | undefined, expected: number, what: string) {
  expect(actual, what).toBeTypeOf('number');
  expect(Math.abs(actual! - expected) / Math.abs(expected), `${what}: ${actual} vs ${expected}`).toBeLessThan(1e-9);
}

/** A fixed candle series (260 candles, hourly), deterministic and independent of the look-alike. */
const FIXED: Ohlcv[] = (() => {
  const out: Ohlcv[] = [];
  let prev = 100;
  for (let i = 0; i < 260; i++) {
    const c = 100 + 10 * Math.sin(i / 9) + 0.05 * i + 3 * Math.sin(i * 1.7);
    out.push({
      t: 1_754_300_000_000 + i * 3_600_000,
      h: Math.max(prev, c) + 0.5 + 0.3 * Math.abs(Math.sin(i)),
      l: Math.min(prev, c) - 0.4 - 0.2 * Math.abs(Math.cos(i)),
      c,
      v: 1000 + 500 * Math.abs(Math.sin(i / 3)),
    });
    prev = c;
  }
  return out;
})();

function checkAgainstReference(candles: Ohlcv[], report: ReturnType<typeof buildReport>) {
  const closes = candles.map((k) => k.c);
  expectClose(report.rsi!.value, rsi(closes), 'rsi');
  const m = macd(closes);
  expectClose(report.macd!.value, m.value, 'macd');
  expectClose(report.macd!.signalValue, m.signalValue, 'macd signal');
  expectClose(report.macd!.histogram, m.histogram, 'macd histogram');
  for (const p of [20, 50, 200] as const) expectClose(report.ema![`ema${p}`], emaSeries(closes, p).at(-1)!, `ema${p}`);
  expectClose(report.sma!.sma20, sma(closes, 20), 'sma20');
  expectClose(report.sma!.sma50, sma(closes, 50), 'sma50');
  const bb = bollinger(closes);
  expectClose(report.bollinger!.middle, bb.middle, 'bollinger middle');
  expectClose(report.bollinger!.upper, bb.upper, 'bollinger upper');
  expectClose(report.bollinger!.lower, bb.lower, 'bollinger lower');
  expectClose(report.bollinger!.percentB, (closes.at(-1)! - bb.lower) / (bb.upper - bb.lower), 'percentB');
  expectClose(report.bollinger!.bandwidthPct, ((bb.upper - bb.lower) / bb.middle) * 100, 'bandwidthPct');
  expectClose(report.atr!.value, atr(candles), 'atr');
  expectClose(report.atr!.pctOfClose, (atr(candles) / closes.at(-1)!) * 100, 'atr pctOfClose');
  expectClose(report.vwap!.value, vwap(candles), 'vwap');
}

const ALL = ['rsi', 'macd', 'ema', 'sma', 'bollinger', 'atr', 'vwap'] as const;

describe('indicator values (known answers on a fixed candle series)', () => {
  it('match the textbook formulas to 1e-9 relative', () => {
    const report = buildReport(computeLines(FIXED), ALL, 20);
    checkAgainstReference(FIXED, report);
    expect(Object.values(report).every((entry) => !('unavailable' in entry))).toBe(true);
  });

  it('give series of at most `points` entries, newest last, ending at the latest value', () => {
    const report = buildReport(computeLines(FIXED), ALL, 7);
    expect(report.rsi!.series).toHaveLength(7);
    expect(report.rsi!.series.at(-1)).toEqual({ t: FIXED.at(-1)!.t, v: report.rsi!.value });
    expect(report.ema!.series.at(-1)).toEqual({
      t: FIXED.at(-1)!.t,
      ema20: report.ema!.ema20,
      ema50: report.ema!.ema50,
      ema200: report.ema!.ema200,
    });
    expectClose(
      report.sma!.series[0]!.sma20,
      sma(
        FIXED.slice(0, -6).map((k) => k.c),
        20,
      ),
      'sma20 six candles back',
    );
    expect(report.vwap!.series.at(-2)!.v).toBeCloseTo(vwap(FIXED.slice(0, -1)), 9);
  });

  it('leave a value null and say so when there are too few candles for it, never inventing one', () => {
    const some = FIXED.slice(0, 30);
    const report = buildReport(computeLines(some), ALL, 20);
    expect(report.ema).toMatchObject({
      ema50: null,
      ema200: null,
      unavailable: { values: ['ema50', 'ema200'], candlesNeeded: 200 },
    });
    expectClose(
      report.ema!.ema20,
      emaSeries(
        some.map((k) => k.c),
        20,
      ).at(-1)!,
      'ema20 over 30 candles',
    );
    expect(report.ema!.unavailable!.message).toMatch(/ema50 needs 50, ema200 needs 200, but only 30 were available/);
    expect(report.macd).toMatchObject({
      value: null,
      signalValue: null,
      histogram: null,
      series: [],
      unavailable: { values: ['macd'], candlesNeeded: 34 },
    });
    expect(report.sma).toMatchObject({ sma50: null, unavailable: { values: ['sma50'], candlesNeeded: 50 } });
    expect(report.rsi!.unavailable).toBeUndefined();
    expect(report.bollinger!.unavailable).toBeUndefined();
    const few = buildReport(computeLines(FIXED.slice(0, 14)), ALL, 20);
    expect(few.rsi).toMatchObject({ value: null, series: [], unavailable: { candlesNeeded: 15 } });
    expect(few.atr).toMatchObject({ value: null, pctOfClose: null, unavailable: { candlesNeeded: 15 } });
    expect(few.bollinger).toMatchObject({
      lower: null,
      upper: null,
      middle: null,
      percentB: null,
      unavailable: { candlesNeeded: 20 },
    });
    expect(few.ema).toMatchObject({ ema20: null, series: [], unavailable: { values: ['ema20', 'ema50', 'ema200'] } });
    expect(few.vwap!.value).not.toBeNull();
    expect(buildReport(computeLines(FIXED.slice(0, 15)), ['rsi', 'atr'], 5).rsi!.value).not.toBeNull();
    expect(buildReport(computeLines(FIXED.slice(0, 34)), ['macd'], 5).macd!.value).not.toBeNull();
  });
});

/** Candles following a list of closes (high/low just around open and close, constant volume). */
function fromCloses(closes: number[]): Ohlcv[] {
  return closes.map((c, i) => {
    const o = closes[i - 1] ?? c;
    return { t: i * 60_000, h: Math.max(o, c) + 0.1, l: Math.min(o, c) - 0.1, c, v: 10 };
  });
}

describe('summary rules', () => {
  it('reads a steady rise as a bullish trend with an overbought RSI', () => {
    const rising = fromCloses(Array.from({ length: 80 }, (_, i) => 100 + i + (i % 3 === 0 ? -0.5 : 0)));
    const s = summarize(computeLines(rising), 'BTC', '1h');
    expect(s).toMatchObject({ trend: 'bullish', rsiZone: 'overbought' });
    expect(s.text).toMatch(/^BTC on 1h candles \(80\), last close 179\. Trend bullish/);
  });

  it('reads a steady fall as a bearish trend with an oversold RSI', () => {
    const falling = fromCloses(Array.from({ length: 80 }, (_, i) => 200 - i + (i % 3 === 0 ? 0.5 : 0)));
    expect(summarize(computeLines(falling), 'ETH', '1d')).toMatchObject({ trend: 'bearish', rsiZone: 'oversold' });
  });

  it('reports a MACD cross within the last 3 candles and the histogram direction, matching the reference histogram', () => {
    const closes = [...Array.from({ length: 60 }, (_, i) => 300 - i - 0.02 * i * i), 200, 212, 226];
    const lines = computeLines(fromCloses(closes));
    const s = summarize(lines, 'SOL', '5m');
    const hist = (upTo: number) => macd(closes.slice(0, upTo)).histogram;
    expect(hist(closes.length - 3)).toBeLessThanOrEqual(0);
    expect(hist(closes.length)).toBeGreaterThan(0);
    expect(s.macdCross).toBe('bullish');
    expect(s.macdHistogram).toBe(hist(closes.length) > hist(closes.length - 1) ? 'rising' : 'falling');
    const later = computeLines(fromCloses([...closes, 175, 180, 185, 190]));
    expect(summarize(later, 'SOL', '5m').macdCross).toBe('none');
  });

  it('says unknown, not a guess, when there are too few candles', () => {
    const s = summarize(computeLines(FIXED.slice(0, 20)), 'HYPE', '1h');
    expect(s).toMatchObject({ trend: 'unknown', macdCross: 'unknown', macdHistogram: 'unknown' });
    expect(s.rsiZone).not.toBe('unknown');
    expect(s.text).toMatch(/Trend unknown: EMA50 needs 50 candles/);
  });
});

describe('crypto-indicators handler', () => {
  let lookalike: Lookalike;
  let providers: Providers;
  beforeAll(async () => {
    lookalike = await startHyperliquidLookalike({ history: { HYPE: 40 } });
    providers = createProviders(
      loadConfig({ HYPERLIQUID_API_URL: lookalike.url, UPSTREAM_RETRIES: '0' }),
      silentLogger,
    );
  });
  afterAll(async () => {
    await lookalike?.stop();
  });
  const run = async (input: Record<string, unknown>) =>
    cryptoIndicators.handler(cryptoIndicators.input.parse(input), testContext({ providers }));

  it('computes every indicator over the exchange candles, matching the reference formulas', async () => {
    const out = await run({ coin: 'eth', limit: 300, points: 10 });
    expect(cryptoIndicators.output.safeParse(out).error).toBeUndefined();
    const series = await providers.hyperliquid.candles({ coin: 'ETH', interval: '1h', limit: 300 });
    expect(series.cached).toBe(true);
    expect(out).toMatchObject({
      coin: 'ETH',
      source: 'Hyperliquid info API',
      interval: '1h',
      candles: 300,
      fetchedAt: series.fetchedAt,
      window: { from: series.candles[0]!.t, to: series.candles.at(-1)!.t },
      lastClose: series.candles.at(-1)!.c,
    });
    checkAgainstReference(series.candles, out.indicators);
    expect(out.indicators.macd!.series).toHaveLength(10);
    expect(['bullish', 'bearish', 'neutral']).toContain(out.summary.trend);
  });

  it('returns only the requested indicators', async () => {
    const out = await run({ coin: 'BTC', indicators: ['vwap', 'rsi'], interval: '15m' });
    expect(Object.keys(out.indicators).sort()).toEqual(['rsi', 'vwap']);
  });

  it('answers a small limit with per-indicator notes instead of rejecting it', async () => {
    expect(cryptoIndicators.input.safeParse({ coin: 'BTC', limit: 20, indicators: ['macd', 'rsi'] }).success).toBe(
      true,
    );
    const out = await run({ coin: 'BTC', limit: 20, indicators: ['macd', 'rsi'] });
    expect(out.candles).toBe(20);
    expect(out.indicators.macd).toMatchObject({ value: null, unavailable: { candlesNeeded: 34 } });
    expect(out.indicators.rsi!.value).toBeTypeOf('number');
    expect(cryptoIndicators.output.safeParse(out).error).toBeUndefined();
  });

  it('computes over the candles a young coin has, saying which values need more', async () => {
    const out = await run({ coin: 'HYPE' });
    expect(out.candles).toBe(40);
    expect(out.indicators.ema!.unavailable!.values).toEqual(['ema50', 'ema200']);
    expect(out.summary.trend).toBe('unknown');
  });

  it('answers an unknown coin with not_found naming valid examples', async () => {
    const err = await run({ coin: 'NOTACOIN' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).code).toBe('not_found');
    expect((err as ToolError).message).toMatch(/BTC, ETH/);
  });
});
