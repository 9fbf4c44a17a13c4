/**
 * The executor of a server selling its own tools: each tools/call runs through the local pipeline (`invoke`), with the
 * payment read from `_meta` (x402, or an MPP credential) and the result encoded as the x402 and MPP MCP bindings say.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { invoke, type CallRequest } from '../invoke.js';
import type { RawPayment } from '../payments/decode.js';
import type { MppGate } from '../payments/mpp/gate.js';
import type { ServerDeps } from '../server-deps.js';
import { isPaid, type AnyToolDefinition } from '../tool.js';
import { PAYMENT_META_KEY, toCallToolResult } from './encode.js';
import { mppBothResult, readMcpMppPayment, withMpp, type McpMppPayment } from './mpp.js';
import type { McpCallSession, McpExecutor, McpServerDeps } from './server.js';

/** What clients of a selling server are told at initialize (the MPP sentence when MPP is on). */
export function localInstructions(mpp: MppGate): string {
  return (
    'Every tool is paid per call with x402, except the free helpers whose description says they are free. Call a paid tool without payment to receive the payment requirements (isError result with the PaymentRequired object); pay one of the `accepts` options and repeat the call with the PaymentPayload in params._meta["x402/payment"]. The receipt comes back in result._meta["x402/payment-response"].' +
    (mpp.enabled
      ? ' MPP clients may pay instead: the same result carries evm/charge challenges in result._meta["org.paymentauth/payment-required"]; send the credential in params._meta["org.paymentauth/credential"] (receipt in result._meta["org.paymentauth/receipt"]).'
      : '')
  );
}

/** The MCP server of a selling process: its registry, listed with prices and MPP offers, carried out by the pipeline. */
export function localMcpServerDeps(deps: ServerDeps): McpServerDeps {
  return {
    config: deps.config,
    tools: deps.tools,
    version: deps.version,
    executor: localExecutor(deps),
    instructions: localInstructions(deps.broker.mpp),
    mpp: deps.broker.mpp,
  };
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
  const call: CallRequest = { tool, input: args, transport: 'mcp', signal: session.signal, progress: session.progress };
  // A free tool: no payment is read (nor any x402/MPP `_meta`), and its result carries no receipt.
  if (!isPaid(tool)) return toCallToolResult(await invoke(deps, call), tool.name);
  const mpp = await readMcpMppPayment(session.meta, PAYMENT_META_KEY);
  if (mpp.type === 'both') return mppBothResult();
  const result = await invoke(deps, { ...call, payment: paymentOf(session.meta, mpp) });
  return withMpp(toCallToolResult(result, tool.name), result, deps.broker.mpp, tool, mpp);
}

/** The payment a call carries: the MPP credential, else `_meta["x402/payment"]` (object or base64 string), else none. */
function paymentOf(meta: Record<string, unknown> | undefined, mpp: McpMppPayment): RawPayment | undefined {
  if (mpp.type === 'mpp') return mpp.payment;
  const x402 = meta?.[PAYMENT_META_KEY];
  return x402 === undefined || x402 === null ? undefined : { source: 'mcp-meta', value: x402 };
}
