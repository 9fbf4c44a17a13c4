import type { Request, Response } from 'express';
import type { CallResult } from '../invoke.js';
import type { RawPayment } from '../payments/decode.js';
import type { MppGate } from '../payments/mpp/gate.js';
import { decodeCredential, isPaymentAuthorization } from '../payments/mpp/credential.js';
import { MPP_REASONS, paymentRequiredProblem, problemFor, type MppProblem } from '../payments/mpp/problem.js';
import { mppReceipt, receiptHeader } from '../payments/mpp/receipt.js';
import type { AnyPaidToolDefinition } from '../tool.js';
import { PENDING_RETRY_AFTER_SECONDS, pendingBody, withHint } from '../errors.js';
import { sendError } from './encode.js';

/** Headers of the MPP HTTP binding (the `Payment` authentication scheme). */
export const MPP_HEADERS = {
  challenge: 'WWW-Authenticate',
  credential: 'Authorization',
  receipt: 'Payment-Receipt',
} as const;

/** Where an MPP credential goes over HTTP: added to every refusal (the broker's messages name no transport). */
const CREDENTIAL_GOES = 'Over HTTP, the MPP credential goes in the Authorization header, scheme Payment.';

/** What a request carries in the way of payment, as far as MPP is concerned. */
export type MppRequestPayment =
  /** No `Authorization: Payment`: the x402 path (or no payment at all). */
  | { type: 'none' }
  /** An MPP credential, decoded within bounds (or the reason it cannot be), and the challenge id it answers. */
  | { type: 'mpp'; payment: RawPayment; challengeId?: string }
  /** Both an MPP credential and an x402 payment header: refused before anything else is read. */
  | { type: 'both' };

/** Reads `Authorization: Payment …` (any other Authorization scheme is not a payment and is ignored). */
export async function readMppPayment(req: Request): Promise<MppRequestPayment> {
  const authorization = req.header('authorization');
  if (!isPaymentAuthorization(authorization)) return { type: 'none' };
  if (req.header('payment-signature') !== undefined || req.header('x-payment') !== undefined) return { type: 'both' };
  const decoded = await decodeCredential({ from: 'header', value: authorization });
  return {
    type: 'mpp',
    payment: { source: 'mpp', value: decoded },
    ...(decoded.ok ? { challengeId: decoded.credential.challenge.id } : {}),
  };
}

/** Adds fresh MPP challenges (one per EVM EIP-3009 offer) to a 402 answer; nothing when MPP is off. */
export function addMppChallenges(res: Response, gate: MppGate, tool: AnyPaidToolDefinition): void {
  const issued = gate.challenges(tool);
  if (issued.length > 0) res.setHeader(MPP_HEADERS.challenge, issued.map((c) => c.header).join(', '));
}

/** True when the x402 answer of this result is a 402 (the place MPP challenges go too). */
export function answersPaymentRequired(result: CallResult): boolean {
  switch (result.type) {
    case 'payment_required':
    case 'settlement_failed':
      return true;
    case 'payment_rejected':
      return result.rejection.status === 402;
    case 'success':
    case 'settlement_pending':
    case 'error':
      return false;
  }
}

function sendProblem(res: Response, problem: MppProblem, gate: MppGate, tool: AnyPaidToolDefinition): void {
  if (problem.status === 402) addMppChallenges(res, gate, tool);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
  res.status(problem.status).end(JSON.stringify(problem));
}

/** The 400 for a request that carries both an MPP credential and an x402 payment. */
export function sendBothProtocols(res: Response): void {
  const detail =
    'The request carries both an MPP credential (Authorization: Payment) and an x402 payment (PAYMENT-SIGNATURE or X-PAYMENT). Send exactly one of them; neither was used and nothing was charged.';
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
  res.status(400).end(JSON.stringify(problemFor(MPP_REASONS.bothProtocols, 400, detail)));
}

/**
 * Encodes a pipeline result for a request that paid with MPP: `Payment-Receipt` on success, Problem Details with the
 * MPP error type on a refusal (fresh challenges on a 402); tool errors and pending settlements as for x402.
 */
export function sendMppCallResult(
  res: Response,
  result: CallResult,
  gate: MppGate,
  tool: AnyPaidToolDefinition,
  challengeId: string | undefined,
): void {
  switch (result.type) {
    case 'success':
      if (challengeId && result.receipt)
        res.setHeader(MPP_HEADERS.receipt, receiptHeader(mppReceipt(result.receipt, challengeId)));
      res.setHeader('Cache-Control', 'private, no-store');
      res.status(200).json(result.output);
      return;
    case 'payment_required':
      sendProblem(res, paymentRequiredProblem('Payment is required.'), gate, tool);
      return;
    case 'payment_rejected': {
      const { rejection } = result;
      const detail = withHint(rejection.message, CREDENTIAL_GOES);
      sendProblem(res, problemFor(rejection.reason, rejection.status, detail, challengeId), gate, tool);
      return;
    }
    case 'settlement_failed': {
      const reason = result.receipt.errorReason ?? 'settlement_failed';
      const detail = `The call succeeded but its payment did not settle (${reason}); the result is withheld and nothing was charged. Sign a new authorization for a fresh challenge.`;
      sendProblem(res, problemFor(reason, 402, detail, challengeId), gate, tool);
      return;
    }
    case 'settlement_pending':
      res.setHeader('Retry-After', String(PENDING_RETRY_AFTER_SECONDS));
      sendError(res, 503, pendingBody(result.receipt));
      return;
    case 'error':
      sendError(res, result.error.httpStatus, result.error.toBody());
      return;
  }
}

/** Response headers a browser client must be allowed to read or send for MPP. */
export const MPP_CORS = {
  allow: MPP_HEADERS.credential,
  expose: `${MPP_HEADERS.challenge}, ${MPP_HEADERS.receipt}`,
} as const;
