/**
 * The answer to a call whose settlement is still open, in the one error body every transport sends (HTTP answers it
 * with 503 and Retry-After, MCP as an error result): neutral, so no transport encoder imports another.
 */
import type { SettleResponse } from '@x402/core/types';
import type { ErrorBody } from '../schemas/errors.js';

/** Seconds a caller is asked to wait before retrying a call whose settlement is still being confirmed. */
export const PENDING_RETRY_AFTER_SECONDS = 10;

/**
 * The error body of a call whose settlement outcome is not known yet: retry with the same payment, never a new one.
 * `settlement_pending` names the broadcast transaction and its network; `settlement_outcome_unknown` says that no
 * transaction is known (the settle call got no answer), so there is nothing to look up or wait for on chain yet.
 */
export function pendingBody(receipt: SettleResponse): ErrorBody {
  const retry = `Retry the same request with the same payment in ${PENDING_RETRY_AFTER_SECONDS} seconds to receive the result; do not sign a new payment for it.`;
  if (receipt.errorReason === 'settlement_pending' && receipt.transaction) {
    return {
      error: {
        code: 'settlement_pending',
        message: `The call succeeded and its payment was broadcast as transaction ${receipt.transaction} on ${receipt.network}, which is not confirmed yet. ${retry}`,
        retryable: true,
        details: { transaction: receipt.transaction, network: receipt.network },
      },
    };
  }
  return {
    error: {
      code: 'settlement_outcome_unknown',
      message: `The call succeeded but the settlement of its payment on ${receipt.network} got no answer: no transaction is known yet and the payment may or may not have been taken. ${retry}`,
      retryable: true,
      details: { network: receipt.network },
    },
  };
}
