import type { PaymentRequired } from '@x402/core/types';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { echoChecker } from '../../../src/payments/reading/extensions.js';
import { buildChallenge } from '../../../src/payments/challenges/requirements.js';
import { annuity } from '../../../tools/annuity.js';
import { transfersEvm } from '../../../tools/transfers-evm.js';

const challenge = buildChallenge(loadConfig({}), annuity) as PaymentRequired;
const declared = challenge.extensions as Record<string, { info: Record<string, unknown>; schema: unknown }>;
const check = echoChecker(challenge);
const hostileSchema = { type: 'object', properties: { id: { type: 'string', pattern: '^(a+)+$' } } };

describe('checking echoed extensions against our own declarations', () => {
  it('forwards our own schema, never the one the client echoed, with the validated id', () => {
    const id = 'pay_0123456789abcdef0123';
    const result = check({
      'payment-identifier': { info: { required: false, id }, schema: hostileSchema },
      bazaar: { info: declared.bazaar!.info, schema: { $ref: '#' } },
    });
    expect(result).toEqual({
      ok: true,
      paymentId: id,
      extensions: {
        'payment-identifier': { info: { required: false, id }, schema: declared['payment-identifier']!.schema },
        bazaar: declared.bazaar,
      },
    });
  });

  it('drops extensions this endpoint did not declare', () => {
    const result = check({ 'my-own': { info: { x: 1 }, schema: hostileSchema } });
    expect(result).toEqual({ ok: true, extensions: undefined, paymentId: undefined });
  });

  it('refuses a changed declaration with 402 extension_echo_mismatch', () => {
    const info = structuredClone(declared.bazaar!.info) as { input: Record<string, unknown> };
    info.input.method = 'DELETE';
    expect(check({ bazaar: { info, schema: declared.bazaar!.schema } })).toMatchObject({
      ok: false,
      status: 402,
      reason: 'extension_echo_mismatch',
    });
    expect(check({ 'payment-identifier': { info: { required: true, id: 'pay_0123456789abcdef' } } })).toMatchObject({
      ok: false,
      status: 402,
    });
  });

  it('refuses an id outside the fixed rule with 400, saying what a valid id looks like', () => {
    const result = check({
      'payment-identifier': { info: { required: false, id: 'a'.repeat(200) }, schema: { pattern: '.*' } },
    });
    expect(result).toMatchObject({
      ok: false,
      status: 400,
      reason: 'invalid_payment_identifier',
      message: expect.stringContaining('16–128'),
    });
  });

  it('accepts a builder-code echo with added service codes and refuses more than ten, or unknown fields', () => {
    const a = (declared['builder-code']!.info as { a: string }).a;
    expect(check({ 'builder-code': { info: { a, s: ['agentkit', 'wallet_x'] } } })).toMatchObject({
      ok: true,
      extensions: { 'builder-code': { info: { a, s: ['agentkit', 'wallet_x'] } } },
    });
    const tooMany = Array.from({ length: 11 }, (_, i) => `svc${i}`);
    expect(check({ 'builder-code': { info: { a, s: tooMany } } })).toMatchObject({
      ok: false,
      reason: 'extension_echo_mismatch',
    });
    expect(check({ 'builder-code': { info: { a, x: 'y' } } })).toMatchObject({
      ok: false,
      reason: 'extension_echo_mismatch',
    });
  });

  it('checks nothing on a version-1 endpoint (it declares no extensions)', () => {
    const v1 = echoChecker(buildChallenge(loadConfig({}), transfersEvm));
    expect(v1({ anything: { schema: hostileSchema } })).toEqual({
      ok: true,
      extensions: undefined,
      paymentId: undefined,
    });
  });
});
