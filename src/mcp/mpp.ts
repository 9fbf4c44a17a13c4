import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { withHint } from '../errors.js';
import type { CallResult } from '../invoke.js';
import type { RawPayment } from '../payments/decode.js';
import { decodeCredential } from '../payments/mpp/credential.js';
import type { MppGate } from '../payments/mpp/gate.js';
import { MPP_REASONS, paymentRequiredProblem, problemFor, type MppProblem } from '../payments/mpp/problem.js';
import { mppReceipt } from '../payments/mpp/receipt.js';
import { MPP_META, X402_META } from '../shared/mcp-wire.js';
import type { AnyPaidToolDefinition } from '../tool.js';

/** Where an MPP credential goes over MCP: added to every refusal (the broker's messages name no transport). */
const CREDENTIAL_GOES = `Over MCP, the MPP credential goes in params._meta["${MPP_META.credential}"].`;

/** The x402 `_meta` keys an MPP answer leaves out (an MPP client pays and reads receipts the MPP way). */
const X402_RESPONSE_META = X402_META.paymentResponse;

/** What a tools/call carries in the way of payment, as far as MPP is concerned. */
export type McpMppPayment =
  { type: 'none' } | { type: 'mpp'; payment: RawPayment; challengeId?: string } | { type: 'both' };

/** Reads `_meta["org.paymentauth/credential"]`; with `_meta["x402/payment"]` beside it, the call is refused. */
export async function readMcpMppPayment(
  meta: Record<string, unknown> | undefined,
  x402Key: string,
): Promise<McpMppPayment> {
  const value = meta?.[MPP_META.credential];
  if (value === undefined || value === null) return { type: 'none' };
  const x402 = meta?.[x402Key];
  if (x402 !== undefined && x402 !== null) return { type: 'both' };
  const decoded = await decodeCredential({ from: 'meta', value });
  return {
    type: 'mpp',
    payment: { source: 'mpp', value: decoded },
    ...(decoded.ok ? { challengeId: decoded.credential.challenge.id } : {}),
  };
}

/** The error result of a call that carries both an MPP credential and an x402 payment. */
export function mppBothResult(): CallToolResult {
  const detail = `The call carries both an MPP credential (_meta["${MPP_META.credential}"]) and an x402 payment (_meta["x402/payment"]). Send exactly one of them; neither was used and nothing was charged.`;
  return problemResult(problemFor(MPP_REASONS.bothProtocols, 400, detail));
}

function problemResult(problem: MppProblem, challenges: unknown[] = []): CallToolResult {
  const meta =
    challenges.length > 0 ? { [MPP_META.paymentRequired]: { httpStatus: problem.status, challenges, problem } } : {};
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(problem) }],
    structuredContent: { problem } as Record<string, unknown>,
    _meta: meta,
  };
}

/** Fresh MPP challenges of a tool as the MCP binding carries them (JSON objects, `request` not encoded). */
function challengesOf(gate: MppGate, tool: AnyPaidToolDefinition): unknown[] {
  return gate.challenges(tool).map((issued) => issued.challenge);
}

/** True when the answer is a payment-required one (where the MPP challenges go). */
function paymentRequired(result: CallResult): boolean {
  switch (result.type) {
    case 'payment_required':
    case 'settlement_failed':
      return true;
    case 'payment_rejected':
      return result.rejection.status === 402;
    case 'success':
    case 'settlement_pending':
    case 'error':
      return false;
  }
}

/**
 * Adds MPP to a tool result: for an x402 (or unpaid) call, the MPP challenges beside the x402 ones in
 * `_meta["org.paymentauth/payment-required"]`; for an MPP call, the MPP receipt on success and Problem Details with the
 * MPP error type (plus fresh challenges on a 402) on a refusal. Tool errors and pending settlements are left as they are.
 */
export function withMpp(
  encoded: CallToolResult,
  result: CallResult,
  gate: MppGate,
  tool: AnyPaidToolDefinition,
  payment: McpMppPayment,
): CallToolResult {
  if (payment.type !== 'mpp') {
    if (!paymentRequired(result)) return encoded;
    const challenges = challengesOf(gate, tool);
    if (challenges.length === 0) return encoded;
    const problem = paymentRequiredProblem(
      'Payment is required: pay one of the MPP challenges, or one of the x402 `accepts` options.',
    );
    return {
      ...encoded,
      _meta: { ...encoded._meta, [MPP_META.paymentRequired]: { httpStatus: 402, challenges, problem } },
    };
  }
  const { challengeId } = payment;
  switch (result.type) {
    case 'success': {
      const { [X402_RESPONSE_META]: _x402, ...meta } = encoded._meta ?? {};
      return {
        ...encoded,
        _meta:
          challengeId && result.receipt
            ? { ...meta, [MPP_META.receipt]: mppReceipt(result.receipt, challengeId) }
            : meta,
      };
    }
    case 'payment_required':
      return problemResult(paymentRequiredProblem('Payment is required.'), challengesOf(gate, tool));
    case 'payment_rejected': {
      const { rejection } = result;
      const detail = withHint(rejection.message, CREDENTIAL_GOES);
      const problem = problemFor(rejection.reason, rejection.status, detail, challengeId);
      return problemResult(problem, rejection.status === 402 ? challengesOf(gate, tool) : []);
    }
    case 'settlement_failed': {
      const reason = result.receipt.errorReason ?? 'settlement_failed';
      const detail = `The call succeeded but its payment did not settle (${reason}); the result is withheld and nothing was charged. Sign a new authorization for a fresh challenge.`;
      return problemResult(problemFor(reason, 402, detail, challengeId), challengesOf(gate, tool));
    }
    case 'settlement_pending':
    case 'error':
      return encoded;
  }
}
