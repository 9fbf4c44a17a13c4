import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/shared/errors.js';
import type { CallResult } from '../../src/pipeline/invoke.js';
import { toCallToolResult } from '../../src/mcp/encode.js';
import { answerFor } from '../../src/payments/answer/answer.js';
import type { Challenge } from '../../src/payments/challenges/requirements.js';

/** A pipeline result as a paid x402 tool's MCP answer (no MPP offered). */
const encode = (result: CallResult, tool = 'annuity') =>
  toCallToolResult(answerFor(result, { tool: { name: tool }, version: 2 }));

const challenge = {
  x402Version: 2,
  error: 'Payment required',
  resource: { url: 'http://x/api/annuity' },
  accepts: [],
} as unknown as Challenge;
const receipt = { success: true, transaction: '0xabc', network: 'eip155:8453', payer: '0xpayer' } as const;

describe('MCP encoding of call results', () => {
  it('returns the output as structuredContent and text, with the receipt in _meta', () => {
    const result = encode({ type: 'success', output: { km: 1 }, receipt });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ km: 1 });
    expect(result._meta?.['x402/payment-response']).toEqual(receipt);
  });

  it('returns only the payment error when settlement failed, with the failed settle response in _meta', () => {
    const failed = {
      success: false,
      errorReason: 'invalid_exact_evm_insufficient_balance',
      errorMessage: 'facilitator says: balance 0 at node rpc-7 (internal)',
      payer: '0xpayer',
      transaction: '0xnot-ours',
      network: 'eip155:8453',
    } as const;
    const result = encode({
      type: 'settlement_failed',
      receipt: failed,
      challenge: { ...challenge, error: failed.errorReason } as Challenge,
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ x402Version: 2, error: 'invalid_exact_evm_insufficient_balance' });
    expect(result._meta?.['x402/payment-response']).toEqual({
      success: false,
      errorReason: 'invalid_exact_evm_insufficient_balance',
      payer: '0xpayer',
      transaction: '',
      network: 'eip155:8453',
    });
    expect(JSON.stringify(result)).not.toContain('km');
    expect(JSON.stringify(result)).not.toContain('facilitator says');
  });

  it('never passes on a settle failure reason that is text rather than a code', () => {
    const failed = {
      success: false,
      errorReason: 'Node error: nonce too low',
      transaction: '',
      network: 'eip155:8453',
    };
    const result = encode({ type: 'settlement_failed', receipt: failed as never, challenge });
    expect(result._meta?.['x402/payment-response']).toMatchObject({ errorReason: 'settlement_failed' });
    expect(JSON.stringify(result._meta)).not.toContain('nonce too low');
  });

  it('puts a refused payment’s reason and advice next to the requirements', () => {
    const result = encode({
      type: 'payment_rejected',
      rejection: {
        type: 'rejected',
        status: 402,
        reason: 'payment_already_used',
        message: 'Sign a new one.',
        challenge,
      },
    });
    expect(result.structuredContent).toMatchObject({ accepts: [], message: 'Sign a new one.' });
  });

  it('answers non-payment refusals and tool errors as error text without structuredContent', () => {
    const refused = encode({
      type: 'payment_rejected',
      rejection: { type: 'rejected', status: 409, reason: 'payment_in_flight', message: 'Wait.', challenge },
    });
    expect(refused.structuredContent).toBeUndefined();
    expect(JSON.parse((refused.content as Array<{ text: string }>)[0]!.text).error).toMatchObject({
      code: 'payment_in_flight',
      retryable: true,
    });
    const failed = encode({
      type: 'error',
      error: new ToolError('invalid_input', 'Invalid input: periods.', { field: 'periods' }),
    });
    expect(failed.isError).toBe(true);
    expect(JSON.parse((failed.content as Array<{ text: string }>)[0]!.text).error).toMatchObject({
      code: 'invalid_input',
      field: 'periods',
      retryable: false,
    });
  });

  it('carries the unpaid result in _meta["x402/error"] once more: the PaymentRequired itself with the code and message of the x402 MCP payment error, not a fourth copy under data', () => {
    const result = encode({ type: 'payment_required', challenge });
    const error = result._meta?.['x402/error'] as Record<string, unknown>;
    expect(error).toMatchObject({
      x402Version: 2,
      error: 'Payment required',
      accepts: [],
      code: 402,
      message: 'Payment required',
    });
    expect(error).not.toHaveProperty('data');
    const { code: _code, message: _message, ...paymentRequired } = error;
    expect(paymentRequired).toEqual(result.structuredContent);
    // The two copies the x402 MCP transport requires, and this one: never a fourth.
    const copies = JSON.stringify(result).split('accepts').length - 1;
    expect(copies).toBe(3);
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(result.structuredContent);
    const refused = encode({
      type: 'payment_rejected',
      rejection: {
        type: 'rejected',
        status: 402,
        reason: 'payment_already_used',
        message: 'Sign a new one.',
        challenge,
      },
    });
    expect(refused._meta?.['x402/error']).toMatchObject({
      code: 402,
      message: 'Sign a new one.',
      accepts: [],
    });
  });

  it('names the resource mcp://tool/<name> in MCP challenges and leaves every payment option as it is', () => {
    const v2 = {
      x402Version: 2,
      error: 'Payment required',
      resource: { url: 'http://x/api/annuity', description: 'd' },
      accepts: [{ scheme: 'exact', network: 'eip155:8453', amount: '1' }],
    } as unknown as Challenge;
    const result = encode({ type: 'payment_required', challenge: v2 }, 'annuity');
    expect(result.structuredContent).toEqual({ ...v2, resource: { url: 'mcp://tool/annuity', description: 'd' } });
    const v1 = {
      x402Version: 1,
      error: 'X-PAYMENT header is required',
      accepts: [{ scheme: 'exact', network: 'base', maxAmountRequired: '1', resource: 'http://x/api/transfers/evm' }],
    } as unknown as Challenge;
    const old = encode({ type: 'payment_required', challenge: v1 }, 'transfers-evm');
    expect(old.structuredContent).toEqual({
      ...v1,
      accepts: [{ ...(v1.accepts[0] as object), resource: 'mcp://tool/transfers-evm' }],
    });
    expect((v2 as { resource: { url: string } }).resource.url).toBe('http://x/api/annuity'); // the shared HTTP challenge is untouched
  });

  it('answers settlement_pending only with the transaction hash and network, and settlement_outcome_unknown when no hash is known', () => {
    const pending = {
      success: false,
      errorReason: 'settlement_pending',
      transaction: '0xfeed',
      network: 'eip155:8453',
    } as const;
    const withHash = encode({ type: 'settlement_pending', receipt: pending });
    expect(JSON.parse((withHash.content as Array<{ text: string }>)[0]!.text).error).toMatchObject({
      code: 'settlement_pending',
      retryable: true,
      details: { transaction: '0xfeed', network: 'eip155:8453' },
    });
    expect(withHash._meta?.['x402/payment-response']).toEqual(pending);
    const unknown = {
      success: false,
      errorReason: 'settlement_outcome_unknown',
      transaction: '',
      network: 'eip155:8453',
    } as const;
    const noHash = encode({ type: 'settlement_pending', receipt: unknown });
    const body = JSON.parse((noHash.content as Array<{ text: string }>)[0]!.text);
    expect(body.error).toMatchObject({
      code: 'settlement_outcome_unknown',
      retryable: true,
      details: { network: 'eip155:8453' },
    });
    expect(body.error.details.transaction).toBeUndefined();
    expect(noHash._meta?.['x402/payment-response']).toEqual(unknown);
  });
});
