/**
 * A remote x402 facilitator over HTTP: `POST /verify`, `POST /settle`, `GET /supported`, with the wire format and the
 * error types of `@x402/core`'s HTTPFacilitatorClient (VerifyError/SettleError for a refusal with a body,
 * FacilitatorTimeoutError past the time limit, FacilitatorResponseError for an unreadable answer), on a keep-alive
 * undici connection pool instead of `fetch`: fetch's streams, Request/Response objects and abort signals cost several
 * times more CPU per call, and a paid call makes two of these requests.
 */
import { FacilitatorResponseError, FacilitatorTimeoutError, type FacilitatorClient } from '@x402/core/server';
import {
  SettleError,
  VerifyError,
  type PaymentPayload,
  type PaymentRequirements,
  type SettleResponse,
  type SupportedResponse,
  type VerifyResponse,
} from '@x402/core/types';
import type { Pool } from 'undici';
import { z } from 'zod';

/** The three facilitator operations. */
export type FacilitatorOperation = 'verify' | 'settle' | 'supported';

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
}

/** Largest answer read from a facilitator (an answer is a few hundred bytes). */
const MAX_ANSWER_BYTES = 1024 * 1024;
const SUPPORTED_ATTEMPTS = 3;

const optionalText = z
  .string()
  .nullish()
  .transform((v) => v ?? undefined);
const optionalRecord = z
  .record(z.string(), z.unknown())
  .nullish()
  .transform((v) => v ?? undefined);
const VerifyAnswer = z.object({
  isValid: z.boolean(),
  invalidReason: optionalText,
  invalidMessage: optionalText,
  payer: optionalText,
  extensions: optionalRecord,
  extra: optionalRecord,
});
const SettleAnswer = z.object({
  success: z.boolean(),
  errorReason: optionalText,
  errorMessage: optionalText,
  payer: optionalText,
  transaction: z.string(),
  network: z.string(),
  amount: optionalText,
  extensions: optionalRecord,
  extra: optionalRecord,
});
const SupportedAnswer = z.object({
  kinds: z.array(z.object({ x402Version: z.number(), scheme: z.string(), network: z.string(), extra: optionalRecord })),
  extensions: z.array(z.string()).default([]),
  signers: z.record(z.string(), z.array(z.string())).default({}),
});

/** The first 200 characters of an answer, on one line (errors quote it). */
function excerpt(text: string): string {
  const compact = text.trim().replace(/\s+/g, ' ');
  if (!compact) return '<empty response>';
  return compact.length <= 200 ? compact : `${compact.slice(0, 197)}...`;
}

const bigintSafe = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

interface Answer {
  status: number;
  /** The body, with every header value we sent blanked out (an echoing proxy must not put a secret in an error). */
  text: string;
  retryAfter: string | undefined;
}

/** `text` with each secret (and its part after `Bearer `) replaced; values shorter than 4 characters are left alone. */
function redacted(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    for (const part of [secret, secret.replace(/^Bearer\s+/i, '')])
      if (part.length >= 4) out = out.split(part).join('[redacted]');
  }
  return out;
}

/** A 401/403 answer: the facilitator's own reason when its JSON body gives one, else an excerpt. */
function authReason(text: string): string {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    for (const field of ['errorMessage', 'message', 'error', 'errorType']) {
      if (typeof body[field] === 'string' && body[field]) return excerpt(body[field] as string);
    }
  } catch {
    // not JSON: quote the text
  }
  return excerpt(text);
}

function isTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
}

