/**
 * The charge sentence, in one place. Whether a caller was charged is the paid pipeline's knowledge: handlers,
 * providers and workers say only what went wrong, and the paid pipeline ends every error of a paid call with the
 * charge fact. An error result of the paid pipeline is always answered before anything was settled (a settlement that
 * failed or whose outcome is open is its own result, with its own words from the broker), so its fact is that nothing
 * was charged. A free tool's answers never mention charges.
 */
import { ToolError } from '../shared/errors.js';

/** The charge fact of a paid call that ended before anything was settled. */
export const NOTHING_CHARGED = 'Nothing was charged.';

/** Every wording of a charge sentence the server has used: what a message must not already carry when it is noted. */
export const CHARGE_SENTENCE = /\b(nothing was charged|you were not charged|you have not been charged)\b/i;

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
