import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { PaymentCode, RefusalStatus } from '../../shared/errors.js';
import type { PaymentProtocol, Transport } from '../../store/store.js';
import type { Challenge } from '../challenges/requirements.js';

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

/**
 * A refused payment: status, snake_case reason (a code of the table in src/shared/errors.ts, a facilitator's verdict, or an
 * MPP reason), a sentence for the caller that names no transport (each encoder adds where the payment goes), and the
 * challenge to retry with.
 */
export interface PaymentRejection {
  type: 'rejected';
  status: RefusalStatus;
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

/**
 * A settlement whose outcome is open, under the reason that says what is known: `settlement_pending` only with the
 * broadcast transaction's hash and network; without a hash, `settlement_outcome_unknown` (nothing to wait for yet).
 */
export function pendingReceipt(result: SettleResponse, network: string): SettleResponse {
  if (result.success || result.errorReason !== ('settlement_pending' satisfies PaymentCode)) return result;
  const withNetwork = result.network ? result : { ...result, network: network as SettleResponse['network'] };
  return withNetwork.transaction
    ? withNetwork
    : { ...withNetwork, errorReason: 'settlement_outcome_unknown' satisfies PaymentCode };
}

/** The reason and advice for a payment sent again while its settlement is still open (with or without a known hash). */
export function openSettlement(transaction: string, network: string): { reason: PaymentCode; message: string } {
  const retry =
    'Retry the same request with the same payment later to receive its result; do not sign a new payment for it.';
  if (!transaction) {
    return {
      reason: 'settlement_outcome_unknown',
      message: `This payment paid for a call whose settlement got no answer: no transaction is known yet, and whether the money moved is still being found out. ${retry}`,
    };
  }
  return {
    reason: 'settlement_pending',
    message: `This payment paid for a call whose settlement (transaction ${transaction} on ${network}) is still being confirmed. ${retry}`,
  };
}
