/** What a chain reader is asked about a settlement whose outcome was unknown, and what it answers (server and agent alike). */
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';

/** A settlement whose outcome was not known when the call ended (timeout, `settlement_pending`). */
export interface PendingSettlement {
  replayKey: string;
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  /** Transaction id reported so far; empty when none was reported. */
  transaction: string;
  /** When the payment was claimed (ISO time), if known: no settlement of it by us can be older. */
  claimedAt?: string;
}

/**
 * What the chain says about a pending settlement: settled with the transaction that did it (never empty), failed
 * (it can never happen), or pending, with why the chain could not decide when a rail can say.
 */
export type LookupResult =
  { type: 'settled'; transaction: string } | { type: 'failed'; reason: string } | { type: 'pending'; reason?: string };
