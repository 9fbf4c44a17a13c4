import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpResultFields, PaymentAnswer } from '../payments/answer/types.js';

/** The result of an answer no protocol speaks for: the output as structuredContent and text, or the error body as text. */
function plainResult(answer: PaymentAnswer): McpResultFields {
  if (answer.outcome === 'success')
    return {
      content: [{ type: 'text', text: JSON.stringify(answer.output) }],
      structuredContent: answer.output as Record<string, unknown>,
    };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(answer.error) }] };
}

/**
 * Writes a call's answer as an MCP tool result: the speaker's result (x402 or MPP), else the plain one, with the
 * `_meta` entries of the speaker and then of the protocols offered beside it.
 */
export function toCallToolResult(answer: PaymentAnswer): CallToolResult {
  const own = answer.speaker.mcp(answer);
  const metas = [own.meta, ...answer.beside.map((part) => part.mcp(answer).meta)].filter((m) => m !== undefined);
  const result = own.result ?? plainResult(answer);
  return metas.length > 0 ? { ...result, _meta: Object.assign({}, ...metas) } : { ...result };
}
