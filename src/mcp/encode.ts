import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { pendingBody } from '../pending.js';
import type { CallResult } from '../invoke.js';
import type { Challenge } from '../payments/requirements.js';
import { PAYMENT_ERROR_META_KEY, mcpChallenge, paymentErrorMeta } from './challenge.js';

/** `_meta` key carrying the client's payment on tools/call. */
export const PAYMENT_META_KEY = 'x402/payment';
/** `_meta` key carrying the settlement receipt on a paid result. */
export const PAYMENT_RESPONSE_META_KEY = 'x402/payment-response';

/** An unpaid result (x402 tool-result binding): the PaymentRequired in structuredContent, content[0] and `_meta["x402/error"]`. */
function paymentError(structured: Record<string, unknown>): CallToolResult {
  return {
    isError: true,
    structuredContent: structured,
    content: [{ type: 'text', text: JSON.stringify(structured) }],
    _meta: { [PAYMENT_ERROR_META_KEY]: paymentErrorMeta(structured) },
  };
}

/**
 * Encodes a pipeline result as an MCP tool result (x402 MCP transport, tool-result binding). Given the tool's name,
 * challenges name the resource `mcp://tool/<name>` (see challenge.ts).
 */
export function toCallToolResult(result: CallResult, tool?: string): CallToolResult {
  const asMcp = (challenge: Challenge) =>
    (tool === undefined ? challenge : mcpChallenge(challenge, tool)) as unknown as Record<string, unknown>;
  switch (result.type) {
    case 'success':
      return {
        content: [{ type: 'text', text: JSON.stringify(result.output) }],
        structuredContent: result.output as Record<string, unknown>,
        ...(result.receipt ? { _meta: { [PAYMENT_RESPONSE_META_KEY]: result.receipt } } : {}),
      };
    case 'payment_required':
      return paymentError(asMcp(result.challenge));
    case 'settlement_failed':
      return paymentError(asMcp(result.challenge));
    case 'settlement_pending':
      return {
        isError: true,
        content: [{ type: 'text', text: JSON.stringify(pendingBody(result.receipt)) }],
        _meta: { [PAYMENT_RESPONSE_META_KEY]: result.receipt },
      };
    case 'payment_rejected': {
      const { rejection } = result;
      if (rejection.status === 402 || rejection.status === 412) {
        return paymentError({ ...asMcp(rejection.challenge), message: rejection.message });
      }
      const body = {
        error: { code: rejection.reason, message: rejection.message, retryable: rejection.status !== 400 },
      };
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
    }
    case 'error':
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(result.error.toBody()) }] };
  }
}
