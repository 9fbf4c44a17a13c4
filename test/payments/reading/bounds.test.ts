import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { PAYMENT_LIMITS, extensionsWithinLimits, withinPaymentLimits } from '../../../src/payments/reading/bounds.js';
import { decodePayment } from '../../../src/payments/reading/decode.js';
import { buildChallenge } from '../../../src/payments/challenges/requirements.js';
import { paidTools as tools } from '../../../tools/index.js';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
const nested = (levels: number): unknown => {
  let node: unknown = 'leaf';
  for (let i = 0; i < levels; i++) node = { n: node };
  return node;
};
const config = loadConfig({});

describe('the limits on a payment before anything reads it', () => {
  it("let through every tool's own challenge echoed whole, as an official client sends it", () => {
    for (const tool of tools) {
      const challenge = buildChallenge(config, tool) as { accepts: unknown[]; extensions?: Record<string, unknown> };
      const payment = {
        x402Version: 2,
        accepted: challenge.accepts[0],
        payload: { signature: '0x' + 'ab'.repeat(65) },
        extensions: challenge.extensions,
      };
      expect(withinPaymentLimits(payment), tool.name).toEqual({ ok: true });
      expect(extensionsWithinLimits(challenge.extensions), tool.name).toEqual({ ok: true });
    }
  });

  it('refuse nesting deeper than the limit, without recursion (a 100,000-level payment is refused, not a stack overflow)', () => {
    expect(withinPaymentLimits(nested(PAYMENT_LIMITS.maxDepth))).toEqual({ ok: true });
    const deep = withinPaymentLimits(nested(PAYMENT_LIMITS.maxDepth + 1));
    expect(deep.ok).toBe(false);
    expect(!deep.ok && deep.message).toContain(`${PAYMENT_LIMITS.maxDepth} levels`);
    let huge: unknown = [];
    for (let i = 0; i < 100_000; i++) huge = [huge];
    expect(withinPaymentLimits(huge).ok).toBe(false);
  });

  it('refuse a string, a key, an array or an object over its limit, naming the limit', () => {
    const cases: Array<[string, unknown, string]> = [
      ['string', { id: 'a'.repeat(PAYMENT_LIMITS.maxStringChars + 1) }, `${PAYMENT_LIMITS.maxStringChars} characters`],
      ['key', { ['k'.repeat(PAYMENT_LIMITS.maxStringChars + 1)]: 1 }, `${PAYMENT_LIMITS.maxStringChars} characters`],
      [
        'array',
        { enum: Array.from({ length: PAYMENT_LIMITS.maxArrayItems + 1 }, () => 0) },
        `${PAYMENT_LIMITS.maxArrayItems} items`,
      ],
      [
        'object',
        Object.fromEntries(Array.from({ length: PAYMENT_LIMITS.maxObjectKeys + 1 }, (_, i) => [`k${i}`, 0])),
        `${PAYMENT_LIMITS.maxObjectKeys} keys`,
      ],
    ];
    for (const [what, value, limit] of cases) {
      const result = withinPaymentLimits(value);
      expect(result.ok, what).toBe(false);
      expect(!result.ok && result.message, what).toContain(limit);
    }
  });

  it('refuse a payment over the byte limit however it is made up (many small strings)', () => {
    const many = { parts: Array.from({ length: 200 }, () => 'x'.repeat(200)) };
    const result = withinPaymentLimits(many);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toContain(`${PAYMENT_LIMITS.maxJsonBytes} bytes`);
  });

  it('refuse more extensions than the limit, and one extension over its size', () => {
    const many = Object.fromEntries(
      Array.from({ length: PAYMENT_LIMITS.maxExtensions + 1 }, (_, i) => [`ext${i}`, {}]),
    );
    expect(extensionsWithinLimits(many)).toMatchObject({
      ok: false,
      message: expect.stringContaining(`${PAYMENT_LIMITS.maxExtensions} extensions`),
    });
    const big = { bazaar: { info: {}, schema: { description: 'd'.repeat(PAYMENT_LIMITS.maxExtensionBytes) } } };
    expect(extensionsWithinLimits(big)).toMatchObject({
      ok: false,
      message: expect.stringContaining(`${PAYMENT_LIMITS.maxExtensionBytes} bytes`),
    });
  });

  it('refuse values JSON cannot carry (an MCP object is walked as it is)', () => {
    expect(withinPaymentLimits({ f: () => 1 }).ok).toBe(false);
    expect(withinPaymentLimits({ n: 1n }).ok).toBe(false);
  });
});

describe('decoding a payment within the limits', () => {
  it('refuses a header longer than the limit before decoding it', () => {
    const result = decodePayment({ source: 'payment-signature', value: 'A'.repeat(PAYMENT_LIMITS.maxHeaderChars + 4) });
    expect(result).toMatchObject({
      ok: false,
      message: expect.stringContaining(`${PAYMENT_LIMITS.maxHeaderChars} characters`),
    });
  });

  it('refuses an MCP payment object over the byte limit (a header cannot carry more: its character limit is the same size)', () => {
    expect((PAYMENT_LIMITS.maxHeaderChars / 4) * 3).toBeLessThanOrEqual(PAYMENT_LIMITS.maxJsonBytes);
    const value = { x402Version: 2, pad: Array.from({ length: 100 }, () => 'p'.repeat(300)) };
    expect(decodePayment({ source: 'mcp-meta', value })).toMatchObject({
      ok: false,
      message: expect.stringContaining(`${PAYMENT_LIMITS.maxJsonBytes} bytes`),
    });
  });

  it('refuses an over-deep payment in a header and in MCP _meta alike', () => {
    const deep = { x402Version: 2, accepted: {}, payload: nested(50) };
    expect(decodePayment({ source: 'payment-signature', value: b64(deep) })).toMatchObject({
      ok: false,
      message: expect.stringContaining('levels'),
    });
    expect(decodePayment({ source: 'mcp-meta', value: deep })).toMatchObject({
      ok: false,
      message: expect.stringContaining('levels'),
    });
  });

  it('refuses too many extensions in an otherwise valid envelope', () => {
    const accepted = {
      scheme: 'exact',
      network: 'eip155:8453',
      asset: '0xa',
      amount: '1',
      payTo: '0xb',
      maxTimeoutSeconds: 300,
      extra: {},
    };
    const extensions = Object.fromEntries(
      Array.from({ length: PAYMENT_LIMITS.maxExtensions + 1 }, (_, i) => [`ext${i}`, { info: {} }]),
    );
    const result = decodePayment({ source: 'mcp-meta', value: { x402Version: 2, accepted, payload: {}, extensions } });
    expect(result).toMatchObject({
      ok: false,
      message: expect.stringContaining(`${PAYMENT_LIMITS.maxExtensions} extensions`),
    });
  });
});
