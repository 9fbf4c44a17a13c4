/**
 * The executor of a server selling its own tools: each tools/call runs through the local pipeline (`answerCall`), with
 * the payment found in `_meta` (x402, or an MPP credential) and the answer written as the x402 and MPP MCP bindings say.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CarriedPayment } from '../payments/answer/types.js';
import { answerCall } from '../pipeline/answer.js';
import type { ServerDeps } from '../runtime/server-deps.js';
import { MPP_META, X402_META } from '../shared/mcp-wire.js';
import { isPaid, type AnyToolDefinition } from '../tool/tool.js';
import { toCallToolResult } from './encode.js';
import type { McpCallSession, McpExecutor } from './server.js';

/** What clients of a selling server are told at initialize (the MPP sentence when MPP is on). */
export function localInstructions(mppEnabled: boolean): string {
  return (
    'Every tool is paid per call with x402, except the free helpers whose description says they are free. Call a paid tool without payment to receive the payment requirements (isError result with the PaymentRequired object); pay one of the `accepts` options and repeat the call with the PaymentPayload in params._meta["x402/payment"]. The receipt comes back in result._meta["x402/payment-response"].' +
    (mppEnabled
      ? ' MPP clients may pay instead: the same result carries evm/charge challenges in result._meta["org.paymentauth/payment-required"]; send the credential in params._meta["org.paymentauth/credential"] (receipt in result._meta["org.paymentauth/receipt"]).'
      : '')
  );
}

/** Carries out every call through the local pipeline. */
export function localExecutor(deps: ServerDeps): McpExecutor {
  return { call: (tool, args, session) => callLocal(deps, tool, args, session) };
}

async function callLocal(
  deps: ServerDeps,
  tool: AnyToolDefinition,
  args: unknown,
  session: McpCallSession,
): Promise<CallToolResult> {
  const call = { tool, input: args, transport: 'mcp' as const, signal: session.signal, progress: session.progress };
  // A free tool: no payment is read (nor any x402/MPP `_meta`).
  const proof = isPaid(tool) ? carriedPayment(session.meta) : undefined;
  return toCallToolResult(await answerCall(deps, { ...call, proof }));
}

/**
 * The payment a call carries: the MPP credential (`_meta["org.paymentauth/credential"]`; with `_meta["x402/payment"]`
 * beside it the call is refused), else `_meta["x402/payment"]` (object or base64 string), else none.
 */
function carriedPayment(meta: Record<string, unknown> | undefined): CarriedPayment | undefined {
  const present = (value: unknown) => value !== undefined && value !== null;
  const credential = meta?.[MPP_META.credential];
  const x402 = meta?.[X402_META.payment];
  if (present(credential))
    return present(x402) ? { protocol: 'both' } : { protocol: 'mpp', from: 'meta', value: credential };
  return present(x402) ? { protocol: 'x402', source: 'mcp-meta', value: x402 } : undefined;
}
