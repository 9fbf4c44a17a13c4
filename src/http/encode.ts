import type { RequestHandler, Response } from 'express';
import type { PaymentAnswer } from '../payments/answer/types.js';
import type { ToolError } from '../shared/errors.js';
import { refusalFor } from '../pipeline/charge-note.js';

/** Where a request of a paid route is marked, for the refusals made before the pipeline. */
const PAID_ROUTE = 'tollboothPaidRoute';

/** A path as Express routes it: case-insensitive, trailing slashes ignored. */
const routed = (path: string) => path.replace(/\/+$/, '').toLowerCase();

/**
 * Marks the requests for a paid route (`paidPaths`: the paid tools' paths, and /mcp while it serves a paid tool), so
 * that every refusal made before the pipeline ends with the charge fact there and never on any other route. Mount it
 * in front of everything that may refuse a request (the per-IP limit, the shutdown gate).
 */
export function chargeScope(paidPaths: Iterable<string>): RequestHandler {
  const paid = new Set([...paidPaths].map(routed));
  return (req, res, next) => {
    if (paid.has(routed(req.path))) res.locals[PAID_ROUTE] = true;
    next();
  };
}

/** A refusal made before the pipeline as this request is answered: with the charge fact on a paid route only. */
export function refusalOf(res: Response, error: ToolError): ToolError {
  return refusalFor(error, res.locals[PAID_ROUTE] === true);
}

/** Sends a refusal made before the pipeline: the error body with the status of the error table. */
export function sendError(res: Response, error: ToolError): void {
  const refusal = refusalOf(res, error);
  res.setHeader('Cache-Control', 'no-store');
  res.status(refusal.httpStatus).json(refusal.toBody());
}

/**
 * Writes a call's answer as an HTTP response: the headers of the protocols offered beside the speaker, then the
 * speaker's (x402 or MPP), `Retry-After`, `Cache-Control`, and the speaker's body, else the output or error body.
 */
export function writeAnswer(res: Response, answer: PaymentAnswer): void {
  const writes = [...answer.beside.map((part) => part.http(answer)), answer.speaker.http(answer)];
  for (const write of writes) for (const [name, value] of write.headers) res.setHeader(name, value);
  if (answer.retryAfter !== undefined) res.setHeader('Retry-After', String(answer.retryAfter));
  res.setHeader('Cache-Control', answer.private ? 'private, no-store' : 'no-store');
  const body = writes[writes.length - 1]!.body ?? { json: answer.outcome === 'success' ? answer.output : answer.error };
  if ('json' in body) {
    res.status(answer.status).json(body.json);
    return;
  }
  res.setHeader('Content-Type', body.contentType);
  res.status(answer.status).end(body.text);
}
