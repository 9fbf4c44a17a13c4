import type { Response } from 'express';
import type { PaymentAnswer } from '../payments/answer/types.js';
import type { ErrorBody } from '../../schemas/errors.js';

/** Sends an error body with the status of the error table. */
export function sendError(res: Response, status: number, body: ErrorBody): void {
  res.setHeader('Cache-Control', 'no-store');
  res.status(status).json(body);
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
