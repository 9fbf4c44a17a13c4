import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { PaymentProtocol, Transport } from '../store/store.js';
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
  /** The client's `payment-identifier` id, when it sent one (for an MPP credential: derived from its challenge id). */
  idempotencyId?: string;
  /** The protocol the payment came in; absent means x402. */
  protocol?: PaymentProtocol;
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
  /**
   * The outcome is not known yet: the output is kept; the same payment retried later receives it once confirmed. The
   * receipt's `errorReason` is `settlement_pending` (with the transaction hash) or `settlement_outcome_unknown` (no hash).
   */
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
  /** The settlement was broadcast and is not confirmed yet; the receipt carries its transaction hash and network. */
  settlementPending: 'settlement_pending',
  /** The settle call itself got no answer (timeout, dropped connection): no transaction is known, the money may or may not move. */
  settlementUnknown: 'settlement_outcome_unknown',
  invalidIdentifier: 'invalid_payment_identifier',
  identifierConflict: 'payment_identifier_conflict',
} as const;

/**
 * A settlement whose outcome is open, under the reason that says what is known: `settlement_pending` only with the
 * broadcast transaction's hash and network; without a hash, `settlement_outcome_unknown` (nothing to wait for yet).
 */
export function pendingReceipt(result: SettleResponse, network: string): SettleResponse {
  if (result.success || result.errorReason !== REASONS.settlementPending) return result;
  const withNetwork = result.network ? result : { ...result, network: network as SettleResponse['network'] };
  return withNetwork.transaction ? withNetwork : { ...withNetwork, errorReason: REASONS.settlementUnknown };
}

/** The reason and advice for a payment sent again while its settlement is still open (with or without a known hash). */
export function openSettlement(transaction: string, network: string): { reason: string; message: string } {
  const retry =
    'Retry the same request with the same payment later to receive its result; do not sign a new payment for it.';
  if (!transaction) {
    return {
      reason: REASONS.settlementUnknown,
      message: `This payment paid for a call whose settlement got no answer: no transaction is known yet, and whether the money moved is still being found out. ${retry}`,
    };
  }
  return {
    reason: REASONS.settlementPending,
    message: `This payment paid for a call whose settlement (transaction ${transaction} on ${network}) is still being confirmed. ${retry}`,
  };
}
