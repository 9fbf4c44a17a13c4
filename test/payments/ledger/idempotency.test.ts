import type { PaymentPayload } from '@x402/core/types';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { paymentIdentifier } from '../../../src/payments/ledger/idempotency.js';
import { requestHash } from '../../../src/shared/json.js';
import { buildChallenge } from '../../../src/payments/challenges/requirements.js';
import { annuity } from '../../../tools/annuity.js';
import { tokenReport } from '../../../tools/token-report.js';

const config = loadConfig({});
const toolsChallenge = buildChallenge(config, annuity);
const withId = (id: unknown): PaymentPayload =>
  ({
    x402Version: 2,
    accepted: toolsChallenge.accepts[0],
    payload: {},
    extensions: { 'payment-identifier': { info: { required: false, id } } },
  }) as unknown as PaymentPayload;

describe('the request hash', () => {
  it('is the same for inputs that differ only in key order, at every depth', () => {
    expect(requestHash('geo-distance', { from: { lat: 1, lng: 2 }, to: { lat: 3, lng: 4 } })).toBe(
      requestHash('geo-distance', { to: { lng: 4, lat: 3 }, from: { lng: 2, lat: 1 } }),
    );
  });

  it('differs when the tool, a value, or an array order differs', () => {
    const base = requestHash('annuity', { a: [1, 2], b: 'x' });
    expect(requestHash('geo-distance', { a: [1, 2], b: 'x' })).not.toBe(base);
    expect(requestHash('annuity', { a: [1, 2], b: 'y' })).not.toBe(base);
    expect(requestHash('annuity', { a: [2, 1], b: 'x' })).not.toBe(base);
  });

  it('ignores keys whose value is undefined, as JSON does', () => {
    expect(requestHash('annuity', { a: 1, b: undefined })).toBe(requestHash('annuity', { a: 1 }));
  });
});

describe('reading the payment identifier', () => {
  it('accepts an id of 16 to 128 characters from [A-Za-z0-9_-]', () => {
    expect(paymentIdentifier(toolsChallenge, withId('pay_0123456789abcdef'))).toEqual({
      type: 'id',
      id: 'pay_0123456789abcdef',
    });
    expect(paymentIdentifier(toolsChallenge, withId('A'.repeat(128)))).toEqual({ type: 'id', id: 'A'.repeat(128) });
  });

  it.each([
    ['15 characters', 'x'.repeat(15)],
    ['129 characters', 'x'.repeat(129)],
    ['a space', 'pay 0123456789abcdef'],
    // eslint-disable-next-line no-loss-of-precision -- an integer past 2^53 is the point of this case
    ['a number', 12345678901234567],
  ])('refuses an id with %s, saying what a valid one looks like', (_label, id) => {
    const result = paymentIdentifier(toolsChallenge, withId(id));
    expect(result.type).toBe('invalid');
    expect(result.type === 'invalid' && result.message).toContain('16–128');
  });

  it('finds no id when the payment does not carry the extension', () => {
    const payload = { x402Version: 2, accepted: toolsChallenge.accepts[0], payload: {} } as unknown as PaymentPayload;
    expect(paymentIdentifier(toolsChallenge, payload)).toEqual({ type: 'none' });
  });

  it('ignores the extension on endpoints that do not declare it', () => {
    expect(paymentIdentifier(buildChallenge(config, tokenReport), withId('pay_0123456789abcdef'))).toEqual({
      type: 'none',
    });
  });
});
