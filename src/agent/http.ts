/**
 * HTTP to the remote deployment: builds the request of a tool call from its definition (method, path, query or
 * JSON body), sends it with a time limit, and reads the answer into a value (challenge, receipt, error body, or
 * no answer at all). The x402 headers are read and written with `@x402/core/http`.
 */
import { decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, SettleResponse } from '@x402/core/types';
import { ToolError } from '../shared/errors.js';
import { isMcpEndpoint, type McpRemotes } from './mcp-remote.js';
import { offersMpp, readMppOffers, readMppReceipt } from './mpp.js';
import { readChallenge, type RemoteAnswer, type RemoteRequest, type SignedPayment } from './remote.js';

export type { RemoteAnswer, RemoteChallenge, RemoteRequest, SignedPayment } from './remote.js';
export { readChallenge } from './remote.js';

/** The methods a tool call can use: GET and DELETE carry the input in the query string, the others as a JSON body. */
export type ToolMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Headers a published document may not ask the caller to fill (case-insensitive): hop-by-hop and framing headers,
 * the ones `fetch` sets itself, credentials and cookies, and every payment header of x402 and MPP, which only the
 * payer writes. Also refused: any `proxy-*` or `sec-*` name, and a name that is not an HTTP token.
 */
const REFUSED_HEADERS = new Set([
  'accept',
  'accept-encoding',
  'authorization',
  'connection',
  'content-length',
  'content-type',
  'cookie',
  'expect',
  'host',
  'keep-alive',
  'origin',
  'payment-receipt',
  'payment-required',
  'payment-response',
  'payment-signature',
  'referer',
  'set-cookie',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'www-authenticate',
  'x-payment',
  'x-payment-response',
]);

/** Whether a tool may not send a header of this name (see {@link REFUSED_HEADERS}). */
export function isRefusedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(lower)) return true;
  return REFUSED_HEADERS.has(lower) || lower.startsWith('proxy-') || lower.startsWith('sec-');
}

/** The input fields named in `names` as request headers (taken out of `fields`); throws on a value that is not one line of text. */
function takeHeaders(fields: Record<string, unknown>, names: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = fields[name];
    delete fields[name];
    if (value === undefined || value === null || isRefusedHeader(name)) continue;
    const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
    if (!/^[\t\x20-\x7e\x80-\uffff]*$/.test(text) || text.length > 8192)
      throw new ToolError(
        'invalid_input',
        `${name} must be one line of text of at most 8192 characters (it is sent as a header).`,
        {
          field: name,
        },
      );
    headers[name.toLowerCase()] = text;
  }
  return headers;
}

/**
 * Builds the request of a call: query string for GET and DELETE, JSON body for POST, PUT and PATCH; `:name` path
 * parameters come out of the input, and the fields named in `headers` go as request headers (never as a refused one,
 * {@link isRefusedHeader}). A base URL ending in `/mcp` is an MCP endpoint: the call is a tools/call of the tool by name.
 */
export function buildRequest(
  base: string,
  tool: { name?: string; method: ToolMethod; path: string; headers?: readonly string[] },
  input: unknown,
): RemoteRequest {
  if (tool.name && isMcpEndpoint(base))
    return { url: base.replace(/\/+$/, ''), method: 'POST', mcp: { tool: tool.name, args: input ?? {} } };
  const fields: Record<string, unknown> =
    typeof input === 'object' && input !== null && !Array.isArray(input)
      ? { ...(input as Record<string, unknown>) }
      : {};
  const headers = takeHeaders(fields, tool.headers ?? []);
  const extra = Object.keys(headers).length > 0 ? { headers } : {};
  const path = tool.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => {
    const value = fields[name];
    delete fields[name];
    return encodeURIComponent(value === undefined || value === null ? '' : String(value));
  });
  const url = new URL(base.replace(/\/+$/, '') + path);
  if (tool.method === 'GET' || tool.method === 'DELETE') {
    for (const [key, value] of Object.entries(fields)) {
      if (value === undefined || value === null) continue;
      for (const item of Array.isArray(value) ? value : [value])
        url.searchParams.append(key, typeof item === 'object' ? JSON.stringify(item) : String(item));
    }
    return { url: url.href, method: tool.method, ...extra };
  }
  // The body is the whole input (path parameters included, as before), less the fields sent as headers.
  const body = tool.headers?.length ? withoutKeys(input, tool.headers) : input;
  return {
    url: url.href,
    method: tool.method,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    ...extra,
  };
}

/** An object input without the given keys (another value as it is). */
function withoutKeys(input: unknown, keys: readonly string[]): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  return Object.fromEntries(Object.entries(input).filter(([k]) => !keys.includes(k)));
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

/** The headers a payment travels in over HTTP. */
function headersOf(payment: SignedPayment | undefined): Record<string, string> {
  if (!payment) return {};
  return payment.protocol === 'x402' ? paymentHeaders(payment.payload) : { [payment.header]: payment.value };
}

/** The answer of a response that came back whole: success (with receipts), a challenge, or an error body. */
async function readAnswer(res: Response, text: string, readMpp: boolean): Promise<RemoteAnswer> {
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
  if (res.ok) {
    const mppReceipt = readMppReceipt(res.headers.get('payment-receipt'));
    return { type: 'ok', status: res.status, body, ...withReceipt, ...(mppReceipt ? { mppReceipt } : {}) };
  }
  if (res.status === 402 || res.status === 412) {
    const challenge = readChallenge(res.headers.get('payment-required'), body);
    const authenticate = res.headers.get('www-authenticate');
    const hasMpp = offersMpp(authenticate);
    const mpp = readMpp && hasMpp ? await readMppOffers(authenticate) : [];
    const unread = !readMpp && hasMpp ? { mppHeader: authenticate! } : {};
    if (challenge || mpp.length > 0 || unread.mppHeader)
      return {
        type: 'challenge',
        status: res.status,
        ...(challenge ? { challenge } : {}),
        mpp,
        ...unread,
        body,
        ...withReceipt,
      };
  }
  const retryAfter = Number(res.headers.get('retry-after'));
  return {
    type: 'error',
    status: res.status,
    body,
    ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
    ...withReceipt,
  };
}

/**
 * Sends one request (an MCP one through `remotes`), with an optional payment, within `timeoutMs`; never throws for a
 * network failure. `readMpp: false` ignores MPP challenges.
 */
export async function send(
  remotes: McpRemotes,
  req: RemoteRequest,
  timeoutMs: number,
  signal: AbortSignal,
  payment?: SignedPayment,
  readMpp = true,
): Promise<RemoteAnswer> {
  // Over MCP the challenges come as JSON objects (mppx is not needed to read them): they are always read.
  if (req.mcp) return remotes.call({ ...req, mcp: req.mcp }, timeoutMs, signal, payment, true);
  const headers = headersOf(payment);
  const timeout = AbortSignal.timeout(timeoutMs);
  let res: Response;
  let text: string;
  try {
    res = await fetch(req.url, {
      method: req.method,
      headers: {
        accept: 'application/json',
        ...(req.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...req.headers,
        ...headers,
      },
      ...(req.body !== undefined ? { body: req.body } : {}),
      signal: AbortSignal.any([signal, timeout]),
    });
    text = await res.text();
  } catch (err) {
    if (signal.aborted) throw err;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const message = timeout.aborted
      ? `no answer within ${timeoutMs} ms`
      : (cause?.code ?? cause?.message ?? (err as Error).message);
    return { type: 'no_answer', message, timedOut: timeout.aborted };
  }
  return readAnswer(res, text, readMpp);
}