/** A FacilitatorClient for one facilitator base URL (e.g. `https://x402.org/facilitator`). */
export function createHttpFacilitatorClient(
  baseUrl: string,
  options: HttpFacilitatorOptions,
): FacilitatorClient & { close(): Promise<void> } {
  const base = new URL(baseUrl.replace(/\/+$/, '') + '/');
  // undici loads with the first request to the facilitator, not at start-up.
  let pool: Promise<Pool> | undefined;
  const poolOf = () =>
    (pool ??= import('undici').then(
      ({ Pool }) => new Pool(base.origin, { connections: options.connections ?? 64, keepAliveTimeout: 30_000 }),
    ));
  // How errors name this facilitator: origin and path, never a user name, password or query.
  const shown = `${base.origin}${base.pathname}`.replace(/\/+$/, '');
  const urls = {
    verify: new URL('verify', base),
    settle: new URL('settle', base),
    supported: new URL('supported', base),
  };

  async function exchange(
    operation: FacilitatorOperation,
    method: 'GET' | 'POST',
    body: string | undefined,
    timeoutMs: number,
  ): Promise<Answer> {
    const url = urls[operation];
    const auth = options.headers ? await options.headers({ method, url: url.href }, operation) : {};
    const headers: Record<string, string> = {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...auth,
    };
    try {
      const res = await (
        await poolOf()
      ).request({
        path: url.pathname + url.search,
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const length = Number(res.headers['content-length'] ?? 0);
      if (length > MAX_ANSWER_BYTES) {
        res.body.destroy();
        throw new FacilitatorResponseError(
          `Facilitator ${operation} answered ${length} bytes, more than ${MAX_ANSWER_BYTES}`,
        );
      }
      const retryAfter = res.headers['retry-after'];
      const text = redacted(await res.body.text(), Object.values(auth));
      if (res.statusCode === 401 || res.statusCode === 403)
        throw new FacilitatorAuthError(operation, res.statusCode, authReason(text), `the facilitator ${shown}`);
      return { status: res.statusCode, text, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter };
    } catch (err) {
      if (isTimeout(err)) throw new FacilitatorTimeoutError(operation, timeoutMs);
      throw err;
    }
  }

  function parsed<T>(operation: FacilitatorOperation, schema: z.ZodType<T>, text: string): T {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new FacilitatorResponseError(`Facilitator ${operation} returned invalid JSON: ${excerpt(text)}`);
    }
    const result = schema.safeParse(json);
    if (!result.success)
      throw new FacilitatorResponseError(`Facilitator ${operation} returned invalid data: ${excerpt(text)}`);
    return result.data;
  }

  /** A non-2xx answer: the facilitator's own verdict when its body carries one, else an error quoting it. */
  function refusal(operation: 'verify' | 'settle', answer: Answer): Error {
    let data: unknown;
    try {
      data = JSON.parse(answer.text);
    } catch {
      return new Error(`Facilitator ${operation} failed (${answer.status}): ${excerpt(answer.text)}`);
    }
    if (operation === 'verify' && typeof data === 'object' && data !== null && 'isValid' in data)
      return new VerifyError(answer.status, data as VerifyResponse);
    if (operation === 'settle' && typeof data === 'object' && data !== null && 'success' in data)
      return new SettleError(answer.status, data as SettleResponse);
    return new Error(`Facilitator ${operation} failed (${answer.status}): ${excerpt(JSON.stringify(data))}`);
  }

  async function post<T>(
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
    const answer = await exchange(operation, 'POST', body, timeoutMs);
    if (answer.status < 200 || answer.status >= 300) throw refusal(operation, answer);
    return parsed(operation, schema, answer.text);
  }

  return {
    verify: (payload, requirements) =>
      post('verify', VerifyAnswer, payload, requirements, options.timeoutMs) as Promise<VerifyResponse>,
    settle: (payload, requirements) =>
      post('settle', SettleAnswer, payload, requirements, options.settleTimeoutMs) as Promise<SettleResponse>,
    async getSupported(): Promise<SupportedResponse> {
      for (let attempt = 1; ; attempt++) {
        const answer = await exchange('supported', 'GET', undefined, options.timeoutMs);
        if (answer.status >= 200 && answer.status < 300)
          return parsed('supported', SupportedAnswer, answer.text) as SupportedResponse;
        const error = new Error(`Facilitator getSupported failed (${answer.status}): ${excerpt(answer.text)}`);
        if (answer.status !== 429 || attempt >= SUPPORTED_ATTEMPTS) throw error;
        const seconds = Number(answer.retryAfter);
        await new Promise((resolve) =>
          setTimeout(
            resolve,
            Math.min(Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000 * 2 ** (attempt - 1), 30_000),
          ),
        );
      }
    },
    close: async () => {
      if (pool) await (await pool).close();
    },
  };
}
