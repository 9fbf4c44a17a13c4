/**
 * MPP's part of an answer. Beside x402 (a caller that paid with x402, or not at all), it offers its challenges on a
 * payment-required answer: `WWW-Authenticate` on HTTP, `_meta["org.paymentauth/payment-required"]` on MCP. Speaking for
 * an answer (the caller paid with an MPP credential), it writes the MPP receipt on success and Problem Details with the
 * MPP error type on a refusal (fresh challenges on a 402); tool errors and pending settlements stay as x402 writes them.
 */
import { withHint } from '../../shared/errors.js';
import { NOT_SETTLED, noted } from '../../pipeline/charge-note.js';
import { MPP_HEADERS } from '../../shared/http-wire.js';
import { MPP_META, X402_META } from '../../shared/mcp-wire.js';
import { MPP_REASONS, paymentRequiredProblem, problemFor, type MppProblem } from '../mpp/problem.js';
import { mppReceipt, receiptHeader } from '../mpp/receipt.js';
import type { AnswerPart, HttpWrite, McpWrite, PaymentAnswer } from './types.js';

/** Where an MPP credential goes, by transport: added to every refusal (the broker's messages name no transport). */
const CREDENTIAL_GOES = {
  http: 'Over HTTP, the MPP credential goes in the Authorization header, scheme Payment.',
  mcp: `Over MCP, the MPP credential goes in params._meta["${MPP_META.credential}"].`,
} as const;

/** The refusal of a call that carries both an MPP credential and an x402 payment, by transport (a paid tool's: noted). */
const BOTH_PROTOCOLS = {
  http: 'The request carries both an MPP credential (Authorization: Payment) and an x402 payment (PAYMENT-SIGNATURE or X-PAYMENT). Send exactly one of them; neither was used.',
  mcp: `The call carries both an MPP credential (_meta["${MPP_META.credential}"]) and an x402 payment (_meta["${X402_META.payment}"]). Send exactly one of them; neither was used.`,
} as const;

const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

/** The challenges header of an answer (none when MPP is off or the route has no EVM EIP-3009 option). */
function challengeHeaders(answer: PaymentAnswer): Array<readonly [string, string]> {
  const issued = answer.challenges.mpp ?? [];
  // One header, the challenges separated by a bare comma (RFC 9110 §5.6.1: the whitespace is optional).
  return issued.length > 0 ? [[MPP_HEADERS.challenge, issued.map((c) => c.header).join(',')]] : [];
}

/** The MCP `_meta` entry of a payment-required answer: the challenges, the status and the problem. */
function challengeMeta(answer: PaymentAnswer, problem: MppProblem): Record<string, unknown> {
  const challenges = (answer.challenges.mpp ?? []).map((issued) => issued.challenge);
  return challenges.length > 0
    ? { [MPP_META.paymentRequired]: { httpStatus: problem.status, challenges, problem } }
    : {};
}

/** MPP offered beside x402: its challenges on a payment-required answer, nothing otherwise. */
export const mppOffer: AnswerPart = {
  protocol: 'mpp',
  http: (answer) => ({ headers: challengeHeaders(answer) }),
  mcp: (answer) => {
    const problem = paymentRequiredProblem(
      'Payment is required: pay one of the MPP challenges, or one of the x402 `accepts` options.',
    );
    const meta = challengeMeta(answer, problem);
    return Object.keys(meta).length > 0 ? { meta } : {};
  },
};

/** The Problem Details of a refused MPP call, or undefined for an answer MPP leaves to x402 (success, error, pending). */
function problemOf(answer: PaymentAnswer, transport: 'http' | 'mcp', challengeId?: string): MppProblem | undefined {
  switch (answer.outcome) {
    case 'payment_required':
      return paymentRequiredProblem('Payment is required.');
    case 'payment_rejected': {
      const { reason, message } = answer.refusal!;
      return problemFor(reason, answer.status, withHint(message, CREDENTIAL_GOES[transport]), challengeId);
    }
    case 'settlement_failed': {
      const reason = answer.receipt?.errorReason ?? 'settlement_failed';
      const detail = `The call succeeded but its payment did not settle (${reason}). ${NOT_SETTLED}. Sign a new authorization for a fresh challenge.`;
      return problemFor(reason, 402, detail, challengeId);
    }
    case 'both_protocols':
      return problemFor(MPP_REASONS.bothProtocols, 400, noted(BOTH_PROTOCOLS[transport]));
    case 'success':
    case 'settlement_pending':
    case 'error':
      return undefined;
  }
}

/** MPP speaking for the answer of a call paid with an MPP credential (`challengeId`: the challenge it answered). */
export function mppPart(challengeId: string | undefined): AnswerPart {
  const receipt = (answer: PaymentAnswer) =>
    challengeId && answer.receipt && answer.outcome === 'success' ? mppReceipt(answer.receipt, challengeId) : undefined;
  return {
    protocol: 'mpp',
    http(answer: PaymentAnswer): HttpWrite {
      const problem = problemOf(answer, 'http', challengeId);
      if (!problem) {
        const paid = receipt(answer);
        return { headers: paid ? [[MPP_HEADERS.receipt, receiptHeader(paid)]] : [] };
      }
      const headers = problem.status === 402 ? challengeHeaders(answer) : [];
      return { headers, body: { text: JSON.stringify(problem), contentType: PROBLEM_TYPE } };
    },
    mcp(answer: PaymentAnswer): McpWrite {
      const problem = problemOf(answer, 'mcp', challengeId);
      if (problem) {
        const result = {
          isError: true as const,
          content: [{ type: 'text' as const, text: JSON.stringify(problem) }],
          structuredContent: { problem } as Record<string, unknown>,
        };
        return { result, meta: problem.status === 402 ? challengeMeta(answer, problem) : {} };
      }
      if (answer.outcome === 'settlement_pending' && answer.receipt)
        return { meta: { [X402_META.paymentResponse]: answer.receipt } };
      if (answer.outcome !== 'success') return {};
      const paid = receipt(answer);
      return { meta: paid ? { [MPP_META.receipt]: paid } : {} };
    },
  };
}
