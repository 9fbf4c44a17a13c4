/**
 * A remote x402 facilitator over HTTP: `POST /verify`, `POST /settle`, `GET /supported`, with the wire format and the
 * error types of `@x402/core`'s HTTPFacilitatorClient (VerifyError/SettleError for a refusal with a body,
 * FacilitatorTimeoutError past the time limit, FacilitatorResponseError for an unreadable answer), on a keep-alive
 * undici connection pool instead of `fetch`: fetch's streams, Request/Response objects and abort signals cost several
 * times more CPU per call, and a paid call makes two of these requests.
 */
import { FacilitatorResponseError, FacilitatorTimeoutError, type FacilitatorClient } from '@x402/core/server';
import type {
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from '@x402/core/types';
import type { z } from 'zod';
import {
  authReason,
  excerpt,
  parseAnswer,
  redacted,
  refusalError,
  SettleAnswer,
  SupportedAnswer,
  VerifyAnswer,
  type Answer,
  type FacilitatorOperation,
} from './facilitator-answers.js';
import { Redactor } from '../../shared/redact.js';
import { requestOnce, type OneShotAnswer } from './one-shot.js';
import { afterIoTurn, openFacilitatorPool, resendable, type FacilitatorPool } from './facilitator-pool.js';

/** The three facilitator operations. */
export type { FacilitatorOperation };

/** One request to the facilitator, as an authentication header is bound to it. */
export interface FacilitatorTarget {
  method: 'GET' | 'POST';
  /** The full URL, e.g. `https://api.cdp.coinbase.com/platform/v2/x402/verify`. */
  url: string;
}

/**
 * The facilitator refused our credentials (401 or 403): a configuration problem of this server, never the payer's.
 * The message names the facilitator (origin and path), the status and its own reason, never a header value.
 */
export class FacilitatorAuthError extends Error {
  constructor(
    readonly operation: FacilitatorOperation,
    readonly status: number,
    reason: string,
    facilitator = 'the facilitator',
  ) {
    super(`${facilitator} refused our credentials (HTTP ${status} on ${operation}): ${reason}`);
    this.name = 'FacilitatorAuthError';
  }
}

/** Options of one remote facilitator. */
export interface HttpFacilitatorOptions {
  /** Time limit of verify and supported. */
  timeoutMs: number;
  /** Time limit of settle (it waits for the chain); past it the outcome is unknown. */
  settleTimeoutMs: number;
  /** Headers sent with every request of an operation (authentication, see facilitator-auth.ts); never logged, never quoted in errors. */
  headers?: (
    target: FacilitatorTarget,
    operation: FacilitatorOperation,
  ) => Record<string, string> | Promise<Record<string, string>>;
  /** Most connections kept open to the facilitator. */
  connections?: number;
  /** The configured credentials, blanked (in every form) out of refusals before they become errors. */
  secrets?: readonly string[];
}

/** Largest answer read from a facilitator (an answer is a few hundred bytes). */
const MAX_ANSWER_BYTES = 1024 * 1024;
const SUPPORTED_ATTEMPTS = 3;

const bigintSafe = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

function isTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
}

/** The way to one facilitator: its connection pool (opened with the first request), its URLs and its shown name. */
interface Connection {
  options: HttpFacilitatorOptions;
  /** Blanks the configured credentials (every form) out of a refusal. */
  redactor: Redactor;
  pool(): Promise<FacilitatorPool>;
  /** How errors name this facilitator: origin and path, never a user name, password or query. */
  shown: string;
  urls: Record<FacilitatorOperation, URL>;
}

/**
 * Sends one request and reads its answer (bounded, secrets blanked); 401/403 and timeouts become their errors. A
 * request that failed on a stale kept connection is sent once more on a fresh one when {@link resendable} allows.
 */
async function exchange(
  conn: Connection,
  operation: FacilitatorOperation,
  method: 'GET' | 'POST',
  body: string | undefined,
  timeoutMs: number,
): Promise<Answer> {
  try {
    return await attempt(conn, operation, method, body, timeoutMs, false);
  } catch (err) {
    if (!resendable(operation, err)) throw mapped(err, operation, timeoutMs);
    try {
      return await attempt(conn, operation, method, body, timeoutMs, true);
    } catch (again) {
      throw mapped(again, operation, timeoutMs);
    }
  }
}

function mapped(err: unknown, operation: FacilitatorOperation, timeoutMs: number): unknown {
  return isTimeout(err) ? new FacilitatorTimeoutError(operation, timeoutMs) : err;
}

/**
 * An answer with every header value we sent blanked out; a refusal (non-2xx, or a 2xx verdict of `false`, whose text
 * ends up in errors and logs) also with every form of them and of the configured credentials (src/config/redact.ts).
 */
function blanked(conn: Connection, body: string, status: number, sent: readonly string[]): string {
  const exact = redacted(body, sent);
  if (status >= 200 && status < 300 && !/"(isValid|success)"\s*:\s*false/.test(body)) return exact;
  return new Redactor(sent).redact(conn.redactor.redact(exact));
}

