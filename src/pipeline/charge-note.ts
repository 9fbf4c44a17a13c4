/**
 * The charge sentence, in one place. Whether a caller was charged is the paid pipeline's knowledge: handlers,
 * providers, workers, the transports' own refusals and the payment layer say only what went wrong, and the paid
 * pipeline (or, for a refusal made before it, the transport's encoder) ends every error and refusal of a paid call
 * with the charge fact. An error result of the paid pipeline is always answered before anything was settled, so its
 * fact is that nothing was charged; a payment refusal says it unless the error table marks its payment as taken for
 * another call (`beforeAnyCharge`); a settlement that failed says it in {@link NOT_SETTLED}; one whose outcome is
 * open says what is known. A free tool's answers never mention charges.
 */
import { beforeAnyCharge, ToolError } from '../shared/errors.js';

/** The charge fact of a paid call that ended before anything was settled. */
export const NOTHING_CHARGED = 'Nothing was charged.';

/** Every wording of a charge sentence the server has used: what a message must not already carry when it is noted. */
export const CHARGE_SENTENCE = /\b(nothing was charged|you were not charged|you have not been charged)\b/i;

/** The fact of a settlement that failed after the call succeeded: nothing was taken, and the output is not given. */
export const NOT_SETTLED = 'Nothing was charged and the result is withheld';

/** A message ended with the charge fact, as one more sentence. */
export function noted(message: string, fact: string = NOTHING_CHARGED): string {
  const said = message.trimEnd();
  if (!said) return fact;
  return /[.!?)]$/.test(said) ? `${said} ${fact}` : `${said}. ${fact}`;
}

/**
 * A paid call's error that ended before anything was settled, with the charge fact appended to its message; the code,
 * field, details and cause stay. An error that already says it (a stray wording) is returned as it is, never twice.
 */
export function withChargeNote(error: ToolError): ToolError {
  if (CHARGE_SENTENCE.test(error.message)) return error;
  return new ToolError(error.code, noted(error.message), {
    field: error.field,
    details: error.details,
    cause: error.cause,
  });
}

/** A paid call's payment refusal with the charge fact appended to its message, unless its payment was taken elsewhere. */
export function withRefusalNote<R extends { reason: string; message: string }>(refusal: R): R {
  if (!beforeAnyCharge(refusal.reason) || CHARGE_SENTENCE.test(refusal.message)) return refusal;
  return { ...refusal, message: noted(refusal.message) };
}

/**
 * A refusal made before the paid pipeline (a transport's: an unreadable body, a method not allowed, a server failing
 * or shutting down, a rate limit): noted when the request was for a paid route, as it is, never noted, for any other.
 */
export function refusalFor(error: ToolError, paidRoute: boolean): ToolError {
  return paidRoute && beforeAnyCharge(error.code) ? withChargeNote(error) : error;
}
