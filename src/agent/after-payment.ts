/**
 * What a seller's answer to a payment the agent sent says about the money, read from one table (docs/agents.md,
 * "What a refusal means"): refused before any settlement (the reservation is released at once, no chain check),
 * already used (the same payment re-sent: it settled), still running or still settling (re-send the same payment
 * later), or ambiguous (it may have been charged: the chain decides, and what the chain cannot tell stays pending).
 * A success is not classified here; neither is a lost answer (always ambiguous).
 */
import { meansAlreadyUsed } from './chain-check.js';
import { remoteCode, type RemoteAnswer } from './remote.js';

/** Where a sent payment stands after the seller's answer. */
export type AnswerClass = 'before_settlement' | 'already_used' | 'in_flight' | 'settling' | 'ambiguous';

/** The class of an answer, the reason it carried, and the row of the table that decided it (in words). */
export interface AnswerVerdict {
  type: AnswerClass;
  reason: string | undefined;
  rule: string;
}

/** What the table reads of one answer. */
interface AnswerFacts {
  kind: 'challenge' | 'error';
  status: number;
  /** The settlement's reason when the answer carries a failed receipt, else the refusal's code. */
  reason: string | undefined;
  /** The answer carries a receipt whose settlement failed (x402 `PAYMENT-RESPONSE` with `success: false`). */
  settleFailed: boolean;
  /** A transaction the answer names (a receipt's hash): something was sent to the chain. */
  transaction: string | undefined;
  /** This payment was sent before (a resumed pending payment, or a re-send after a lost answer). */
  resent: boolean;
}

/** Refusals the x402 and MPP specifications, the official SDK and Tollbooth give before any settlement starts. */
const BEFORE_CODES = new Set([
  // Tollbooth's broker (src/shared/errors.ts): read, matched and refused before verification.
  'invalid_payment',
  'invalid_x402_version',
  'no_matching_payment_requirements',
  'unsupported_payment_rail',
  'authorization_window_too_long',
  'invalid_payment_identifier',
  'payment_identifier_conflict',
  // Tollbooth's admission: a tool's worker queue was full, refused (503) before the payment was read.
  'tool_busy',
  // Facilitator verdicts of the x402 specification and the official SDK outside the `invalid_*` family.
  'insufficient_funds',
  'payment_expired',
  'extension_echo_mismatch',
  'asset_not_deployed_contract',
  'eip6492_factory_not_allowed',
  // MPP problem types a credential is refused with before it is verified (mppx servers that add no reason).
  'malformed-credential',
  'invalid-challenge',
  'payment-expired',
  'method-unsupported',
  'invalid-payload',
  'bad-request',
  'payment-required',
]);
/** Verification verdict families (x402 `invalid_*`, `unsupported_*`, Permit2, upto, EIP-2612) and MPP's own refusals. */
const BEFORE_FAMILIES =
  /^(invalid_|unsupported_|permit2_|upto_|eip2612_|mpp_)|^(payment required|no matching payment requirements)\b/i;
/** Words of a settlement-stage verdict: a transaction may have been sent (reverted, unconfirmed, an exception). */
const AFTER_SENDING =
  /transaction_failed|transfer_event|transaction_state|settle|confirm|timed_out|timeout|block_height|broadcast|deployment_failed|post_/i;

/** One row: when it applies, the class it gives, and why (shown in notes and logs). */
interface Row {
  when: (f: AnswerFacts) => boolean;
  type: AnswerClass;
  rule: string;
}

/** The table, first matching row wins; the last row catches everything else as ambiguous. */
const TABLE: readonly Row[] = [
  { when: (f) => f.reason === 'payment_in_flight', type: 'in_flight', rule: 'the seller is still running the call' },
  {
    when: (f) => f.reason === 'settlement_pending' || f.reason === 'settlement_outcome_unknown',
    type: 'settling',
    rule: 'the seller does not know yet whether its settlement went through',
  },
  {
    when: (f) => f.resent && meansAlreadyUsed(f.reason),
    type: 'already_used',
    rule: 'the very same payment, sent again, is refused as already used: it settled',
  },
  {
    when: (f) => meansAlreadyUsed(f.reason),
    type: 'ambiguous',
    rule: 'an "already used" refusal of a payment sent once',
  },
  { when: (f) => Boolean(f.transaction), type: 'ambiguous', rule: 'the answer names a transaction' },
  {
    when: (f) => f.reason !== undefined && AFTER_SENDING.test(f.reason),
    type: 'ambiguous',
    rule: 'a settlement-stage reason: a transaction may have been sent',
  },
  {
    when: (f) => f.resent,
    type: 'ambiguous',
    rule: 'a refusal of a payment sent again says nothing of the earlier attempt',
  },
  {
    when: (f) => f.reason === 'facilitator_unavailable',
    type: 'before_settlement',
    rule: 'the facilitator failed before anything was sent to the chain',
  },
  {
    when: (f) => f.reason !== undefined && (BEFORE_CODES.has(f.reason) || BEFORE_FAMILIES.test(f.reason)),
    type: 'before_settlement',
    rule: 'a verification refusal, given before any settlement',
  },
  {
    when: (f) => f.kind === 'error' && !f.settleFailed && f.status >= 400 && f.status < 500 && f.status !== 402,
    type: 'before_settlement',
    rule: 'a 4xx answer: a seller settles only after a successful response',
  },
  {
    when: (f) => f.kind === 'error' && f.status >= 500,
    type: 'ambiguous',
    rule: 'a 5xx answer after the payment was sent',
  },
  { when: () => true, type: 'ambiguous', rule: 'a refusal this client does not recognise' },
];

/** The facts the table reads of a challenge or error answer. */
function factsOf(answer: Extract<RemoteAnswer, { type: 'challenge' | 'error' }>, resent: boolean): AnswerFacts {
  const { receipt } = answer;
  const code =
    remoteCode(answer.body) ?? (answer.type === 'challenge' ? answer.challenge?.error : undefined) ?? undefined;
  const settleFailed = receipt !== undefined && receipt.success === false;
  return {
    kind: answer.type,
    status: answer.status,
    reason: settleFailed ? (receipt.errorReason ?? code) : code,
    settleFailed,
    transaction: receipt?.transaction || undefined,
    resent,
  };
}

/** Classifies the seller's answer (a challenge or an error) to a payment the agent sent. */
export function classifyAnswer(
  answer: Extract<RemoteAnswer, { type: 'challenge' | 'error' }>,
  resent: boolean,
): AnswerVerdict {
  const facts = factsOf(answer, resent);
  const row = TABLE.find((r) => r.when(facts))!;
  return { type: row.type, reason: facts.reason, rule: row.rule };
}
