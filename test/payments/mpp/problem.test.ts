import { describe, expect, it } from 'vitest';
import { PAYMENT_CODES } from '../../../src/shared/errors.js';
import { MPP_ERROR_TYPES, MPP_REASONS, problemFor } from '../../../src/payments/mpp/problem.js';

const type = (reason: string) =>
  problemFor(reason, 402, 'detail').type.replace('https://paymentauth.org/problems/', '');

describe('MPP problem details for our payment outcomes', () => {
  it('map every reason the broker emits to an MPP problem type', () => {
    expect(Object.fromEntries(PAYMENT_CODES.map((r) => [r, type(r)]))).toEqual({
      invalid_payment: 'malformed-credential',
      invalid_x402_version: 'malformed-credential',
      no_matching_payment_requirements: 'invalid-challenge',
      unsupported_payment_rail: 'method-unsupported',
      authorization_window_too_long: 'invalid-payload',
      payment_in_flight: 'payment-action-required',
      payment_already_used: 'invalid-challenge',
      facilitator_unavailable: 'internal-payment-error',
      settlement_pending: 'payment-action-required',
      settlement_outcome_unknown: 'payment-action-required',
      invalid_payment_identifier: 'malformed-credential',
      payment_identifier_conflict: 'invalid-challenge',
    });
  });

  it("map every reason of the MPP path, and treat a facilitator's verdict on the authorization as a failed verification", () => {
    expect(Object.fromEntries(Object.values(MPP_REASONS).map((r) => [r, type(r)]))).toEqual({
      mpp_disabled: 'method-unsupported',
      mpp_and_x402_together: 'bad-request',
      mpp_method_unsupported: 'method-unsupported',
      mpp_invalid_challenge: 'invalid-challenge',
      mpp_payment_expired: 'payment-expired',
      mpp_invalid_payload: 'invalid-payload',
      mpp_recipient_mismatch: 'verification-failed',
      mpp_amount_mismatch: 'verification-failed',
      mpp_challenge_hash_mismatch: 'verification-failed',
      mpp_source_mismatch: 'verification-failed',
    });
    expect(type('invalid_exact_evm_signature')).toBe('verification-failed');
    expect(type('insufficient_funds')).toBe('verification-failed');
  });

  it('keep our status, sentence and reason, and name the challenge', () => {
    expect(problemFor('payment_in_flight', 409, 'wait', 'abc')).toEqual({
      type: 'https://paymentauth.org/problems/payment-action-required',
      title: 'Payment Action Required',
      status: 409,
      detail: 'wait',
      reason: 'payment_in_flight',
      challengeId: 'abc',
    });
  });
});

describe('the MPP problem types Tollbooth answers with', () => {
  it("are the type, title and status of mppx's error class of the same name", async () => {
    const { Errors } = await import('mppx');
    type Instance = { type: string; title: string; status: number };
    for (const [name, ours] of Object.entries(MPP_ERROR_TYPES)) {
      const Type = (Errors as unknown as Record<string, new (o: object) => Instance>)[name]!;
      const theirs = new Type({});
      expect({ name, type: theirs.type, title: theirs.title, status: theirs.status }).toEqual({ name, ...ours });
    }
  });
});
