/**
 * Builds the one answer of a call from what the pipeline came to: its status, what was charged, the challenges of
 * every protocol offered, and the protocol parts the transports write out. The only place that branches on the
 * result kind for the transports.
 */
import { PENDING_RETRY_AFTER_SECONDS, pendingBody } from '../../shared/errors.js';
import type { CallResult } from '../../pipeline/call.js';
import type { AnyPaidToolDefinition } from '../../tool/tool.js';
import type { MppGate } from '../mpp/gate.js';
import { mppRefusalStatus } from '../mpp/problem.js';
import { mppOffer, mppPart } from './mpp.js';
import type { Challenge } from '../challenges/requirements.js';
import type { AnswerPart, PaymentAnswer } from './types.js';
import { x402Part } from './x402.js';

/** How a call was offered and paid: the tool (and its x402 version), the MPP gate, the MPP credential's challenge. */
export interface AnswerContext {
  tool: { name: string };
  /** The x402 version of the tool's route (2 for a free tool, whose answers carry no x402 header). */
  version: 1 | 2;
  /** The MPP gate of a paid tool: fresh challenges beside x402 on a payment-required answer. */
  mpp?: { gate: MppGate; tool: AnyPaidToolDefinition };
  /** Present when the caller paid with an MPP credential (its challenge id when it could be read). */
  credential?: { challengeId?: string };
  /** A version 1 tool's v2 face's challenge, shown beside its own on a payment-required answer (HTTP's v2 header). */
  companion?: Challenge;
}

/** True when the answer is a payment-required one: the place the MPP challenges go. */
function offersChallenges(result: CallResult): boolean {
  return (
    result.type === 'payment_required' || result.type === 'settlement_failed' || result.type === 'payment_rejected'
  );
}

/** The answer of a call that carries both an MPP credential and an x402 payment (nothing else was read). */
export function bothProtocolsAnswer(): PaymentAnswer {
  return {
    outcome: 'both_protocols',
    status: 400,
    charge: 'none',
    challenges: {},
    private: false,
    speaker: mppPart(undefined),
    beside: [],
  };
}

/** A payment-required answer's x402 challenges: the tool's, and its v2 face's beside a version 1 one. */
function required(challenge: Challenge, ctx: AnswerContext): PaymentAnswer['challenges'] {
  return ctx.companion ? { x402: challenge, companion: ctx.companion } : { x402: challenge };
}

/** The answer of a pipeline result. */
export function answerFor(result: CallResult, ctx: AnswerContext): PaymentAnswer {
  const speaker: AnswerPart = ctx.credential
    ? mppPart(ctx.credential.challengeId)
    : x402Part(ctx.tool.name, ctx.version);
  const beside = ctx.credential || !ctx.mpp?.gate.enabled ? [] : [mppOffer];
  const base = { speaker, beside, charge: 'none' as const, private: false, challenges: {} };
  let answer: PaymentAnswer;
  switch (result.type) {
    case 'success':
      answer = {
        ...base,
        outcome: 'success',
        status: 200,
        output: result.output,
        receipt: result.receipt,
        charge: result.receipt ? 'settled' : 'none',
        private: result.receipt !== undefined || ctx.credential !== undefined,
      };
      break;
    case 'payment_required':
      answer = { ...base, outcome: 'payment_required', status: 402, challenges: required(result.challenge, ctx) };
      break;
    case 'settlement_failed': {
      const { receipt, challenge } = result;
      answer = { ...base, outcome: 'settlement_failed', status: 402, receipt, challenges: { x402: challenge } };
      break;
    }
    case 'settlement_pending': {
      const { receipt } = result;
      const error = pendingBody(receipt);
      const pending = { outcome: 'settlement_pending', status: 503, charge: 'pending', receipt, error } as const;
      answer = { ...base, ...pending, retryAfter: PENDING_RETRY_AFTER_SECONDS };
      break;
    }
    case 'payment_rejected': {
      const { status, reason, message, challenge } = result.rejection;
      answer = {
        ...base,
        outcome: 'payment_rejected',
        // An MPP credential is refused as the MPP draft does: 402 with fresh challenges whenever paying again helps.
        status: ctx.credential ? mppRefusalStatus(reason, status) : status,
        refusal: { reason, message },
        challenges: { x402: challenge },
      };
      break;
    }
    case 'error': {
      const { error } = result;
      const seconds = error.details?.retryAfterSeconds;
      // A free tool's route never said when to retry; a paid one does (rate limits, busy lanes).
      const retry = ctx.mpp && typeof seconds === 'number' && seconds > 0 ? { retryAfter: Math.ceil(seconds) } : {};
      answer = { ...base, outcome: 'error', status: error.httpStatus, error: error.toBody(), ...retry };
      break;
    }
  }
  if (ctx.mpp && answer.status === 402 && offersChallenges(result) && (ctx.credential || beside.length > 0))
    answer.challenges = { ...answer.challenges, mpp: ctx.mpp.gate.challenges(ctx.mpp.tool) };
  return answer;
}
