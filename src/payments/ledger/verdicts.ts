/**
 * What a caller is told of a facilitator's verdict: a reason code and our own sentence, never the facilitator's text
 * (it may echo a credential, an RPC URL or internals); that text goes to the log only, where src/config/redact.ts blanks it.
 * The payer of a receipt is the one we read off the payment ourselves, never the one a facilitator claims.
 */
import type { SettleResponse } from '@x402/core/types';
import type { PaymentCode } from '../../shared/errors.js';
import type { Logger } from '../../shared/log.js';
import { NOT_SETTLED } from '../../pipeline/charge-note.js';

/** A reason code as x402 spells them: snake_case words, none longer than 24 characters (no key or hash fits). */
const REASON = /^[a-z][a-z0-9]{0,23}(?:_[a-z0-9]{1,24}){1,12}$/;

/** The facilitator's reason when it is a plain x402 reason code, else `fallback`. */
export function ownReason(reason: string | undefined, fallback: string): string {
  return reason !== undefined && reason.length <= 120 && REASON.test(reason) ? reason : fallback;
}

/** What a reason says went wrong with the payment, in our words. */
const WHY: ReadonlyArray<[RegExp, string]> = [
  [/allowance/, 'the payer has not approved the Permit2 contract for this token yet; approve it, then'],
  [/insufficient|balance/, "the payer's balance does not cover the amount"],
  [/signature/, 'its signature does not check out'],
  [
    /expired|deadline|valid_before|not_yet_valid|too_early|valid_after|lifetime/,
    'its validity window does not cover now',
  ],
  [/recipient|pay_to|receiver/, 'it pays another recipient than the one asked'],
  [/amount|value/, 'its amount is not the price asked'],
  [/nonce|already|replay|used/, 'its authorization was already used'],
  [/simulation/, 'its transaction failed simulation (an expired blockhash or a low balance, for example)'],
  [/network|chain|asset|mint|scheme/, 'it is for another network, asset or scheme than the one asked'],
];

function why(reason: string): string {
  return WHY.find(([pattern]) => pattern.test(reason))?.[1] ?? 'the payment facilitator refused it';
}

/** Our sentence for a payment the facilitator refused to verify. */
export function notVerifiedMessage(reason: string): string {
  return `The payment did not verify (${reason}): ${why(reason)}. Sign a new authorization for one of the accepted options.`;
}

/** Our sentence for the receipt of a settlement that failed or is still open. */
export function settlementMessage(reason: string): string {
  switch (reason) {
    case 'settlement_outcome_unknown' satisfies PaymentCode:
      return 'The settlement got no answer; whether the payment was taken is being found out. Retry the same request with the same payment; do not sign a new one.';
    case 'settlement_pending' satisfies PaymentCode:
      return 'The settlement transaction was broadcast and is not confirmed yet. Retry the same request with the same payment; do not sign a new one.';
    default:
      return `The payment did not settle (${reason}): ${why(reason)}. ${NOT_SETTLED}; sign a new authorization.`;
  }
}

/** True when two payer ids are the same account (EVM addresses compare without case). */
export function samePayer(a: string, b: string): boolean {
  return a === b || (/^0x[0-9a-fA-F]{40}$/.test(a) && a.toLowerCase() === b.toLowerCase());
}

/**
 * A facilitator's settle answer as our receipt: the payer we verified, our reason code and sentence. The facilitator's
 * own text and a payer that differs from ours are logged.
 */
export function ownSettlement(
  result: SettleResponse,
  payer: string,
  log: Logger,
  context: Record<string, unknown>,
): SettleResponse {
  if (result.payer && !samePayer(result.payer, payer))
    log.warn('the facilitator named another payer than the one we verified; the receipt names ours', {
      ...context,
      payer,
      facilitatorPayer: result.payer,
    });
  const { errorMessage, ...rest } = result;
  if (result.success) return { ...rest, payer };
  const reason = ownReason(result.errorReason, 'settlement_failed');
  // An outcome left unknown by an exception was logged where it was caught.
  if (reason !== 'settlement_outcome_unknown' && (errorMessage || reason !== result.errorReason))
    log.warn('the settlement was refused or is open', {
      ...context,
      reason,
      facilitatorReason: result.errorReason,
      facilitatorMessage: errorMessage,
    });
  return { ...rest, payer, errorReason: reason, errorMessage: settlementMessage(reason) };
}
