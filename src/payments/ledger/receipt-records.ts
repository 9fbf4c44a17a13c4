import type { SettleResponse } from '@x402/core/types';
import type { ReceiptRecord } from '../../store/ledger.js';
import type { PaymentTicket } from './outcomes.js';
import { receiptKindOf } from '../batch/kinds.js';

/** The receipt of a payment the ledger already knows as settled (a replay of an undelivered result). */
export function settledReceipt(ticket: PaymentTicket, transaction: string): SettleResponse {
  return {
    success: true,
    transaction,
    network: ticket.requirements.network,
    payer: ticket.payer,
    amount: ticket.requirements.amount,
  };
}

/** The ledger's receipt record for a settlement attempt of a ticket, settled or failed. */
export function receiptOf(ticket: PaymentTicket, result: SettleResponse): ReceiptRecord {
  return {
    replayKey: ticket.replayKey,
    tool: ticket.tool,
    network: ticket.requirements.network,
    // The payer we read off the payment ourselves, never the one a facilitator claims.
    payer: ticket.payer,
    amount: result.amount ?? ticket.requirements.amount,
    transaction: result.transaction,
    status: result.success ? 'settled' : 'failed',
    ...(result.errorReason ? { errorReason: result.errorReason } : {}),
    transport: ticket.transport,
    protocol: ticket.protocol ?? 'x402',
    ...receiptKindOf(ticket.payload, ticket.requirements),
    createdAt: new Date().toISOString(),
  };
}
