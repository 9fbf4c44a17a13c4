import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { answersWithChallenge, pendingBody, refusalBody } from '../errors.js';
import type { CallResult } from '../invoke.js';
import type { Challenge } from '../payments/requirements.js';
import { X402_META } from '../shared/mcp-wire.js';
import { PAYMENT_ERROR_META_KEY, mcpChallenge, paymentErrorMeta } from './challenge.js';

/** `_meta` key carrying the client's payment on tools/call. */
export const PAYMENT_META_KEY = X402_META.payment;
/** `_meta` key carrying the settlement receipt on a paid result. */
export const PAYMENT_RESPONSE_META_KEY = X402_META.paymentResponse;

/** Where an x402 payment goes over MCP: added to refusals answered with an error body (the broker's messages name no transport). */
const PAYMENT_GOES = `Over MCP, the payment goes in params._meta["${PAYMENT_META_KEY}"].`;

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
      // A 402 or 412 is the challenge again, its message as the broker wrote it (x402 MCP clients read it there).
      if (answersWithChallenge(rejection.status))
        return paymentError({ ...asMcp(rejection.challenge), message: rejection.message });
      const body = refusalBody(rejection, PAYMENT_GOES);
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
    }
    case 'error':
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(result.error.toBody()) }] };
  }
}
