import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { pendingBody } from '../http/encode.js';
import type { CallResult } from '../invoke.js';

/** `_meta` key carrying the client's payment on tools/call. */
export const PAYMENT_META_KEY = 'x402/payment';
/** `_meta` key carrying the settlement receipt on a paid result. */
export const PAYMENT_RESPONSE_META_KEY = 'x402/payment-response';

function paymentError(structured: Record<string, unknown>): CallToolResult {
  return { isError: true, structuredContent: structured, content: [{ type: 'text', text: JSON.stringify(structured) }] };
}

/** Encodes a pipeline result as an MCP tool result (x402 MCP transport, tool-result binding). */
export function toCallToolResult(result: CallResult): CallToolResult {
  switch (result.type) {
    case 'success':
      return {
        content: [{ type: 'text', text: JSON.stringify(result.output) }],
        structuredContent: result.output as Record<string, unknown>,
        _meta: { [PAYMENT_RESPONSE_META_KEY]: result.receipt },
      };
    case 'payment_required':
      return paymentError(result.challenge as unknown as Record<string, unknown>);
    case 'settlement_failed':
      return paymentError(result.challenge as unknown as Record<string, unknown>);
    case 'settlement_pending':
      return {
        isError: true,
        content: [{ type: 'text', text: JSON.stringify(pendingBody(result.receipt)) }],
        _meta: { [PAYMENT_RESPONSE_META_KEY]: result.receipt },
      };
    case 'payment_rejected': {
      const { rejection } = result;
      if (rejection.status === 402 || rejection.status === 412) {
        return paymentError({ ...(rejection.challenge as unknown as Record<string, unknown>), message: rejection.message });
      }
      const body = { error: { code: rejection.reason, message: rejection.message, retryable: rejection.status !== 400 } };
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
    }
    case 'error':
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(result.error.toBody()) }] };
  }
}
