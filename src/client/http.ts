/**
 * HTTP to the remote deployment: builds the request of a tool call from its definition (method, path, query or
 * JSON body), sends it with a time limit, and reads the answer into a value (challenge, receipt, error body, or
 * no answer at all). The x402 headers are read and written with `@x402/core/http`.
 */
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { z } from 'zod';

/** A paid challenge as received (either version); entries are kept exactly as sent, since payments echo them. */
export interface RemoteChallenge {
  x402Version: 1 | 2;
  error?: string;
  accepts: PaymentRequirements[];
  resource?: unknown;
  extensions?: Record<string, unknown>;
  [key: string]: unknown;
}

/** One HTTP request to the remote deployment. */
export interface RemoteRequest {
  url: string;
  method: 'GET' | 'POST';
  /** JSON body of a POST (undefined for GET). */
  body?: string;
}

/** What the remote answered. */
export type RemoteAnswer =
  | { type: 'ok'; status: number; body: unknown; receipt?: SettleResponse }
  /** 402 (or 412): a challenge; `receipt` is present when a settlement was attempted and failed. */
  | { type: 'challenge'; status: number; challenge: RemoteChallenge; body: unknown; receipt?: SettleResponse }
  | { type: 'error'; status: number; body: unknown; retryAfterSeconds?: number; receipt?: SettleResponse }
  /** No (complete) answer: refused connection, dropped connection, time limit. The request may or may not have been handled. */
  | { type: 'no_answer'; message: string; timedOut: boolean };

const EntrySchema = z
  .object({
    scheme: z.string().min(1),
    network: z.string().min(1),
    asset: z.string().min(1),
    payTo: z.string().min(1),
    amount: z.string().regex(/^\d+$/).optional(),
    maxAmountRequired: z.string().regex(/^\d+$/).optional(),
  })
  .passthrough()
  .refine((e) => e.amount !== undefined || e.maxAmountRequired !== undefined, 'an entry needs amount or maxAmountRequired');

const ChallengeSchema = z
  .object({ x402Version: z.union([z.literal(1), z.literal(2)]), accepts: z.array(EntrySchema).min(1), extensions: z.record(z.string(), z.unknown()).optional() })
  .passthrough();

/** Builds the request of a call: query string for GET, JSON body for POST; `:name` path parameters come out of the input. */
export function buildRequest(base: string, tool: { method: 'GET' | 'POST'; path: string }, input: unknown): RemoteRequest {
  const fields: Record<string, unknown> = typeof input === 'object' && input !== null && !Array.isArray(input) ? { ...(input as Record<string, unknown>) } : {};
  const path = tool.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => {
    const value = fields[name];
    delete fields[name];
    return encodeURIComponent(value === undefined || value === null ? '' : String(value));
  });
  const url = new URL(base.replace(/\/+$/, '') + path);
  if (tool.method === 'GET') {
    for (const [key, value] of Object.entries(fields)) {
      if (value === undefined || value === null) continue;
      for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(key, typeof item === 'object' ? JSON.stringify(item) : String(item));
    }
    return { url: url.href, method: 'GET' };
  }
  return { url: url.href, method: 'POST', ...(input === undefined ? {} : { body: JSON.stringify(input) }) };
}

/** Reads a challenge from a 402's `PAYMENT-REQUIRED` header (version 2) or its JSON body (version 1); undefined when neither is one. */
export function readChallenge(header: string | null, body: unknown): RemoteChallenge | undefined {
  let candidate: unknown = body;
  if (header) {
    try {
      candidate = decodePaymentRequiredHeader(header);
    } catch {
      candidate = body;
    }
  }
  return ChallengeSchema.safeParse(candidate).success ? (candidate as RemoteChallenge) : undefined;
}

function readReceipt(res: Response): SettleResponse | undefined {
  const header = res.headers.get('payment-response') ?? res.headers.get('x-payment-response');
  if (!header) return undefined;
  try {
    return decodePaymentResponseHeader(header);
  } catch {
    return undefined;
  }
}

/** The header carrying a payment: `PAYMENT-SIGNATURE` (version 2) or `X-PAYMENT` (version 1). */
export function paymentHeaders(payload: PaymentPayload): Record<string, string> {
  return { [payload.x402Version === 1 ? 'X-PAYMENT' : 'PAYMENT-SIGNATURE']: encodePaymentSignatureHeader(payload) };
}

/** Sends one request, with an optional payment, within `timeoutMs`; never throws for a network failure. */
export async function send(req: RemoteRequest, timeoutMs: number, signal: AbortSignal, headers: Record<string, string> = {}): Promise<RemoteAnswer> {
  const timeout = AbortSignal.timeout(timeoutMs);
  let res: Response;
  let text: string;
  try {
    res = await fetch(req.url, {
      method: req.method,
      headers: { accept: 'application/json', ...(req.body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(req.body !== undefined ? { body: req.body } : {}),
      signal: AbortSignal.any([signal, timeout]),
    });
    text = await res.text();
  } catch (err) {
    if (signal.aborted) throw err;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const message = timeout.aborted ? `no answer within ${timeoutMs} ms` : (cause?.code ?? cause?.message ?? (err as Error).message);
    return { type: 'no_answer', message, timedOut: timeout.aborted };
  }
  let body: unknown = text;
  if (text.length > 0 && (res.headers.get('content-type') ?? '').includes('json')) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  const receipt = readReceipt(res);
  const withReceipt = receipt ? { receipt } : {};
  if (res.ok) return { type: 'ok', status: res.status, body, ...withReceipt };
  if (res.status === 402 || res.status === 412) {
    const challenge = readChallenge(res.headers.get('payment-required'), body);
    if (challenge) return { type: 'challenge', status: res.status, challenge, body, ...withReceipt };
  }
  const retryAfter = Number(res.headers.get('retry-after'));
  return { type: 'error', status: res.status, body, ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}), ...withReceipt };
}
