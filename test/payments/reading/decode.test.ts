import { describe, expect, it } from 'vitest';
import { decodePayment } from '../../../src/payments/reading/decode.js';

const payment = {
  x402Version: 2,
  accepted: {
    scheme: 'exact',
    network: 'eip155:8453',
    asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    amount: '1000',
    payTo: '0x000000000000000000000000000000000000dEaD',
    maxTimeoutSeconds: 60,
    extra: { name: 'USD Coin', version: '2' },
  },
  // Bytes that encode to `+` and `/` in standard base64 (and `-`, `_` in the URL-safe alphabet), and a non-ASCII text.
  payload: { signature: '0x', note: '\u00fb\u00ff\u00fe>>>???', description: 'r \u2212 1 \u00d7 n' },
};
const json = JSON.stringify(payment);
const standard = Buffer.from(json, 'utf8').toString('base64');
const header = (value: string) => decodePayment({ source: 'payment-signature', value });
const NOT_BASE64 = 'The payment header is not standard base64 (RFC 4648 §4, with padding).';

describe('decoding a payment header', () => {
  it('reads standard base64, padded or not, and the surrounding whitespace a proxy may add', () => {
    expect(standard).toMatch(/[+/]/);
    for (const value of [standard, standard.replace(/=+$/, ''), ` ${standard}\t`])
      expect(header(value)).toEqual({ ok: true, payload: payment });
  });

  it('refuses what is not standard base64, naming it, before parsing anything', () => {
    const middle = Math.floor(standard.length / 2);
    const malformed = [
      standard.replaceAll('+', '-').replaceAll('/', '_'), // the URL-safe alphabet
      `${standard.slice(0, middle)} ${standard.slice(middle)}`, // whitespace inside
      `${standard.slice(0, middle)}*${standard.slice(middle + 1)}`, // a character outside the alphabet
      `${standard.slice(0, middle)}\u00e9${standard.slice(middle + 1)}`, // a non-ASCII character
      `${standard.slice(0, 8)}=${standard.slice(9)}`, // padding in the middle
      `${standard.slice(0, Math.floor(standard.length / 4) * 4 - 4)}A`, // one character past a whole group of four
      'eyJhIjoxfQ==A===', // characters after the padding
      'eyJhIjoxfQ==', // (control: valid)
    ];
    const results = malformed.map((value) => header(value));
    expect(results.slice(0, -1)).toEqual(malformed.slice(0, -1).map(() => ({ ok: false, message: NOT_BASE64 })));
    expect(results.at(-1)).toMatchObject({ ok: false, message: expect.stringContaining('x402 PaymentPayload') });
  });

  it('refuses padding after a whole group of four characters', () => {
    expect(header('eyJhIjoxfQ==')).not.toEqual({ ok: false, message: NOT_BASE64 });
    expect(header('eyJhIjox=')).toEqual({ ok: false, message: NOT_BASE64 });
  });
});