/** One attempt of a request: on a kept connection, or on a fresh one. */
async function attempt(
  conn: Connection,
  operation: FacilitatorOperation,
  method: 'GET' | 'POST',
  body: string | undefined,
  timeoutMs: number,
  fresh: boolean,
): Promise<Answer> {
  const url = conn.urls[operation];
  // Asked again for each attempt: a CDP JWT is signed for one request.
  const auth = conn.options.headers ? await conn.options.headers({ method, url: url.href }, operation) : {};
  const headers: Record<string, string> = {
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...auth,
  };
  if (operation === 'supported') {
    const answer = await requestOnce({ method, url, headers, timeoutMs, operation, maxBytes: MAX_ANSWER_BYTES });
    return read(conn, operation, answer, auth);
  }
  const pool = await conn.pool();
  // A settle is never re-sent on doubt: first let a close that arrived while the loop was busy be seen.
  if (operation === 'settle' && !fresh) await afterIoTurn();
  const request = {
    path: url.pathname + url.search,
    method,
    headers,
    ...(body === undefined ? {} : { body }),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  };
  return read(conn, operation, await (fresh ? pool.requestFresh(request) : pool.request(request)), auth);
}

/** Reads an answer (bounded, secrets blanked); 401/403 become FacilitatorAuthError. */
async function read(
  conn: Connection,
  operation: FacilitatorOperation,
  res: Pick<OneShotAnswer, 'statusCode' | 'headers' | 'body'>,
  auth: Record<string, string>,
): Promise<Answer> {
  const length = Number(res.headers['content-length'] ?? 0);
  if (length > MAX_ANSWER_BYTES) {
    res.body.destroy();
    throw new FacilitatorResponseError(
      `Facilitator ${operation} answered ${length} bytes, more than ${MAX_ANSWER_BYTES}`,
    );
  }
  const retryAfter = res.headers['retry-after'];
  const text = blanked(conn, await res.body.text(), res.statusCode, Object.values(auth));
  if (res.statusCode === 401 || res.statusCode === 403)
    throw new FacilitatorAuthError(operation, res.statusCode, authReason(text), `the facilitator ${conn.shown}`);
  return { status: res.statusCode, text, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter };
}

/** Posts a payment to `/verify` or `/settle`; a non-2xx answer is thrown as the facilitator's refusal. */
async function postPayment<T>(
  conn: Connection,
  operation: 'verify' | 'settle',
  schema: z.ZodType<T>,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
  timeoutMs: number,
): Promise<T> {
  const body = JSON.stringify(
    { x402Version: payload.x402Version, paymentPayload: payload, paymentRequirements: requirements },
    bigintSafe,
  );
  const answer = await exchange(conn, operation, 'POST', body, timeoutMs);
  if (answer.status < 200 || answer.status >= 300) throw refusalError(operation, answer);
  return parseAnswer(operation, schema, answer.text);
}

/** How long to wait before asking `/supported` again after a 429: its Retry-After, else 1 s doubling, at most 30 s. */
function supportedRetryDelayMs(retryAfter: string | undefined, attempt: number): number {
  const seconds = Number(retryAfter);
  return Math.min(Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000 * 2 ** (attempt - 1), 30_000);
}

/** Asks `/supported`, retrying a 429 answer up to SUPPORTED_ATTEMPTS times. */
async function fetchSupported(conn: Connection): Promise<SupportedResponse> {
  for (let attempt = 1; ; attempt++) {
    const answer = await exchange(conn, 'supported', 'GET', undefined, conn.options.timeoutMs);
    if (answer.status >= 200 && answer.status < 300)
      return parseAnswer('supported', SupportedAnswer, answer.text) as SupportedResponse;
    const error = new Error(`Facilitator getSupported failed (${answer.status}): ${excerpt(answer.text)}`);
    if (answer.status !== 429 || attempt >= SUPPORTED_ATTEMPTS) throw error;
    await new Promise((resolve) => setTimeout(resolve, supportedRetryDelayMs(answer.retryAfter, attempt)));
  }
}

/** A FacilitatorClient for one facilitator base URL (e.g. `https://x402.org/facilitator`). */
export function createHttpFacilitatorClient(
  baseUrl: string,
  options: HttpFacilitatorOptions,
): FacilitatorClient & { close(): Promise<void> } {
  const base = new URL(baseUrl.replace(/\/+$/, '') + '/');
  // undici loads with the first verify or settle, not at start-up (`/supported` goes through node:http).
  let pool: Promise<FacilitatorPool> | undefined;
  const conn: Connection = {
    options,
    redactor: new Redactor(options.secrets ?? []),
    pool: () => (pool ??= openFacilitatorPool(base.origin, options.connections ?? 64)),
    shown: `${base.origin}${base.pathname}`.replace(/\/+$/, ''),
    urls: {
      verify: new URL('verify', base),
      settle: new URL('settle', base),
      supported: new URL('supported', base),
    },
  };
  return {
    verify: (payload, requirements) =>
      postPayment(conn, 'verify', VerifyAnswer, payload, requirements, options.timeoutMs) as Promise<VerifyResponse>,
    settle: (payload, requirements) =>
      postPayment(
        conn,
        'settle',
        SettleAnswer,
        payload,
        requirements,
        options.settleTimeoutMs,
      ) as Promise<SettleResponse>,
    getSupported: () => fetchSupported(conn),
    close: async () => {
      if (pool) await (await pool).close();
    },
  };
}
