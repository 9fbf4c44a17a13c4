/**
 * The errors every transport answers with, in one place: the code table (status, retry advice), the one error type
 * handlers throw, and the bodies of errors, payment refusals and open settlements. Neutral: the HTTP and MCP
 * encoders both build their answers from it, and neither imports the other.
 */
import type { SettleResponse } from '@x402/core/types';
import type { ErrorBody } from '../../schemas/errors.js';

/** One row of the code table: how every transport answers an error or a refusal with this code. */
interface ErrorCodeInfo {
  /** HTTP status; MCP answers an `isError` result with the same body (a 402 or 412 refusal: the challenge). */
  http: number;
  /** Whether retrying the same call may succeed (the body's `retryable`). */
  retryable: boolean;
  /**
   * Set on the refusals of a payment whose money was taken, or may be being taken, for another call (its first use):
   * a paid call's answer then says nothing of charges. Every other code is answered before any payment was taken.
   */
  paymentTaken?: true;
}

/** The statuses of a payment refusal: 402 and 412 are answered with the challenge (pay again), the others with a body. */
export type RefusalStatus = 400 | 402 | 409 | 412 | 502;

/**
 * The payment refusals the broker itself emits (a facilitator's verdicts pass through under its own reasons, answered
 * 402 or 412 with the challenge). `settlement_*` here is the refusal of a payment sent again while its settlement is
 * open (409); the call whose own settlement is open is answered with {@link pendingBody} (HTTP 503 with Retry-After).
 */
const PAYMENT_CODES_TABLE = {
  invalid_payment: { http: 400, retryable: false },
  invalid_x402_version: { http: 400, retryable: false },
  no_matching_payment_requirements: { http: 402, retryable: false },
  unsupported_payment_rail: { http: 402, retryable: false },
  /** The signed expiry (validBefore, deadline, lastValid, durable nonce) lies beyond maxTimeoutSeconds + skew: sign a shorter one. */
  authorization_window_too_long: { http: 402, retryable: false },
  payment_in_flight: { http: 409, retryable: true, paymentTaken: true },
  payment_already_used: { http: 402, retryable: false, paymentTaken: true },
  facilitator_unavailable: { http: 502, retryable: true },
  /** The settlement was broadcast and is not confirmed yet; the receipt carries its transaction hash and network. */
  settlement_pending: { http: 409, retryable: true, paymentTaken: true },
  /** The settle call got no answer (timeout, dropped connection): no transaction is known, the money may or may not move. */
  settlement_outcome_unknown: { http: 409, retryable: true, paymentTaken: true },
  invalid_payment_identifier: { http: 400, retryable: false },
  payment_identifier_conflict: { http: 409, retryable: true, paymentTaken: true },
} as const satisfies Record<string, { http: RefusalStatus; retryable: boolean; paymentTaken?: true }>;

/** A code of a refusal the broker emits. */
export type PaymentCode = keyof typeof PAYMENT_CODES_TABLE;

/** The codes of the refusals the broker emits. */
export const PAYMENT_CODES = Object.keys(PAYMENT_CODES_TABLE) as PaymentCode[];

/** The one code table: every code a handler, a transport or the broker answers with, its HTTP status and retry advice. */
export const ERROR_CODES = {
  invalid_input: { http: 400, retryable: false },
  payload_too_large: { http: 413, retryable: false },
  /** A request body in a content encoding or charset the server cannot read (send identity, gzip, deflate or br; UTF-8). */
  unsupported_media_type: { http: 415, retryable: false },
  not_found: { http: 404, retryable: false },
  /** The request clashes with existing state elsewhere (e.g. an order already running for the same link). */
  conflict: { http: 409, retryable: false },
  method_not_allowed: { http: 405, retryable: false },
  not_implemented: { http: 501, retryable: false },
  rate_limited: { http: 429, retryable: true },
  upstream_unavailable: { http: 502, retryable: true },
  upstream_timeout: { http: 504, retryable: true },
  upstream_rate_limited: { http: 503, retryable: true },
  upstream_invalid: { http: 502, retryable: false },
  cancelled: { http: 499, retryable: true },
  /** Agent side: the payment would exceed the user's per-call or daily budget, or pays for a tool or network not allowed. Nothing was paid. */
  budget_exceeded: { http: 402, retryable: false },
  /** Agent side: the user declined the payment, or could not be asked. Nothing was paid. */
  payment_not_approved: { http: 402, retryable: false },
  /** Agent side: the remote refused the payment, or its settlement failed; it is reported, never re-paid blindly. */
  payment_failed: { http: 402, retryable: false },
  /** Agent side: the payment's outcome is not known yet; the same call later retries the very same payment. */
  payment_pending: { http: 503, retryable: true },
  /** Agent side: every option pays to a development placeholder or an all-zero address nobody controls. Nothing was signed. */
  placeholder_pay_to: { http: 402, retryable: false },
  /** Operator endpoints (GET /metrics with METRICS_TOKEN) without the right credentials. */
  unauthorized: { http: 401, retryable: false },
  forbidden: { http: 403, retryable: false },
  /** The server is draining before it stops; another instance (or this one, restarted) answers. */
  shutting_down: { http: 503, retryable: true },
  /** `/mcp` initialize: this client address holds as many open MCP sessions as one client may (MCP_MAX_SESSIONS_PER_CLIENT). */
  mcp_session_limit: { http: 429, retryable: true },
  /** `/mcp` initialize: the server holds MCP_MAX_SESSIONS sessions, each with a call in flight; none could make room. */
  mcp_sessions_full: { http: 503, retryable: true },
  /** `/mcp`: the Mcp-Session-Id names no open session (closed, idle too long, or ended to make room): initialize again. */
  mcp_session_not_found: { http: 404, retryable: false },
  /** A tool's worker queue is full (WORKER_QUEUE_PER_TOOL); refused before the payment was read: retry after `details.retryAfterSeconds`. */
  tool_busy: { http: 503, retryable: true },
  /** The tool's answer to this input would exceed the output size limit (never settled): send a smaller input. */
  output_too_large: { http: 422, retryable: false },
  internal: { http: 500, retryable: true },
  ...PAYMENT_CODES_TABLE,
} as const satisfies Record<string, ErrorCodeInfo>;

