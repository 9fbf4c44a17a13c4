/**
 * Sends a signed payment with its request and sees it through, never paying twice: a lost or late answer re-sends
 * the very same payment (same `payment-identifier`), a call still running or a settlement still being confirmed is
 * waited for (bounded), and whatever stays unknown is kept pending with its payment for the next identical call.
 * How each outcome is booked (and when the chain is asked first) is booking.ts. x402 payments and MPP credentials go
 * the same way; only the header they travel in and the receipt differ.
 */
import type { SettleResponse } from '@x402/core/types';
import { classifyAnswer } from './after-payment.js';
import { delivered, errorAfterPayment, keepPending, refusedAfterPayment, type DeliveryContext } from './booking.js';
import { send } from './http.js';
import type { McpRemotes } from './mcp-remote.js';
import type { CallOutcome } from './outcome.js';
import type { RemoteAnswer, SignedPayment } from './remote.js';

export type { SignedPayment } from './remote.js';

/** How often a payment is re-sent before its outcome is left pending: no answer, call in flight, settlement pending. */
export const RETRY_LIMITS = { noAnswer: 3, inFlight: 20, pending: 3 } as const;
const MAX_WAIT_SECONDS = 15;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A payment once sent is seen through whatever happens to the call that sent it (the caller gave up, the host
 * cancelled): its outcome is always recorded, within the retry limits. So delivery never aborts.
 */
const SEE_THROUGH = new AbortController().signal;

/** How many times each kind of answer has come back so far. */
interface Tries {
  noAnswer: number;
  inFlight: number;
  pending: number;
}

/**
 * An error answer to a sent payment, by its class (after-payment.ts): `again` after waiting when the same payment is
 * to be re-sent (the call is still running, or the settlement still being confirmed), else the booked outcome.
 */
async function afterError(
  ctx: DeliveryContext,
  payload: SignedPayment,
  answer: Extract<RemoteAnswer, { type: 'error' }>,
  tries: Tries,
): Promise<'again' | CallOutcome> {
  const verdict = classifyAnswer(answer, ctx.resumed || tries.noAnswer > 0);
  const wait = Math.min(answer.retryAfterSeconds ?? 1, MAX_WAIT_SECONDS) * 1000;
  switch (verdict.type) {
    case 'in_flight':
      if (++tries.inFlight > RETRY_LIMITS.inFlight)
        return keepPending(ctx, payload, stillOpen('payment_in_flight'), answer.receipt);
      await sleep(Math.min(wait, 1000));
      return 'again';
    case 'settling':
      return settling(ctx, payload, answer, verdict.reason!, tries, wait);
    case 'before_settlement':
    case 'already_used':
    case 'ambiguous':
      // Released at once when refused before settlement; otherwise the chain is asked before the budget gets it back.
      return errorAfterPayment(ctx, payload, answer, verdict);
  }
}

/** A settlement still open at the remote: the same payment is re-sent later, then kept pending. */
async function settling(
  ctx: DeliveryContext,
  payload: SignedPayment,
  answer: Extract<RemoteAnswer, { type: 'error' }>,
  code: string,
  tries: Tries,
  wait: number,
): Promise<'again' | CallOutcome> {
  if (code === 'settlement_outcome_unknown') {
    // No transaction is known: nothing to wait for on chain, and the receipt names none. Same payment, later.
    if (++tries.pending <= RETRY_LIMITS.pending) {
      ctx.log.info(
        'the remote does not know yet whether its settlement went through; re-sending the same payment later',
        { tool: ctx.tool, attempt: tries.pending, waitMs: wait },
      );
      await sleep(wait);
      return 'again';
    }
    return keepPending(
      ctx,
      payload,
      'the remote got no answer when it settled the payment and knows no transaction for it yet',
    );
  }
  if (++tries.pending <= RETRY_LIMITS.pending) {
    ctx.log.info('settlement still being confirmed; re-sending the same payment later', {
      tool: ctx.tool,
      attempt: tries.pending,
      waitMs: wait,
    });
    await sleep(wait);
    return 'again';
  }
  return keepPending(ctx, payload, stillOpen(code, answer.receipt), answer.receipt);
}

function stillOpen(code: string, receipt?: SettleResponse): string {
  return code === 'settlement_pending'
    ? `the remote is still confirming its settlement${receipt?.transaction ? ` (transaction ${receipt.transaction})` : ''}`
    : 'the remote is still running the call';
}

/**
 * Sends the payment (an MCP call through `ctx.mcp`) until its outcome is known or the retry limits are reached; books
 * the outcome in the spending ledger.
 */
export async function deliver(
  ctx: DeliveryContext & { mcp: McpRemotes },
  payload: SignedPayment,
): Promise<CallOutcome> {
  const tries: Tries = { noAnswer: 0, inFlight: 0, pending: 0 };
  for (;;) {
    const answer = await send(ctx.mcp, ctx.request, ctx.timeoutMs, SEE_THROUGH, payload);
    switch (answer.type) {
      case 'ok':
        return delivered(ctx, payload, answer.body, answer.receipt, answer.mppReceipt);
      case 'no_answer':
        if (++tries.noAnswer > RETRY_LIMITS.noAnswer) {
          return keepPending(
            ctx,
            payload,
            `no complete answer from ${ctx.request.url} after ${tries.noAnswer} attempts (${answer.message})`,
          );
        }
        ctx.log.warn('no answer to a paid call; re-sending the same payment', {
          tool: ctx.tool,
          attempt: tries.noAnswer,
          reason: answer.message,
        });
        await sleep(500 * 2 ** (tries.noAnswer - 1));
        continue;
      case 'challenge':
        return refusedAfterPayment(ctx, payload, answer, classifyAnswer(answer, ctx.resumed || tries.noAnswer > 0));
      case 'error': {
        const next = await afterError(ctx, payload, answer, tries);
        if (next === 'again') continue;
        return next;
      }
    }
  }
}
