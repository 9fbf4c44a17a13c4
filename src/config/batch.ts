/**
 * The seller's x402 `batch-settlement` settings (BATCH_SETTLEMENT, BATCH_RECEIVER_AUTHORIZER_KEY, BATCH_WITHDRAW_DELAY):
 * whether paid tools offer payment channels, who authorizes their claims, and how long a payer's timed withdrawal waits.
 */
import type { Env } from './env.js';

/** Default delay of a payer's timed withdrawal: one day (docs/batch-settlement.md, trust model). */
export const DEFAULT_WITHDRAW_DELAY_SECONDS = 86_400;

/** Default lease of a call's channel reservation, renewed while its instance runs the call (docs/payments.md). */
const DEFAULT_RESERVATION_LEASE_SECONDS = 30;

/** The batch-settlement part of the configuration. */
export interface BatchSettings {
  /** True when paid tools offer `batch-settlement` entries (BATCH_SETTLEMENT=on or `--batch-settlement`). */
  enabled: boolean;
  /** The operator's receiver-authorizer key; absent = the facilitator's, from its `/supported` answer. Never log it. */
  receiverAuthorizerKey?: `0x${string}`;
  /** Seconds a payer's timed withdrawal waits (at least 900). */
  withdrawDelay: number;
  /** Seconds between claims (BATCH_CLAIM_INTERVAL). */
  claimInterval: number;
  /** Unclaimed token base units (decimal digits) that start a claim before the interval ends (BATCH_CLAIM_THRESHOLD). */
  claimThreshold: string;
  /** Seconds of idleness after which a channel is refunded (BATCH_REFUND_IDLE). */
  refundIdle: number;
  /** Seconds a call's channel reservation lasts unless its live instance renews it (BATCH_RESERVATION_LEASE). */
  reservationLease: number;
}

/** The configuration's part that carries the batch-settlement settings. */
export interface BatchConfigPart {
  /** Payment channels of the x402 `batch-settlement` scheme (off by default: challenges unchanged). */
  batch: BatchSettings;
}

/** The batch-settlement settings of a parsed environment. */
export function batchSettings(env: Env): BatchSettings {
  const key = env.BATCH_RECEIVER_AUTHORIZER_KEY as `0x${string}` | undefined;
  return {
    enabled: env.BATCH_SETTLEMENT === 'on',
    ...(key ? { receiverAuthorizerKey: key } : {}),
    withdrawDelay: env.BATCH_WITHDRAW_DELAY ?? DEFAULT_WITHDRAW_DELAY_SECONDS,
    claimInterval: env.BATCH_CLAIM_INTERVAL ?? 3600,
    claimThreshold: env.BATCH_CLAIM_THRESHOLD ?? '1000000',
    refundIdle: env.BATCH_REFUND_IDLE ?? 7 * 86_400,
    reservationLease: env.BATCH_RESERVATION_LEASE ?? DEFAULT_RESERVATION_LEASE_SECONDS,
  };
}
