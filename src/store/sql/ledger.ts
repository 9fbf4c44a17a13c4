import type { PaymentLedger } from '../ledger.js';
import * as claims from './claims.js';
import * as idempotency from './idempotency.js';
import type { SqlPort } from './port.js';
import * as receipts from './receipts.js';

/** The payment ledger over a SQL port. */
export function sqlPaymentLedger(port: SqlPort): PaymentLedger {
  return {
    claimPayment: (claim) => claims.claimPayment(port, claim),
    completePayment: (receipt) => claims.completePayment(port, receipt),
    releasePayment: (replayKey) => claims.releasePayment(port, replayKey),
    markPaymentPending: (replayKey, details) => claims.markPaymentPending(port, replayKey, details),
    releasePending: (receipt) => claims.releasePending(port, receipt),
    listPending: () => claims.listPending(port),
    listStaleClaims: (before) => claims.listStaleClaims(port, before),
    recordReceipt: (receipt) => receipts.recordReceipt(port, receipt),
    listReceipts: (options) => receipts.listReceipts(port, options),
    claimIdempotency: (claim) => idempotency.claimIdempotency(port, claim),
    completeIdempotency: (id, result) => idempotency.completeIdempotency(port, id, result),
    releaseIdempotency: (id) => idempotency.releaseIdempotency(port, id),
    purgeIdempotency: (now) => idempotency.purgeIdempotency(port, now),
    durable: () => port.durable(),
  };
}
