import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { Transport } from '../store/store.js';
import type { Challenge } from './requirements.js';

/** A payment that passed matching, the replay guard and verification; settle or release it. */
export interface PaymentTicket {
  tool: string;
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  replayKey: string;
  payer: string;
  transport: Transport;
  /** Hash of tool + canonical input: what this payment pays for. */
  requestHash: string;
  /** The client's `payment-identifier` id, when it sent one. */
  idempotencyId?: string;
}

/** A refused payment: status, snake_case reason, a sentence for the caller, and the challenge to retry with. */
export interface PaymentRejection {
  type: 'rejected';
  status: 400 | 402 | 409 | 412 | 502;
  reason: string;
  message: string;
  challenge: Challenge;
}

/** Outcome of reading and verifying a payment before the handler runs. */
export type BeginOutcome =
  | { type: 'verified'; ticket: PaymentTicket }
  /** An earlier call already delivered with this payment (idempotent retry, or a late-confirmed settlement): its stored result, nothing runs or settles again. */
  | { type: 'replayed'; output: unknown; receipt: SettleResponse }
  | PaymentRejection;

/** Outcome of settling after the handler succeeded. */
export type SettleOutcome =
  | { type: 'settled'; receipt: SettleResponse }
  /** The outcome is not known yet (timeout, `settlement_pending`): the output is kept; the same payment retried later receives it once confirmed. */
  | { type: 'pending'; receipt: SettleResponse }
  | { type: 'failed'; receipt: SettleResponse; challenge: Challenge };

/** Reasons the broker itself emits (facilitator reasons pass through unchanged). */
export const REASONS = {
  malformed: 'invalid_payment',
  wrongVersion: 'invalid_x402_version',
  noMatch: 'no_matching_payment_requirements',
  unsupportedRail: 'unsupported_payment_rail',
  inFlight: 'payment_in_flight',
  alreadyUsed: 'payment_already_used',
  facilitatorUnavailable: 'facilitator_unavailable',
  settlementPending: 'settlement_pending',
  invalidIdentifier: 'invalid_payment_identifier',
  identifierConflict: 'payment_identifier_conflict',
} as const;
