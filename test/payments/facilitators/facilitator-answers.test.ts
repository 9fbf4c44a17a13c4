import { FacilitatorResponseError } from '@x402/core/server';
import { SettleError, VerifyError } from '@x402/core/types';
import { describe, expect, it } from 'vitest';
import {
  authReason,
  excerpt,
  parseAnswer,
  redacted,
  refusalError,
  VerifyAnswer,
} from '../../../src/payments/facilitators/facilitator-answers.js';

describe('reading a facilitator answer', () => {
  it('parses a verify answer and turns null optional fields into absent ones', () => {
    const answer = parseAnswer('verify', VerifyAnswer, '{"isValid":true,"payer":null}');
    expect(answer).toEqual({ isValid: true });
  });

  it('refuses invalid JSON and data of the wrong shape, quoting the body', () => {
    expect(() => parseAnswer('verify', VerifyAnswer, '<html>oops</html>')).toThrow(FacilitatorResponseError);
    expect(() => parseAnswer('verify', VerifyAnswer, '{"isValid":"yes"}')).toThrow(/invalid data: \{"isValid":"yes"\}/);
  });

  it("turns a non-2xx answer into the facilitator's verdict when its body carries one, else an error quoting it", () => {
    const verify = refusalError('verify', { status: 400, text: '{"isValid":false}', retryAfter: undefined });
    expect(verify).toBeInstanceOf(VerifyError);
    const settle = refusalError('settle', { status: 500, text: '{"success":false}', retryAfter: undefined });
    expect(settle).toBeInstanceOf(SettleError);
    const other = refusalError('settle', { status: 502, text: 'bad  gateway\n', retryAfter: undefined });
    expect(other.message).toBe('Facilitator settle failed (502): bad gateway');
  });

  it('blanks out the secrets we sent, with and without their Bearer prefix, and leaves short values alone', () => {
    expect(redacted('echo Bearer s3cret-token and s3cret-token, id', ['Bearer s3cret-token', 'id'])).toBe(
      'echo [redacted] and [redacted], id',
    );
  });

  it("quotes a refusal of our credentials with the facilitator's own reason, else an excerpt", () => {
    expect(authReason('{"message":"key revoked"}')).toBe('key revoked');
    expect(authReason('')).toBe('<empty response>');
    expect(excerpt('x'.repeat(300))).toHaveLength(200);
  });
});
