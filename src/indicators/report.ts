import { CANDLES_NEEDED, type Indicator, last, type Line, type Lines, PERIODS } from './compute.js';

/** Why some values of one indicator are null: which ones, how many candles a full answer needs, in words. */
export interface Unavailable {
  values: string[];
  candlesNeeded: number;
  message: string;
}

type Point = { t: number; v: number };
type Maybe = number | null;

/** The `indicators` object of a crypto-indicators answer (one key per requested indicator). */
export interface IndicatorReport {
  atr?: { value: Maybe; period: number; pctOfClose: Maybe; series: Point[]; unavailable?: Unavailable };
  ema?: {
    ema20: Maybe;
    ema50: Maybe;
    ema200: Maybe;
    series: Array<{ t: number; ema20: number; ema50: Maybe; ema200: Maybe }>;
    unavailable?: Unavailable;
  };
  rsi?: { value: Maybe; period: number; series: Point[]; unavailable?: Unavailable };
  sma?: {
    sma20: Maybe;
    sma50: Maybe;
    series: Array<{ t: number; sma20: number; sma50: Maybe }>;
    unavailable?: Unavailable;
  };
  macd?: {
    fast: number;
    slow: number;
    signal: number;
    value: Maybe;
    signalValue: Maybe;
    histogram: Maybe;
    series: Array<{ t: number; macd: number; signal: number; histogram: number }>;
    unavailable?: Unavailable;
  };
  vwap?: { value: Maybe; series: Point[]; unavailable?: Unavailable };
  bollinger?: {
    mult: number;
    period: number;
    lower: Maybe;
    upper: Maybe;
    middle: Maybe;
    percentB: Maybe;
    bandwidthPct: Maybe;
    series: Array<{ t: number; lower: number; upper: number; middle: number }>;
    unavailable?: Unavailable;
  };
}

/** The "not enough candles" note for the values of one indicator that need more candles than were available. */
export function unavailableNote(
  needs: ReadonlyArray<readonly [string, number]>,
  available: number,
): Unavailable | undefined {
  const missing = needs.filter(([, need]) => available < need);
  if (missing.length === 0) return undefined;
  const list = missing.map(([name, need]) => `${name} needs ${need}`).join(', ');
  return {
    values: missing.map(([name]) => name),
    candlesNeeded: Math.max(...missing.map(([, need]) => need)),
    message:
      `Not enough candles: ${list}, but only ${available} ${available === 1 ? 'was' : 'were'} available, so ` +
      `${missing.length === 1 ? 'it is' : 'they are'} null. Raise \`limit\` (max 500); a coin with a short history ` +
      'has more candles on a shorter interval.',
  };
}

const withNote = <T extends object>(body: T, note: Unavailable | undefined): T & { unavailable?: Unavailable } =>
  note ? { ...body, unavailable: note } : body;

/** The candles a report covers: every line, their count, the indexes of the series' tail and the last close. */
interface ReportWindow {
  lines: Lines;
  n: number;
  tail: number[];
  lastClose: Maybe;
}

const at = (line: Line, i: number): Maybe => line[i] ?? null;

/** One line's points over the tail, leaving out candles where it has no value yet. */
function series(w: ReportWindow, line: Line): Point[] {
  return w.tail.flatMap((i) => (line[i] == null ? [] : [{ t: w.lines.times[i]!, v: line[i]! }]));
}

/** ATR: the last value, also as a percentage of the last close, and its series. */
function atrReport(w: ReportWindow): NonNullable<IndicatorReport['atr']> {
  const value = last(w.lines.atr);
  const pctOfClose = value !== null && w.lastClose ? (value / w.lastClose) * 100 : null;
  return withNote(
    { value, period: PERIODS.atr, pctOfClose, series: series(w, w.lines.atr) },
    unavailableNote([['atr', CANDLES_NEEDED.atr]], w.n),
  );
}

/** EMA 20/50/200: the last values and a series of the candles where EMA 20 is known. */
function emaReport({ lines, n, tail }: ReportWindow): NonNullable<IndicatorReport['ema']> {
  return withNote(
    {
      ema20: last(lines.ema20),
      ema50: last(lines.ema50),
      ema200: last(lines.ema200),
      series: tail.flatMap((i) => {
        const ema20 = at(lines.ema20, i);
        return ema20 === null
          ? []
          : [{ t: lines.times[i]!, ema20, ema50: at(lines.ema50, i), ema200: at(lines.ema200, i) }];
      }),
    },
    unavailableNote(
      [
        ['ema20', CANDLES_NEEDED.ema20],
        ['ema50', CANDLES_NEEDED.ema50],
        ['ema200', CANDLES_NEEDED.ema200],
      ],
      n,
    ),
  );
}

