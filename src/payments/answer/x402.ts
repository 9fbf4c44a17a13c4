/**
 * x402's part of an answer: on HTTP the `PAYMENT-REQUIRED` and `PAYMENT-RESPONSE` headers and the challenge as the
 * 402 body; on MCP the tool-result binding (the PaymentRequired in `structuredContent`, `content[0]` and
 * `_meta["x402/error"]`, the receipt in `_meta["x402/payment-response"]`).
 */
import type { SettleResponse } from '@x402/core/types';
import { answersWithChallenge, refusalBody, withHint } from '../../shared/errors.js';
import { X402_HEADERS } from '../../shared/http-wire.js';
import { X402_META } from '../../shared/mcp-wire.js';
import type { Challenge } from '../challenges/requirements.js';
import type { AnswerPart, HttpWrite, McpResultFields, McpWrite, PaymentAnswer } from './types.js';

/** Where an x402 payment goes over HTTP, by version: added to every refusal (the broker's messages name no transport). */
const HTTP_PAYMENT_GOES = {
  1: 'Over HTTP, an x402 version 1 payment goes in the X-PAYMENT header.',
  2: 'Over HTTP, an x402 version 2 payment goes in the PAYMENT-SIGNATURE header (X-PAYMENT is for version 1).',
} as const;

/** Where an x402 payment goes over MCP: added to refusals answered with an error body. */
const MCP_PAYMENT_GOES = `Over MCP, the payment goes in params._meta["${X402_META.payment}"].`;

/** The code the x402 MCP packages give a payment-required error. */
const PAYMENT_REQUIRED_CODE = 402;

const JSON_TYPE = 'application/json; charset=utf-8';

/** Standard base64 of the UTF-8 JSON, as the x402 headers carry it. */
export function toBase64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

/** Encodings of the shared per-tool challenges, computed once (the unpaid 402 is the hot path). */
const encoded = new WeakMap<Challenge, { header: string; body: string }>();

function encode(challenge: Challenge): { header: string; body: string } {
  let hit = encoded.get(challenge);
  if (!hit) {
    const body = JSON.stringify(challenge);
    hit = { body, header: Buffer.from(body, 'utf8').toString('base64') };
    encoded.set(challenge, hit);
  }
  return hit;
}

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
 * read `accepts` and `error` there) with the `code` and `message` of the x402 MCP package's payment error. The
 * PaymentRequired is not repeated a fourth time under `data`: `structuredContent` and `content[0]` already carry it.
 */
export function paymentErrorMeta(paymentRequired: Record<string, unknown>): Record<string, unknown> {
  const said = paymentRequired.message ?? paymentRequired.error;
  const message = typeof said === 'string' && said.length > 0 ? said : 'Payment required';
  return { ...paymentRequired, code: PAYMENT_REQUIRED_CODE, message };
}

/** An unpaid result (x402 tool-result binding): the PaymentRequired in structuredContent, content[0] and `_meta`. */
function paymentError(structured: Record<string, unknown>): McpWrite {
  const result: McpResultFields = {
    isError: true,
    structuredContent: structured,
    content: [{ type: 'text', text: JSON.stringify(structured) }],
  };
  return { result, meta: { [X402_META.error]: paymentErrorMeta(structured) } };
}

