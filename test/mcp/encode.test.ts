import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/errors.js';
import { toCallToolResult } from '../../src/mcp/encode.js';
import type { Challenge } from '../../src/payments/requirements.js';

const challenge = { x402Version: 2, error: 'Payment required', resource: { url: 'http://x/api/annuity' }, accepts: [] } as unknown as Challenge;
const receipt = { success: true, transaction: '0xabc', network: 'eip155:8453', payer: '0xpayer' } as const;

describe('MCP encoding of call results', () => {
  it('returns the output as structuredContent and text, with the receipt in _meta', () => {
    const result = toCallToolResult({ type: 'success', output: { km: 1 }, receipt });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ km: 1 });
    expect(result._meta?.['x402/payment-response']).toEqual(receipt);
  });

  it('returns only the payment error when settlement failed: no output, no receipt to tempt a second payment', () => {
    const failed = { success: false, errorReason: 'invalid_exact_evm_insufficient_balance', transaction: '', network: 'eip155:8453' } as const;
    const result = toCallToolResult({ type: 'settlement_failed', receipt: failed, challenge: { ...challenge, error: failed.errorReason } as Challenge });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ x402Version: 2, error: 'invalid_exact_evm_insufficient_balance' });
    expect(result._meta).toBeUndefined();
    expect(JSON.stringify(result)).not.toContain('km');
  });

  it('puts a refused payment’s reason and advice next to the requirements', () => {
    const result = toCallToolResult({ type: 'payment_rejected', rejection: { type: 'rejected', status: 402, reason: 'payment_already_used', message: 'Sign a new one.', challenge } });
    expect(result.structuredContent).toMatchObject({ accepts: [], message: 'Sign a new one.' });
  });

  it('answers non-payment refusals and tool errors as error text without structuredContent', () => {
    const refused = toCallToolResult({ type: 'payment_rejected', rejection: { type: 'rejected', status: 409, reason: 'payment_in_flight', message: 'Wait.', challenge } });
    expect(refused.structuredContent).toBeUndefined();
    expect(JSON.parse((refused.content as Array<{ text: string }>)[0]!.text).error).toMatchObject({ code: 'payment_in_flight', retryable: true });
    const failed = toCallToolResult({ type: 'error', error: new ToolError('invalid_input', 'Invalid input: periods.', { field: 'periods' }) });
    expect(failed.isError).toBe(true);
    expect(JSON.parse((failed.content as Array<{ text: string }>)[0]!.text).error).toMatchObject({ code: 'invalid_input', field: 'periods', retryable: false });
  });
});
