import { z } from 'zod';

/** The 14 candle intervals shared by the perpetual-futures endpoints. */
export const CANDLE_INTERVALS = [
  '1m',
  '3m',
  '5m',
  '15m',
  '30m',
  '1h',
  '2h',
  '4h',
  '8h',
  '12h',
  '1d',
  '3d',
  '1w',
  '1M',
] as const;

/** Candle interval enum, default `1h`. */
export const CandleIntervalSchema = z
  .enum(CANDLE_INTERVALS)
  .default('1h')
  .describe('Candle interval; one of 1m 3m 5m 15m 30m 1h 2h 4h 8h 12h 1d 3d 1w 1M. Default 1h.');

/** A perpetual ticker such as BTC or ETH. */
export const PerpCoinSchema = z
  .string()
  .trim()
  .min(1)
  .max(32)
  .describe('Perpetual ticker on the exchange, e.g. BTC, ETH, SOL.');

/** An EVM address (0x + 40 hex, any case). */
export const EvmAddressSchema = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex EVM address');

/** A Solana base58 address (32–44 base58 characters). */
export const SolanaAddressSchema = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'must be a base58 Solana address');

/** A unix timestamp in milliseconds. */
export const TimestampMsSchema = z.number().int().describe('Unix time in milliseconds.');

/** An ISO-8601 timestamp string. */
export const IsoTimestampSchema = z.string().describe('ISO-8601 timestamp.');
