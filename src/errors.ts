import type { ErrorBody } from '../schemas/errors.js';

/** The closed set of error codes every transport knows how to answer. */
export type ErrorCode =
  | 'invalid_input'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'not_found'
  | 'conflict'
  | 'method_not_allowed'
  | 'not_implemented'
  | 'rate_limited'
  | 'upstream_unavailable'
  | 'upstream_timeout'
  | 'upstream_rate_limited'
  | 'upstream_invalid'
  | 'payment_malformed'
  | 'payment_in_flight'
  | 'facilitator_unavailable'
  | 'cancelled'
  | 'budget_exceeded'
  | 'payment_not_approved'
  | 'payment_failed'
  | 'payment_pending'
  | 'unauthorized'
  | 'forbidden'
  | 'shutting_down'
  | 'internal';

interface ErrorCodeInfo {
  http: number;
  retryable: boolean;
}

/** The one table mapping each error code to its HTTP status and retry advice (MCP: isError results). */
export const ERROR_CODES: Record<ErrorCode, ErrorCodeInfo> = {
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
  payment_malformed: { http: 400, retryable: false },
  payment_in_flight: { http: 409, retryable: true },
  facilitator_unavailable: { http: 502, retryable: true },
  cancelled: { http: 499, retryable: true },
  /** Agent side: the payment would exceed the user's per-call or daily budget, or pays for a tool or network not allowed. Nothing was paid. */
  budget_exceeded: { http: 402, retryable: false },
  /** Agent side: the user declined the payment, or could not be asked. Nothing was paid. */
  payment_not_approved: { http: 402, retryable: false },
  /** Agent side: the remote refused the payment, or its settlement failed; it is reported, never re-paid blindly. */
  payment_failed: { http: 402, retryable: false },
  /** Agent side: the payment's outcome is not known yet; the same call later retries the very same payment. */
  payment_pending: { http: 503, retryable: true },
  /** Operator endpoints (GET /metrics with METRICS_TOKEN) without the right credentials. */
  unauthorized: { http: 401, retryable: false },
  forbidden: { http: 403, retryable: false },
  /** The server is draining before it stops; another instance (or this one, restarted) answers. */
  shutting_down: { http: 503, retryable: true },
  internal: { http: 500, retryable: true },
};

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
