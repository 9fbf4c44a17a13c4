/** The look-alike facilitator's endpoints (facilitator.ts): how `/verify` and `/settle` answer in each mode. */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { x402Facilitator } from '@x402/core/facilitator';
import { SettleError, VerifyError, type PaymentPayload, type PaymentRequirements } from '@x402/core/types';

/**
 * How an endpoint of the look-alike answers:
 * - `ok`: the real official facilitator answers;
 * - `hang`: the request is accepted and never answered (until `close()`);
 * - `garbage`: 200 with a body that is not JSON;
 * - `http500`: 500 with a JSON error body, as a crashing facilitator would;
 * - `work-then-hang`: the real facilitator does the work (on chain for settle), and the request is never answered.
 */
export type EndpointMode = 'ok' | 'hang' | 'garbage' | 'http500' | 'work-then-hang';

/** A fixed answer an endpoint gives instead of the real facilitator's (e.g. an error body echoing a credential). */
export interface FixedAnswer {
  status: number;
  body: unknown;
}

/** The two endpoints that take a payment. */
export type PaymentEndpoint = 'verify' | 'settle';

/** What the endpoints answer with and count: the real facilitator, the modes, fixed answers and a rewrite. */
export interface EndpointState {
  facilitator: x402Facilitator;
  modes: Record<PaymentEndpoint, EndpointMode>;
  calls: { verify: number; settle: number; supported: number };
  abandoned: Record<PaymentEndpoint, number>;
  fixed: { verify?: FixedAnswer | undefined; settle?: FixedAnswer | undefined };
  rewrite: ((kind: PaymentEndpoint, answer: Record<string, unknown>) => unknown) | undefined;
  refused: number;
}

interface FacilitatorRequestBody {
  x402Version?: unknown;
  paymentPayload?: PaymentPayload;
  paymentRequirements?: PaymentRequirements;
}

/** Writes a JSON answer with its length. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<FacilitatorRequestBody | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as FacilitatorRequestBody) : undefined;
  } catch {
    return undefined;
  }
}

/** Closes each connection after `ms` without a request running, announcing nothing (no Keep-Alive header). */
export function closeIdle(server: Server, ms: number): void {
  server.keepAliveTimeout = 0;
  const timers = new WeakMap<Socket, NodeJS.Timeout>();
  const idle = (socket: Socket) => {
    clearTimeout(timers.get(socket));
    timers.set(
      socket,
      setTimeout(() => socket.destroy(), ms),
    );
  };
  server.on('connection', idle);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    clearTimeout(timers.get(req.socket));
    res.once('finish', () => idle(req.socket));
  });
}

/** The standard facilitator's error body for what the official facilitator threw. */
function errorAnswer(err: unknown): FixedAnswer {
  if (err instanceof VerifyError) {
    const { invalidReason, invalidMessage, payer } = err;
    return { status: err.statusCode, body: { isValid: false, invalidReason, invalidMessage, payer } };
  }
  if (err instanceof SettleError) {
    const { errorReason, errorMessage, payer, transaction, network } = err;
    return {
      status: err.statusCode,
      body: { success: false, errorReason, errorMessage, payer, transaction, network },
    };
  }
  return { status: 500, body: { error: 'internal_error', message: (err as Error).message } };
}

/** Answers one `/verify` or `/settle` request as the endpoint's fixed answer or mode says. */
export async function answerEndpoint(
  state: EndpointState,
  kind: PaymentEndpoint,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  state.calls[kind]++;
  res.once('close', () => void (res.writableFinished || state.abandoned[kind]++));
  const body = await readJson(req);
  const given = state.fixed[kind];
  if (given) return sendJson(res, given.status, given.body);
  const mode = state.modes[kind];
  if (mode === 'hang') return; // never answered; close() destroys the socket
  if (mode === 'garbage') {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><body>502 Bad Gateway (upstream sent nonsense)</body></html>');
    return;
  }
  if (mode === 'http500')
    return sendJson(res, 500, { error: 'internal_error', message: `the facilitator crashed while handling ${kind}` });
  if (!body?.paymentPayload || !body.paymentRequirements)
    return sendJson(res, 400, {
      error: 'invalid_request',
      message: 'expected { x402Version, paymentPayload, paymentRequirements }',
    });
  try {
    const result = await state.facilitator[kind](body.paymentPayload, body.paymentRequirements);
    if (state.modes[kind] === 'work-then-hang') return; // did the work (on chain for settle), never answers
    const { rewrite } = state;
    sendJson(res, 200, rewrite ? rewrite(kind, result as unknown as Record<string, unknown>) : result);
  } catch (err) {
    const answer = errorAnswer(err);
    sendJson(res, answer.status, answer.body);
  }
}
