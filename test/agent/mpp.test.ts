import { describe, expect, it } from 'vitest';
import { remoteCode } from '../../src/agent/remote.js';
import { answerOf, isMcpEndpoint } from '../../src/agent/mcp-remote.js';
import { asRequirements, offerOf, offersMpp, readMppReceipt, type MppChallenge } from '../../src/agent/mpp.js';

const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const challenge = (request: Record<string, unknown>, method = 'evm'): MppChallenge => ({
  id: 'c1',
  realm: 'r',
  method,
  intent: 'charge',
  request,
});
const charge = {
  amount: '1000',
  currency: USDC,
  recipient: '0x2222222222222222222222222222222222222222',
  methodDetails: { chainId: 8453, credentialTypes: ['authorization'], decimals: 6 },
};

describe('reading MPP challenges', () => {
  it('reads an evm/charge request as an exact-like option on its chain', () => {
    const offer = offerOf(challenge(charge));
    expect(offer.charge).toEqual({ chainId: 8453, currency: USDC, recipient: charge.recipient, amount: '1000' });
    expect(asRequirements(offer)).toMatchObject({
      scheme: 'exact',
      network: 'eip155:8453',
      asset: USDC,
      amount: '1000',
      payTo: charge.recipient,
    });
  });

  it('keeps what it cannot pay as unsupported: other methods, splits, no authorization credential, a malformed request', () => {
    expect(offerOf(challenge(charge, 'tempo')).unsupported).toBe('tempo/charge');
    expect(
      offerOf(
        challenge({
          ...charge,
          methodDetails: { ...charge.methodDetails, splits: [{ amount: '1', recipient: charge.recipient }] },
        }),
      ).unsupported,
    ).toMatch(/splits/);
    expect(
      offerOf(challenge({ ...charge, methodDetails: { chainId: 8453, credentialTypes: ['permit2'] } })).unsupported,
    ).toMatch(/authorization/);
    expect(offerOf(challenge({ ...charge, amount: '1.5' })).unsupported).toMatch(/malformed/);
  });

  it('notices a Payment challenge in WWW-Authenticate without parsing it', () => {
    expect(offersMpp('Payment id="a", realm="b"')).toBe(true);
    expect(offersMpp('Bearer realm="x", Payment id="a"')).toBe(true);
    expect(offersMpp('Bearer realm="x"')).toBe(false);
    expect(offersMpp(null)).toBe(false);
  });

  it('reads a Payment-Receipt, and nothing from a header that is not one', () => {
    const receipt = { method: 'evm', reference: '0xabc', status: 'success', timestamp: '2026-11-25T00:00:00.000Z' };
    expect(readMppReceipt(Buffer.from(JSON.stringify(receipt)).toString('base64url'))).toEqual(receipt);
    expect(readMppReceipt('not base64 json')).toBeUndefined();
  });

  it('takes the refusal code of a Problem Details body from its reason, else from its type', () => {
    expect(
      remoteCode({ type: 'https://paymentauth.org/problems/payment-action-required', reason: 'payment_in_flight' }),
    ).toBe('payment_in_flight');
    expect(remoteCode({ type: 'https://paymentauth.org/problems/verification-failed', title: 'x' })).toBe(
      'verification-failed',
    );
    expect(remoteCode({ error: { code: 'invalid_input' } })).toBe('invalid_input');
  });
});

describe('reading tool results of a remote MCP endpoint', () => {
  it("is an MCP endpoint when the base URL's path ends in /mcp", () => {
    expect(isMcpEndpoint('https://x.example/mcp')).toBe(true);
    expect(isMcpEndpoint('https://x.example/mcp/')).toBe(true);
    expect(isMcpEndpoint('https://x.example')).toBe(false);
  });

  it('reads a result with its MPP receipt, and an unpaid result offering MPP only', () => {
    const receipt = { method: 'evm', reference: '0xabc', status: 'success' };
    expect(
      answerOf({ content: [], structuredContent: { a: 1 }, _meta: { 'org.paymentauth/receipt': receipt } }, true),
    ).toEqual({ type: 'ok', status: 200, body: { a: 1 }, mppReceipt: receipt });
    const problem = { type: 'https://paymentauth.org/problems/payment-required', reason: 'payment_required' };
    const unpaid = {
      isError: true,
      content: [{ type: 'text' as const, text: JSON.stringify(problem) }],
      _meta: { 'org.paymentauth/payment-required': { httpStatus: 402, challenges: [challenge(charge)] } },
    };
    const answer = answerOf(unpaid, true);
    expect(answer).toMatchObject({ type: 'challenge', status: 402, body: problem });
    expect(answer.type === 'challenge' && answer.challenge).toBeFalsy();
    expect(answer.type === 'challenge' && answer.mpp[0]?.charge?.chainId).toBe(8453);
    expect(answerOf(unpaid, false)).toMatchObject({ type: 'error', body: problem });
  });

  it('reads x402 offered only in _meta["x402/error"] (Cloudflare agents) and a receipt in _meta["x402.payment-response"] (x402-mcp)', () => {
    const offer = { scheme: 'exact', network: 'eip155:84532', amount: '1000', asset: USDC, payTo: USDC };
    const required = { x402Version: 2, error: 'PAYMENT_REQUIRED', accepts: [offer] };
    const unpaid = answerOf(
      {
        isError: true,
        content: [{ type: 'text', text: JSON.stringify(required) }],
        _meta: { 'x402/error': required },
      },
      true,
    );
    expect(unpaid).toMatchObject({ type: 'challenge', status: 402, challenge: required });
    const receipt = { success: true, transaction: '0xabc', network: 'base-sepolia', payer: USDC };
    expect(
      answerOf({ content: [], structuredContent: { a: 1 }, _meta: { 'x402.payment-response': receipt } }, true),
    ).toEqual({ type: 'ok', status: 200, body: { a: 1 }, receipt });
  });
});
