import type { Response } from 'express';
import type { SettleResponse } from '@x402/core/types';
import type { CallResult } from '../invoke.js';
import type { Challenge } from '../payments/requirements.js';
import type { ErrorBody } from '../../schemas/errors.js';
import { PENDING_RETRY_AFTER_SECONDS, answersWithChallenge, pendingBody, refusalBody, withHint } from '../errors.js';

/** Headers of the x402 HTTP transport, by protocol version. */
export const HEADERS = {
  required: 'PAYMENT-REQUIRED',
  response: { 1: 'X-PAYMENT-RESPONSE', 2: 'PAYMENT-RESPONSE' },
} as const;

/** Standard base64 of the UTF-8 JSON, as the x402 headers carry it. */
export function toBase64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

interface EncodedChallenge {
  header: string;
  body: string;
}

/** Encodings of the shared per-tool challenges, computed once (the unpaid 402 is the hot path). */
const encoded = new WeakMap<Challenge, EncodedChallenge>();

function encode(challenge: Challenge): EncodedChallenge {
  let hit = encoded.get(challenge);
  if (!hit) {
    const body = JSON.stringify(challenge);
    hit = { body, header: Buffer.from(body, 'utf8').toString('base64') };
    encoded.set(challenge, hit);
  }
  return hit;
}

function sendChallenge(res: Response, status: number, challenge: Challenge, extraBody?: Record<string, unknown>): void {
  const { header, body } = encode(challenge);
  if (challenge.x402Version === 2) res.setHeader(HEADERS.required, header);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.status(status).end(extraBody ? JSON.stringify({ ...challenge, ...extraBody }) : body);
}

function sendReceipt(res: Response, version: 1 | 2, receipt: SettleResponse): void {
  res.setHeader(HEADERS.response[version], toBase64Json(receipt));
}

/** Where an x402 payment goes over HTTP, by version: added to every refusal (the broker's messages name no transport). */
const PAYMENT_GOES = {
  1: 'Over HTTP, an x402 version 1 payment goes in the X-PAYMENT header.',
  2: 'Over HTTP, an x402 version 2 payment goes in the PAYMENT-SIGNATURE header (X-PAYMENT is for version 1).',
} as const;

/** Sends an error body with the status of the error table. */
export function sendError(res: Response, status: number, body: ErrorBody): void {
  res.setHeader('Cache-Control', 'no-store');
  res.status(status).json(body);
}

/** Encodes a pipeline result as an HTTP response (x402 HTTP transport, v1 or v2). */
export function sendCallResult(res: Response, result: CallResult, version: 1 | 2): void {
  switch (result.type) {
    case 'success':
      // A free tool's success has no receipt and is not tied to a payer: plain no-store.
      if (result.receipt) sendReceipt(res, version, result.receipt);
      res.setHeader('Cache-Control', result.receipt ? 'private, no-store' : 'no-store');
      res.status(200).json(result.output);
      return;
    case 'payment_required':
      sendChallenge(res, 402, result.challenge);
      return;
    case 'settlement_failed':
      sendReceipt(res, version, result.receipt);
      sendChallenge(res, 402, result.challenge);
      return;
    case 'settlement_pending':
      sendReceipt(res, version, result.receipt);
      res.setHeader('Retry-After', String(PENDING_RETRY_AFTER_SECONDS));
      sendError(res, 503, pendingBody(result.receipt));
      return;
    case 'payment_rejected': {
      const { rejection } = result;
      const hint = PAYMENT_GOES[version];
      if (answersWithChallenge(rejection.status)) {
        sendChallenge(res, rejection.status, rejection.challenge, { message: withHint(rejection.message, hint) });
        return;
      }
      sendError(res, rejection.status, refusalBody(rejection, hint));
      return;
    }
    case 'error':
      sendError(res, result.error.httpStatus, result.error.toBody());
      return;
  }
}