/** SMA 20/50: the last values and a series of the candles where SMA 20 is known. */
function smaReport({ lines, n, tail }: ReportWindow): NonNullable<IndicatorReport['sma']> {
  return withNote(
    {
      sma20: last(lines.sma20),
      sma50: last(lines.sma50),
      series: tail.flatMap((i) => {
        const sma20 = at(lines.sma20, i);
        return sma20 === null ? [] : [{ t: lines.times[i]!, sma20, sma50: at(lines.sma50, i) }];
      }),
    },
    unavailableNote(
      [
        ['sma20', CANDLES_NEEDED.sma20],
        ['sma50', CANDLES_NEEDED.sma50],
      ],
      n,
    ),
  );
}

/** MACD with its periods, the last MACD, signal and histogram, and a series of the candles where all three are known. */
function macdReport({ lines, n, tail }: ReportWindow): NonNullable<IndicatorReport['macd']> {
  return withNote(
    {
      fast: PERIODS.macdFast,
      slow: PERIODS.macdSlow,
      signal: PERIODS.macdSignal,
      value: last(lines.macd),
      signalValue: last(lines.macdSignal),
      histogram: last(lines.macdHistogram),
      series: tail.flatMap((i) => {
        const [macd, signal, histogram] = [at(lines.macd, i), at(lines.macdSignal, i), at(lines.macdHistogram, i)];
        return macd === null || signal === null || histogram === null
          ? []
          : [{ t: lines.times[i]!, macd, signal, histogram }];
      }),
    },
    unavailableNote([['macd', CANDLES_NEEDED.macd]], n),
  );
}

/** Bollinger bands: the last bands, %B of the last close, bandwidth, and a series of the candles where all are known. */
function bollingerReport({ lines, n, tail, lastClose }: ReportWindow): NonNullable<IndicatorReport['bollinger']> {
  const [lower, middle, upper] = [last(lines.bbLower), last(lines.bbMiddle), last(lines.bbUpper)];
  const flat = lower === null || upper === null || upper === lower;
  return withNote(
    {
      mult: PERIODS.bollingerMult,
      period: PERIODS.bollinger,
      lower,
      upper,
      middle,
      percentB: flat || lastClose === null ? null : (lastClose - lower) / (upper - lower),
      bandwidthPct: lower === null || upper === null || !middle ? null : ((upper - lower) / middle) * 100,
      series: tail.flatMap((i) => {
        const [lo, mid, up] = [at(lines.bbLower, i), at(lines.bbMiddle, i), at(lines.bbUpper, i)];
        return lo === null || mid === null || up === null
          ? []
          : [{ t: lines.times[i]!, lower: lo, upper: up, middle: mid }];
      }),
    },
    unavailableNote([['bollinger', CANDLES_NEEDED.bollinger]], n),
  );
}

type Builders = { [K in Indicator]: (w: ReportWindow) => NonNullable<IndicatorReport[K]> };

/** How each indicator's entry is built from the window. */
const BUILDERS: Builders = {
  atr: atrReport,
  ema: emaReport,
  rsi: (w) =>
    withNote(
      { value: last(w.lines.rsi), period: PERIODS.rsi, series: series(w, w.lines.rsi) },
      unavailableNote([['rsi', CANDLES_NEEDED.rsi]], w.n),
    ),
  sma: smaReport,
  macd: macdReport,
  vwap: (w) =>
    withNote(
      { value: last(w.lines.vwap), series: series(w, w.lines.vwap) },
      unavailableNote([['vwap', CANDLES_NEEDED.vwap]], w.n),
    ),
  bollinger: bollingerReport,
};

/** Adds one indicator's entry to the report. */
function addEntry<K extends Indicator>(report: IndicatorReport, name: K, w: ReportWindow): void {
  report[name] = BUILDERS[name](w);
}

/** Builds the requested indicators' values, series (last `points` candles, newest last) and not-enough-candles notes. */
export function buildReport(lines: Lines, wanted: readonly Indicator[], points: number): IndicatorReport {
  const n = lines.times.length;
  const tail = Array.from({ length: Math.min(points, n) }, (_, k) => n - Math.min(points, n) + k);
  const w: ReportWindow = { lines, n, tail, lastClose: lines.closes[n - 1] ?? null };
  const report: IndicatorReport = {};
  for (const name of wanted) addEntry(report, name, w);
  return report;
}
