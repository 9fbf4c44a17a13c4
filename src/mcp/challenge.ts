import type { Challenge } from '../payments/requirements.js';
import { X402_META } from '../shared/mcp-wire.js';

/** `_meta` key carrying the unpaid result (payment required or refused) for MCP payment clients that read it there. */
export const PAYMENT_ERROR_META_KEY = X402_META.error;

/** The code the x402 MCP packages give a payment-required error. */
const PAYMENT_REQUIRED_CODE = 402;

/** The resource a tool is sold as on MCP (x402 MCP transport): `mcp://tool/<name>`, whatever URL serves it over HTTP. */
export function toolResourceUrl(tool: string): string {
  return `mcp://tool/${tool}`;
}

/** MCP challenges of the shared per-tool challenges, built once (the unpaid call is the hot path). */
const rewritten = new WeakMap<Challenge, Challenge>();

/**
 * A challenge as MCP states it: the resource is `mcp://tool/<name>` (v2 `resource.url`; the v1 entries' `resource`),
 * every payment option is the same object as over HTTP. Verification compares the echoed option, never the resource,
 * so a payment signed against either challenge pays for the tool on either transport (once: the replay guard is shared).
 */
export function mcpChallenge(challenge: Challenge, tool: string): Challenge {
  const hit = rewritten.get(challenge);
  if (hit) return hit;
  const url = toolResourceUrl(tool);
  const mcp =
    challenge.x402Version === 2
      ? ({ ...challenge, resource: { ...challenge.resource, url } } as Challenge)
      : ({ ...challenge, accepts: challenge.accepts.map((entry) => ({ ...entry, resource: url })) } as Challenge);
  rewritten.set(challenge, mcp);
  return mcp;
}

/**
 * The `_meta["x402/error"]` value of an unpaid result: the PaymentRequired object itself (clients such as `mcpay`
 * read `accepts` and `error` there), plus the `code`/`message`/`data` envelope of the x402 MCP package's embedded
 * error (`data` is the PaymentRequired again), so both kinds of reader find what they look for.
 */
export function paymentErrorMeta(paymentRequired: Record<string, unknown>): Record<string, unknown> {
  const said = paymentRequired.message ?? paymentRequired.error;
  const message = typeof said === 'string' && said.length > 0 ? said : 'Payment required';
  return { ...paymentRequired, code: PAYMENT_REQUIRED_CODE, message, data: paymentRequired };
}
