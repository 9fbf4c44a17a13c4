/** The CPU-bound part of crypto-indicators as a worker job: the lines, the report and the summary from the candles. */
import { computeLines, type Indicator, type Ohlcv } from './compute.js';
import { buildReport, type IndicatorReport } from './report.js';
import { summarize, type Summary } from './summary.js';

/** What the job is given: the candles (oldest first) and what to report. */
export interface IndicatorJob {
  candles: Ohlcv[];
  indicators: Indicator[];
  points: number;
  coin: string;
  interval: string;
}

/** The indicators report and its summary over the given candles. */
export function indicatorReport(job: IndicatorJob): { indicators: IndicatorReport; summary: Summary } {
  const lines = computeLines(job.candles);
  return {
    indicators: buildReport(lines, job.indicators, job.points),
    summary: summarize(lines, job.coin, job.interval),
  };
}