/** The closed set of error codes every transport knows how to answer. */
export type ErrorCode = keyof typeof ERROR_CODES;

interface ToolErrorOptions {
  field?: string;
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** The single error type thrown by handlers, providers and the call pipeline. */
export class ToolError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: ToolErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'ToolError';
    this.code = code;
    this.field = options.field;
    this.details = options.details;
  }

  /** HTTP status for this error, from the code table. */
  get httpStatus(): number {
    return ERROR_CODES[this.code].http;
  }

  /** The wire body both transports send for this error. */
  toBody(): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        retryable: ERROR_CODES[this.code].retryable,
        ...(this.field !== undefined ? { field: this.field } : {}),
        ...(this.details !== undefined ? { details: this.details } : {}),
      },
    };
  }
}

/** Wraps anything thrown into a ToolError, keeping the original as `cause`. */
export function toToolError(err: unknown): ToolError {
  if (err instanceof ToolError) return err;
  return new ToolError('internal', 'The tool failed unexpectedly; try again later.', { cause: err });
}

/**
 * Whether an error or refusal under `code` is made before any payment was taken (the table's `paymentTaken` unset):
 * on a paid call its answer ends with the charge fact (src/pipeline/charge-note.ts). A reason outside the table (a
 * facilitator's verdict, an MPP reason) refuses a payment before it is used.
 */
export function beforeAnyCharge(code: string): boolean {
  const row = (ERROR_CODES as Record<string, ErrorCodeInfo>)[code];
  return row?.paymentTaken !== true;
}

/** True when a payment refusal is answered with the tool's challenge (402, 412: pay again), not with an error body. */
export function answersWithChallenge(status: number): boolean {
  return status === 402 || status === 412;
}

/**
 * The error body of a payment refusal answered without the challenge, the transport's hint of where the payment goes
 * appended to the message. Retry advice from the code table; a reason outside it (the MPP path's) is retryable unless
 * the refusal is a 400.
 */
export function refusalBody(refusal: { reason: string; status: number; message: string }, hint: string): ErrorBody {
  const row = (ERROR_CODES as Record<string, ErrorCodeInfo>)[refusal.reason];
  const retryable = row ? row.retryable : refusal.status !== 400;
  return { error: { code: refusal.reason, message: withHint(refusal.message, hint), retryable } };
}

/** A refusal's message with the transport's hint of where the payment goes (the broker's messages name no transport). */
export function withHint(message: string, hint: string): string {
  return hint ? `${message} ${hint}` : message;
}

/** Seconds a caller is asked to wait before retrying a call whose settlement is still being confirmed. */
export const PENDING_RETRY_AFTER_SECONDS = 10;

/**
 * The error body of a call that succeeded but whose settlement outcome is not known yet: retry with the same payment,
 * never a new one. `settlement_pending` names the broadcast transaction and its network; `settlement_outcome_unknown`
 * says that no transaction is known (the settle call got no answer), so there is nothing to look up on chain yet.
 */
export function pendingBody(receipt: SettleResponse): ErrorBody {
  const retry = `Retry the same request with the same payment in ${PENDING_RETRY_AFTER_SECONDS} seconds to receive the result; do not sign a new payment for it.`;
  if (receipt.errorReason === 'settlement_pending' && receipt.transaction) {
    return {
      error: {
        code: 'settlement_pending',
        message: `The call succeeded and its payment was broadcast as transaction ${receipt.transaction} on ${receipt.network}, which is not confirmed yet. ${retry}`,
        retryable: true,
        details: { transaction: receipt.transaction, network: receipt.network },
      },
    };
  }
  return {
    error: {
      code: 'settlement_outcome_unknown',
      message: `The call succeeded but the settlement of its payment on ${receipt.network} got no answer: no transaction is known yet and the payment may or may not have been taken. ${retry}`,
      retryable: true,
      details: { network: receipt.network },
    },
  };
}
