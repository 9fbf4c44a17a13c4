import type { SettleResponse } from '@x402/core/types';
import { describe, expect, it } from 'vitest';
import { classifyAnswer, type AnswerClass } from '../../src/agent/after-payment.js';
import type { RemoteAnswer } from '../../src/agent/remote.js';

const challenge = { x402Version: 2 as const, accepts: [] };
/** A 402 answer as Tollbooth sends it over HTTP: the challenge in the body with the refusal's reason. */
const refusal = (reason: string, receipt?: SettleResponse): Extract<RemoteAnswer, { type: 'challenge' }> => ({
  type: 'challenge',
  status: 402,
  challenge: { ...challenge, error: reason },
  mpp: [],
  body: { ...challenge, error: reason, message: 'M.' },
  ...(receipt ? { receipt } : {}),
});
/** An MPP refusal (Problem Details): with Tollbooth's `reason`, or only the problem type of another server. */
const problem = (slug: string, reason?: string): Extract<RemoteAnswer, { type: 'challenge' }> => ({
  type: 'challenge',
  status: 402,
  mpp: [],
  body: { type: `https://paymentauth.org/problems/${slug}`, status: 402, ...(reason ? { reason } : {}) },
});
const error = (status: number, code?: string, receipt?: SettleResponse): Extract<RemoteAnswer, { type: 'error' }> => ({
  type: 'error',
  status,
  body: code ? { error: { code, message: 'M.' } } : 'Bad Gateway',
  ...(receipt ? { receipt } : {}),
});
const failed = (errorReason: string, transaction = ''): SettleResponse =>
  ({ success: false, errorReason, transaction, network: 'eip155:8453' }) as SettleResponse;

const cases: Array<[string, Extract<RemoteAnswer, { type: 'challenge' | 'error' }>, AnswerClass]> = [
  // Refused before any settlement: released at once.
  ['402 unsupported_payment_rail', refusal('unsupported_payment_rail'), 'before_settlement'],
  ['402 no_matching_payment_requirements', refusal('no_matching_payment_requirements'), 'before_settlement'],
  ['402 invalid_exact_evm_signature', refusal('invalid_exact_evm_signature'), 'before_settlement'],
  [
    '402 the official SDK\'s "No matching payment requirements"',
    refusal('No matching payment requirements'),
    'before_settlement',
  ],
  ['412 permit2_allowance_required', { ...refusal('permit2_allowance_required'), status: 412 }, 'before_settlement'],
  ['402 insufficient_funds', refusal('insufficient_funds'), 'before_settlement'],
  ['400 invalid_payment', error(400, 'invalid_payment'), 'before_settlement'],
  ['400 invalid_input', error(400, 'invalid_input'), 'before_settlement'],
  ['409 payment_identifier_conflict', error(409, 'payment_identifier_conflict'), 'before_settlement'],
  ['429 rate_limited', error(429, 'rate_limited'), 'before_settlement'],
  ['404 without a body', error(404), 'before_settlement'],
  ['502 facilitator_unavailable (verify failed)', error(502, 'facilitator_unavailable'), 'before_settlement'],
  ['402 authorization_window_too_long', refusal('authorization_window_too_long'), 'before_settlement'],
  ['503 tool_busy (refused before the payment was read)', error(503, 'tool_busy'), 'before_settlement'],
  ['503 shutting_down', error(503, 'shutting_down'), 'ambiguous'],
  [
    'a settlement failure the facilitator gave before sending (facilitator_unavailable, no transaction)',
    refusal('facilitator_unavailable', failed('facilitator_unavailable')),
    'before_settlement',
  ],
  [
    'a verification verdict repeated at settlement, no transaction',
    refusal('invalid_exact_evm_insufficient_balance', failed('invalid_exact_evm_insufficient_balance')),
    'before_settlement',
  ],
  ['MPP mpp_amount_mismatch', problem('verification-failed', 'mpp_amount_mismatch'), 'before_settlement'],
  [
    'MPP facilitator_unavailable (502)',
    { ...problem('internal-payment-error', 'facilitator_unavailable'), status: 502 },
    'before_settlement',
  ],
  ['MPP malformed-credential without a reason', problem('malformed-credential'), 'before_settlement'],
  // Still running or settling: re-sent later.
  ['409 payment_in_flight', error(409, 'payment_in_flight'), 'in_flight'],
  ['503 settlement_pending', error(503, 'settlement_pending', failed('settlement_pending', '0xabc')), 'settling'],
  ['409 settlement_outcome_unknown', error(409, 'settlement_outcome_unknown'), 'settling'],
  // May have been charged: the chain decides.
  ['500 internal', error(500, 'internal'), 'ambiguous'],
  ['502 from a proxy, no body', error(502), 'ambiguous'],
  ['504 upstream_timeout', error(504, 'upstream_timeout'), 'ambiguous'],
  ['402 with no reason', { ...refusal(''), challenge, body: {} }, 'ambiguous'],
  [
    'a settlement that failed naming a transaction',
    refusal('x', failed('invalid_exact_evm_transaction_failed', '0xabc')),
    'ambiguous',
  ],
  [
    'a settlement that failed after sending (transaction failed, no hash reported)',
    refusal('invalid_exact_evm_transaction_failed', failed('invalid_exact_evm_transaction_failed')),
    'ambiguous',
  ],
  [
    'a settlement exception reported as free text',
    refusal('x', failed('Transaction receipt could not be found')),
    'ambiguous',
  ],
  ['a settlement failure without a reason', refusal('Settlement failed', failed('Settlement failed')), 'ambiguous'],
  ['MPP settlement_failed', problem('verification-failed', 'settlement_failed'), 'ambiguous'],
  ['MPP verification-failed without a reason', problem('verification-failed'), 'ambiguous'],
  ['"already used" to a payment sent once', refusal('invalid_exact_evm_nonce_already_used'), 'ambiguous'],
];

describe('what an answer to a sent payment says about the money', () => {
  it.each(cases)('%s → %s', (_name, answer, expected) => {
    expect(classifyAnswer(answer, false).type).toBe(expected);
  });

  it('reads "already used" to the very same payment sent again as settled', () => {
    expect(classifyAnswer(refusal('invalid_exact_evm_nonce_already_used'), true).type).toBe('already_used');
    expect(classifyAnswer(error(402, 'payment_already_used'), true).type).toBe('already_used');
  });

  it('never releases a payment sent before on a later refusal: the earlier attempt may have settled', () => {
    for (const [, answer, expected] of cases)
      if (expected === 'before_settlement') expect(classifyAnswer(answer, true).type).toBe('ambiguous');
  });

  it('names the reason and the rule that decided', () => {
    expect(classifyAnswer(error(502, 'facilitator_unavailable'), false)).toEqual({
      type: 'before_settlement',
      reason: 'facilitator_unavailable',
      rule: 'the facilitator failed before anything was sent to the chain',
    });
  });
});