/** A facilitator's `errorReason` that reads as a code (x402's snake_case reasons); anything else is not passed on. */
const REASON_CODE = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * The failed settle response an MCP result carries in `_meta["x402/payment-response"]` (x402 MCP transport): success
 * false, the reason as a code (never the facilitator's text), the network, no transaction, the payer when known.
 */
function failedSettleMeta(receipt: SettleResponse | undefined, challenge: Challenge): SettleResponse {
  const reason = receipt?.errorReason;
  const network = receipt?.network || challenge.accepts[0]?.network || '';
  return {
    success: false,
    errorReason: (reason && REASON_CODE.test(reason) ? reason : 'settlement_failed') as SettleResponse['errorReason'],
    ...(receipt?.payer ? { payer: receipt.payer } : {}),
    transaction: '',
    network: network as SettleResponse['network'],
  };
}

/** A settlement failure's result: the challenge to pay again, and in `_meta` what came of this payment (nothing settled). */
function settleFailedError(structured: Record<string, unknown>, response: SettleResponse): McpWrite {
  const failed = paymentError(structured);
  return { ...failed, meta: { ...failed.meta, [X402_META.paymentResponse]: response } };
}

const text = (value: unknown): McpResultFields => ({
  isError: true,
  content: [{ type: 'text', text: JSON.stringify(value) }],
});

/** The parts made so far, by version and tool: a part holds nothing of a call, so every answer of a tool shares one. */
const parts = new Map<string, AnswerPart>();

/** x402 speaking for an answer: the caller paid with x402, or did not pay (a free tool's answer too). */
export function x402Part(tool: string, version: 1 | 2): AnswerPart {
  const key = `${version} ${tool}`;
  let part = parts.get(key);
  if (!part) parts.set(key, (part = newX402Part(tool, version)));
  return part;
}

function newX402Part(tool: string, version: 1 | 2): AnswerPart {
  const receiptHeader = (receipt: SettleResponse) => [X402_HEADERS.response[version], toBase64Json(receipt)] as const;
  const challengeWrite = (challenge: Challenge, message?: string, companion?: Challenge): HttpWrite => {
    const { header, body } = encode(challenge);
    const withMessage = message === undefined ? body : JSON.stringify({ ...challenge, message });
    // Version 2 in its header; a version 1 body may have its tool's v2 face's challenge there (batch settlement).
    const v2 = challenge.x402Version === 2 ? header : companion && encode(companion).header;
    return {
      headers: v2 ? [[X402_HEADERS.required, v2]] : [],
      body: { text: withMessage, contentType: JSON_TYPE },
    };
  };
  return {
    protocol: 'x402',
    http(answer: PaymentAnswer): HttpWrite {
      const { receipt, refusal } = answer;
      const challenge = answer.challenges.x402!;
      switch (answer.outcome) {
        case 'success':
        case 'settlement_pending':
          return { headers: receipt ? [receiptHeader(receipt)] : [] };
        case 'payment_required':
          return challengeWrite(challenge, undefined, answer.challenges.companion);
        case 'settlement_failed': {
          const written = challengeWrite(challenge);
          return { ...written, headers: [receiptHeader(receipt!), ...written.headers] };
        }
        case 'payment_rejected': {
          const message = withHint(refusal!.message, HTTP_PAYMENT_GOES[version]);
          if (answersWithChallenge(answer.status)) return challengeWrite(challenge, message);
          const body = refusalBody({ ...refusal!, status: answer.status }, HTTP_PAYMENT_GOES[version]);
          return { headers: [], body: { json: body } };
        }
        case 'error':
        case 'both_protocols':
          return { headers: [] };
      }
    },
    mcp(answer: PaymentAnswer): McpWrite {
      const { receipt, refusal } = answer;
      const asMcp = () => mcpChallenge(answer.challenges.x402!, tool) as unknown as Record<string, unknown>;
      switch (answer.outcome) {
        case 'success':
        case 'settlement_pending':
          return receipt ? { meta: { [X402_META.paymentResponse]: receipt } } : {};
        case 'payment_required':
          return paymentError(asMcp());
        case 'settlement_failed':
          return settleFailedError(asMcp(), failedSettleMeta(receipt, answer.challenges.x402!));
        case 'payment_rejected':
          // A 402 or 412 is the challenge again, its message as the broker wrote it (x402 MCP clients read it there).
          if (answersWithChallenge(answer.status)) return paymentError({ ...asMcp(), message: refusal!.message });
          return { result: text(refusalBody({ ...refusal!, status: answer.status }, MCP_PAYMENT_GOES)) };
        case 'error':
        case 'both_protocols':
          return {};
      }
    },
  };
}
