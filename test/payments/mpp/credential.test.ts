import { Credential } from 'mppx';
import { describe, expect, it } from 'vitest';
import { PAYMENT_LIMITS } from '../../../src/payments/reading/bounds.js';
import { issueChallenges } from '../../../src/payments/mpp/challenge.js';
import { decodeCredential, isPaymentAuthorization } from '../../../src/payments/mpp/credential.js';
import type { AnyPaidToolDefinition } from '../../../src/tool/tool.js';
import { annuity } from '../../../tools/annuity.js';
import { setup, signFor } from './support.js';

const { config, offers } = setup(annuity as unknown as AnyPaidToolDefinition);

async function credential() {
  const [issued] = issueChallenges(config.mpp, [offers[0]!], { tool: 'annuity' }, 300);
  return Credential.from({ challenge: issued!.challenge, payload: await signFor(issued!.challenge, offers[0]!) });
}

describe('reading an MPP credential', () => {
  it('recognises the Payment scheme in any case, and no other scheme', () => {
    expect(isPaymentAuthorization('Payment abc')).toBe(true);
    expect(isPaymentAuthorization('payment abc')).toBe(true);
    expect(isPaymentAuthorization('PAYMENT\tabc')).toBe(true);
    expect(isPaymentAuthorization('Bearer abc')).toBe(false);
    expect(isPaymentAuthorization('Paymentabc')).toBe(false);
    expect(isPaymentAuthorization(undefined)).toBe(false);
  });

  it('decodes the header and the MCP object forms of the same credential to the same thing', async () => {
    const sent = await credential();
    const fromHeader = await decodeCredential({ from: 'header', value: Credential.serialize(sent) });
    const fromMeta = await decodeCredential({ from: 'meta', value: JSON.parse(JSON.stringify(sent)) });
    expect(fromHeader.ok && fromMeta.ok).toBe(true);
    if (!fromHeader.ok || !fromMeta.ok) return;
    expect(fromMeta.credential).toEqual(fromHeader.credential);
    expect(fromHeader.credential.challenge.id).toBe(sent.challenge.id);
  });

  it('refuses, within fixed bounds and before parsing, what is too long, not base64url, or not a credential', async () => {
    const long = await decodeCredential({
      from: 'header',
      value: `Payment ${'A'.repeat(PAYMENT_LIMITS.maxHeaderChars + 1)}`,
    });
    expect(long).toMatchObject({ ok: false, message: expect.stringMatching(/longer than/) });
    expect(await decodeCredential({ from: 'header', value: 'Payment a+b/c' })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/base64url/),
    });
    expect(await decodeCredential({ from: 'header', value: 'Payment ' })).toMatchObject({ ok: false });
    const notJson = Buffer.from('{not json', 'utf8').toString('base64url');
    expect(await decodeCredential({ from: 'header', value: `Payment ${notJson}` })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/malformed/),
    });
  });

  it('refuses a header credential whose payload nests too deep, after parsing within the size limit, without recursion', async () => {
    const sent = await credential();
    const wire = JSON.parse(
      Buffer.from(Credential.serialize(sent).slice('Payment '.length), 'base64url').toString('utf8'),
    ) as Record<string, unknown>;
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const text = JSON.stringify({ ...wire, payload: '__DEEP__' }).replace('"__DEEP__"', deep);
    const result = await decodeCredential({
      from: 'header',
      value: `Payment ${Buffer.from(text, 'utf8').toString('base64url')}`,
    });
    expect(result).toMatchObject({ ok: false, message: expect.stringMatching(/nesting/) });
  });

  it('bounds an MCP credential object like an x402 payment: nesting, strings and shape', async () => {
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let i = 0; i < 100_000; i++) deep = deep.next = {} as Record<string, unknown>;
    expect(await decodeCredential({ from: 'meta', value: { challenge: root, payload: {} } })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/nesting/),
    });
    expect(
      await decodeCredential({ from: 'meta', value: { challenge: { id: 'x'.repeat(9000) }, payload: {} } }),
    ).toMatchObject({ ok: false, message: expect.stringMatching(/too large/) });
    expect(await decodeCredential({ from: 'meta', value: 'Payment abc' })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/must be an object/),
    });
    expect(await decodeCredential({ from: 'meta', value: { payload: {} } })).toMatchObject({ ok: false });
  });
});
