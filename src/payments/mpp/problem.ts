import { PAYMENT_CODES, type PaymentCode } from '../../shared/errors.js';

/** Reasons only the MPP path emits (the broker's own and the facilitators' reasons are shared with x402). */
export const MPP_REASONS = {
  /** MPP=off, and a request came with `Authorization: Payment`. */
  disabled: 'mpp_disabled',
  /** Both an MPP credential and an x402 payment came with one request. */
  bothProtocols: 'mpp_and_x402_together',
  methodUnsupported: 'mpp_method_unsupported',
  invalidChallenge: 'mpp_invalid_challenge',
  expired: 'mpp_payment_expired',
  invalidPayload: 'mpp_invalid_payload',
  recipientMismatch: 'mpp_recipient_mismatch',
  amountMismatch: 'mpp_amount_mismatch',
  challengeHashMismatch: 'mpp_challenge_hash_mismatch',
  sourceMismatch: 'mpp_source_mismatch',
} as const;

/** A reason of the MPP path. */
export type MppReason = (typeof MPP_REASONS)[keyof typeof MPP_REASONS];

/** RFC 9457 Problem Details of a refused MPP payment, with the MPP problem type and our own reason code. */
export interface MppProblem {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** Our snake_case reason (the same code the x402 answer carries). */
  reason: string;
  challengeId?: string;
}

/** An MPP problem type: its URI, title and HTTP status, as mppx's error classes carry them (a test keeps them equal). */
export interface MppErrorType {
  type: string;
  title: string;
  /** 402 (answered with fresh challenges, so a client pays again), 400 for a request no payment can fix, 500. */
  status: 400 | 402 | 500;
}

const problem = (slug: string, title: string, status: MppErrorType['status'] = 402): MppErrorType => ({
  type: `https://paymentauth.org/problems/${slug}`,
  title,
  status,
});

/** The MPP problem types Tollbooth answers with, by mppx error class name. */
export const MPP_ERROR_TYPES = {
  BadRequestError: problem('bad-request', 'Bad Request', 400),
  InternalPaymentError: problem('internal-payment-error', 'Internal Payment Error', 500),
  InvalidChallengeError: problem('invalid-challenge', 'Invalid Challenge'),
  InvalidPayloadError: problem('invalid-payload', 'Invalid Payload'),
  MalformedCredentialError: problem('malformed-credential', 'Malformed Credential'),
  PaymentActionRequiredError: problem('payment-action-required', 'Payment Action Required'),
  PaymentExpiredError: problem('payment-expired', 'Payment Expired'),
  PaymentMethodUnsupportedError: problem('method-unsupported', 'Method Unsupported', 400),
  PaymentRequiredError: problem('payment-required', 'Payment Required'),
  VerificationFailedError: problem('verification-failed', 'Verification Failed'),
} as const satisfies Record<string, MppErrorType>;

type ErrorClass = MppErrorType;
const E = MPP_ERROR_TYPES;

/** The MPP error type of each reason the broker emits: a new broker reason fails to compile until it is mapped here. */
const BROKER: Record<PaymentCode, ErrorClass> = {
  invalid_payment: E.MalformedCredentialError,
  invalid_x402_version: E.MalformedCredentialError,
  no_matching_payment_requirements: E.InvalidChallengeError,
  unsupported_payment_rail: E.PaymentMethodUnsupportedError,
  authorization_window_too_long: E.InvalidPayloadError,
  payment_in_flight: E.PaymentActionRequiredError,
  payment_already_used: E.InvalidChallengeError,
  facilitator_unavailable: E.InternalPaymentError,
  settlement_pending: E.PaymentActionRequiredError,
  settlement_outcome_unknown: E.PaymentActionRequiredError,
  invalid_payment_identifier: E.MalformedCredentialError,
  payment_identifier_conflict: E.InvalidChallengeError,
};

/** The MPP error type of each reason of the MPP path. */
const OWN: Record<keyof typeof MPP_REASONS, ErrorClass> = {
  disabled: E.PaymentMethodUnsupportedError,
  bothProtocols: E.BadRequestError,
  methodUnsupported: E.PaymentMethodUnsupportedError,
  invalidChallenge: E.InvalidChallengeError,
  expired: E.PaymentExpiredError,
  invalidPayload: E.InvalidPayloadError,
  recipientMismatch: E.VerificationFailedError,
  amountMismatch: E.VerificationFailedError,
  challengeHashMismatch: E.VerificationFailedError,
  sourceMismatch: E.VerificationFailedError,
};

const byReason = new Map<string, ErrorClass>([
  ...PAYMENT_CODES.map((code) => [code, BROKER[code]] as const),
  ...Object.entries(OWN).map(([key, type]) => [MPP_REASONS[key as keyof typeof MPP_REASONS], type] as const),
]);

/**
 * The MPP error type of a reason: ours are mapped one by one (above); anything else is a facilitator's verdict on the
 * authorization (bad signature, insufficient funds, expired, settlement failed) and is a verification failure.
 */
export function mppErrorFor(reason: string): MppErrorType {
  return byReason.get(reason) ?? E.VerificationFailedError;
}

/**
 * Refusals whose payment may still settle, or be retried as it is (the facilitator did not answer): they keep their own
 * status and get no fresh challenge, which would invite the client to pay the same call a second time.
 */
const KEEPS_ITS_STATUS = new Set<string>([
  'payment_in_flight',
  'settlement_pending',
  'settlement_outcome_unknown',
  'facilitator_unavailable',
]);

/**
 * The HTTP status of a refused MPP credential, as the MPP draft and mppx answer it: 402 with fresh challenges for
 * every refusal whose MPP error type is a 402 (a malformed credential, one for another challenge or another request,
 * a failed verification), so an MPP client pays a fresh challenge and recovers; the refusals whose payment is still
 * in doubt, and those no payment can fix (400), keep the status the broker gave them.
 */
export function mppRefusalStatus(reason: string, status: number): number {
  if (KEEPS_ITS_STATUS.has(reason)) return status;
  return mppErrorFor(reason).status === 402 ? 402 : status;
}

/** The Problem Details of a refused MPP payment: the MPP type and title, our status, sentence and reason. */
export function problemFor(reason: string, status: number, detail: string, challengeId?: string): MppProblem {
  const { type, title } = mppErrorFor(reason);
  return { type, title, status, detail, reason, ...(challengeId ? { challengeId } : {}) };
}

/** The Problem Details of a call that came without payment. */
export function paymentRequiredProblem(detail: string): MppProblem {
  const error = E.PaymentRequiredError;
  return { type: error.type, title: error.title, status: 402, detail, reason: 'payment_required' };
}
