/**
 * The MCP wire both sides read and write: the `_meta` keys of the x402 MCP transport and of the MPP binding for MCP,
 * and the portable JSON Schema MCP clients are shown (the server's catalog, the agent's own tools).
 */

/** `_meta` keys of the x402 MCP transport: the payment on tools/call, the receipt and the unpaid result on the result. */
export const X402_META = {
  payment: 'x402/payment',
  paymentResponse: 'x402/payment-response',
  error: 'x402/error',
} as const;

/** `_meta` keys of the MPP binding for MCP (the same keys mppx's MCP transports read and write). */
export const MPP_META = {
  credential: 'org.paymentauth/credential',
  paymentRequired: 'org.paymentauth/payment-required',
  receipt: 'org.paymentauth/receipt',
} as const;

/**
 * The JSON Schema MCP clients see: no `$schema` dialect key (the SDK client compiles with its default
 * Ajv draft), and nullable types spelled as `anyOf` branches, which single-`type` dialects can read.
 */
export function portableSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema;
  return rewrite(rest) as Record<string, unknown>;
}

function rewrite(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewrite);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = rewrite(value);
  if (Array.isArray(out.type) && out.type.length > 1) {
    const { type, ...others } = out;
    return { ...others, anyOf: (type as string[]).map((t) => ({ type: t })) };
  }
  return out;
}
