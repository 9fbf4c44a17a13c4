/**
 * The payment answer: what one call came to, transport-neutral, as the pipeline hands it to the transports. Each
 * payment protocol adds its part through one interface ({@link AnswerPart}); the HTTP and MCP encoders only write the
 * parts out. This is the one module of `src/payments/` the transports import (types only).
 */
import type { SettleResponse } from '@x402/core/types';
import type { ErrorBody } from '../../../schemas/errors.js';
import type { IssuedChallenge } from '../mpp/challenge.js';
import type { Challenge } from '../challenges/requirements.js';

/** A payment as a transport found it on a request, not yet read: the pipeline decodes it. */
export type CarriedPayment =
  /** An x402 proof: a header (`PAYMENT-SIGNATURE`, version 1 `X-PAYMENT`) or `_meta["x402/payment"]`. */
  | { protocol: 'x402'; source: 'payment-signature' | 'x-payment' | 'mcp-meta'; value: unknown }
  /** An MPP credential: the `Authorization: Payment …` header, or `_meta["org.paymentauth/credential"]`. */
  | { protocol: 'mpp'; from: 'header'; value: string }
  | { protocol: 'mpp'; from: 'meta'; value: unknown }
  /** Both an MPP credential and an x402 payment: refused before anything else is read. */
  | { protocol: 'both' };

/** What a call came to (the pipeline's result kinds, plus a request refused for carrying both protocols). */
export type AnswerOutcome =
  | 'success'
  | 'payment_required'
  | 'payment_rejected'
  | 'settlement_failed'
  | 'settlement_pending'
  | 'error'
  | 'both_protocols';

/** Whether the caller was charged: nothing, a settled payment, or a payment whose settlement is not confirmed yet. */
export type Charge = 'none' | 'settled' | 'pending';

/** A body an HTTP answer carries: JSON written by the framework, or text already encoded with its content type. */
export type HttpBody = { json: unknown } | { text: string; contentType: string };

/** One protocol's contribution to an HTTP answer: headers in order and, when it speaks for the answer, the body. */
export interface HttpWrite {
  headers: ReadonlyArray<readonly [string, string]>;
  body?: HttpBody;
}

/** An MCP tool result's own fields (without `_meta`). */
export interface McpResultFields {
  isError?: true;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
}

/** One protocol's contribution to an MCP tool result: the result itself when it speaks for it, and `_meta` entries. */
export interface McpWrite {
  result?: McpResultFields;
  /** Entries of `result._meta`; an empty object still gives the result an (empty) `_meta`. */
  meta?: Record<string, unknown>;
}

/** A payment protocol's part of an answer, as each transport writes it. */
export interface AnswerPart {
  readonly protocol: 'x402' | 'mpp';
  /** Headers (and the body, when this part speaks for the answer) of the HTTP answer. */
  http(answer: PaymentAnswer): HttpWrite;
  /** The result (when this part speaks for the answer) and `_meta` entries of the MCP answer. */
  mcp(answer: PaymentAnswer): McpWrite;
}

/** One call's answer, the same for every transport; `speaker` is the protocol the caller paid with (else x402). */
export interface PaymentAnswer {
  outcome: AnswerOutcome;
  /** The HTTP status; on MCP every answer but a 200 is an `isError` result. */
  status: number;
  charge: Charge;
  /** The tool's output (success). */
  output?: unknown;
  /** The error body of a tool error or of a pending settlement. */
  error?: ErrorBody;
  /** The settlement receipt (success, pending, failed). */
  receipt?: SettleResponse;
  /** The challenges offered with a payment-required answer: the x402 one, and fresh MPP ones when MPP is on. */
  challenges: {
    x402?: Challenge;
    /** The v2 challenge of a version 1 tool's v2 face, sent beside its version 1 challenge (HTTP: PAYMENT-REQUIRED). */
    companion?: Challenge;
    mpp?: readonly IssuedChallenge[];
  };
  /** A refused payment's reason and the broker's sentence (which names no transport: each part adds where to pay). */
  refusal?: { reason: string; message: string };
  /** Seconds after which to retry (a pending settlement, a rate limit); absent otherwise. */
  retryAfter?: number;
  /** True when the answer is tied to a payer (a paid success): not to be cached by shared caches. */
  private: boolean;
  /** The protocol that speaks for the answer: it writes the body or result. */
  speaker: AnswerPart;
  /** Protocols offered beside the speaker: they add headers or `_meta` entries (MPP challenges beside x402). */
  beside: readonly AnswerPart[];
}
