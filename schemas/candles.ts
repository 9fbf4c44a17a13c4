import { z } from 'zod';
import { type CANDLE_INTERVALS, TimestampMsSchema } from './common.js';

/** One of the 14 candle intervals (`1m` … `1M`). */
export type CandleInterval = (typeof CANDLE_INTERVALS)[number];

/** Most candles a perpetual-futures endpoint fetches in one call (docs/spec-notes.md#limits). */
export const MAX_CANDLES = 500;

/** Number of candles to fetch: a JSON integer from 1 to 500 with a per-endpoint default. */
export function candleLimitSchema(defaultValue: number) {
  return z
    .number()
    .int()
    .min(1)
    .max(MAX_CANDLES)
    .default(defaultValue)
    .describe(
      `Number of most recent candles to fetch; integer 1–${MAX_CANDLES}, default ${defaultValue}. ` +
        'The exchange keeps only its latest 5,000 candles per coin and interval, so fewer may come back.',
    );
}

/** Candle open time in unix milliseconds, as in every candle-derived series. */
export const CandleTimeSchema = TimestampMsSchema.describe('Candle open time, unix milliseconds.');

/** Name of the upstream market-data source a candle endpoint read from. */
export const MarketSourceSchema = z
  .string()
  .describe('Name of the upstream data source the candles came from (e.g. `Hyperliquid info API`).');
