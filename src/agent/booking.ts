/**
 * What becomes of a payment once it has left, booked in the spending ledger: settled (with the answer), pending (kept
 * with the very payment, re-sent by the next identical call), failed, or released (nothing was charged). A refusal
 * the protocols define as coming before any settlement is released at once (after-payment.ts); whenever the remote's
 * answer leaves the payment's fate open, the chain is asked first (chain-check.ts): such a payment is never booked as
 * free on the remote's word alone, and when the chain cannot tell, it stays counted.
 */
import type { SettleResponse } from '@x402/core/types';
import type { z } from 'zod';
import { ToolError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import type { NetworkEntry } from '../shared/networks.js';
import type { NewSpend, SpendLedger, SpendStatus } from '../shared/spends.js';
import type { AnswerVerdict } from './after-payment.js';
import type { Budget } from './budget.js';
import { authorizationState, type AuthorizationState } from './chain-check.js';
import { usd } from './choose.js';
import type { MppReceipt } from './mpp.js';
import type { CallOutcome, PaymentNote } from './outcome.js';
import { forChainCheck, type ReceiptChecks } from './receipt-check.js';
import {
  remoteCode,
  remoteMessage,
  storedForm,
  type RemoteAnswer,
  type RemoteRequest,
  type SignedPayment,
} from './remote.js';

/** What delivering and booking one payment need. */
export interface DeliveryContext {
  spends: SpendLedger;
  budget: Budget;
  log: Logger;
  timeoutMs: number;
  /** The tool's output schema: the remote's answer is checked at this boundary. */
  output: z.ZodType;
  tool: string;
  request: RemoteRequest;
  /** The payment as claimed in the spending ledger. */
  spend: NewSpend;
  /** Re-sending a payment kept pending by an earlier call. */
  resumed: boolean;
  /** The network table: where the chain is asked about a payment whose fate the remote left open. */
  networks: readonly NetworkEntry[];
  /** Checks on chain, after the answer, a payment the seller reported settled (absent: not checked). */
  receiptChecks?: ReceiptChecks;
}

/** Upper bound on one on-chain check of a payment (each RPC request). */
const CHAIN_CHECK_TIMEOUT_MS = 10_000;

/** The note shown with a result: what was paid and where today's budget stands. */
export async function paymentNote(
  ctx: Pick<DeliveryContext, 'budget' | 'spend'>,
  status: SpendStatus,
): Promise<PaymentNote> {
  const { spend } = ctx;
  const today = await ctx.budget.status(spend.day);
  return {
    status,
    protocol: spend.protocol ?? 'x402',
    network: spend.network,
    asset: spend.asset,
    amount: spend.amount,
    usd: usd(spend.usdMicros),
    ...(spend.paymentId ? { paymentId: spend.paymentId } : {}),
    spentToday: usd(today.spentMicros),
    remainingToday: usd(today.remainingMicros),
  };
}

/** Books a delivered call as settled and checks the answer against the tool's output schema. */
export async function delivered(
  ctx: DeliveryContext,
  sent: SignedPayment,
  body: unknown,
  x402Receipt: SettleResponse | undefined,
  mppReceipt: MppReceipt | undefined,
): Promise<CallOutcome> {
  // An MPP credential's receipt names the transaction (`reference`); the payer is the authorization's signer.
  const receipt = sent.protocol === 'mpp' ? undefined : x402Receipt;
  const transaction = sent.protocol === 'mpp' ? mppReceipt?.reference : receipt?.transaction;
  const payer = sent.protocol === 'mpp' ? sent.from : receipt?.payer;
  await ctx.spends.completeSpend(ctx.spend.id, {
    status: 'settled',
    ...(transaction ? { transaction } : {}),
    ...(payer ? { payer } : {}),
    // Kept until the chain confirms it, for the receipt check and its later re-checks (receipt-check.ts).
    ...(ctx.receiptChecks?.checks(ctx.spend) ? { payload: storedForm(sent) } : {}),
  });
  ctx.receiptChecks?.schedule(ctx.spend, sent);
  const payment = await paymentNote(ctx, 'settled');
  ctx.log.info('paid a remote call', {
    tool: ctx.tool,
    protocol: sent.protocol,
    network: ctx.spend.network,
    usd: payment.usd,
    transaction,
    spentToday: payment.spentToday,
  });
  const receipts = {
    ...(receipt ? { receipt } : {}),
    ...(sent.protocol === 'mpp' && mppReceipt ? { mppReceipt } : {}),
  };
  const checked = ctx.output.safeParse(body);
  if (!checked.success) {
    const error = new ToolError(
      'upstream_invalid',
      `The remote's answer to ${ctx.tool} does not match the tool's output schema; the call was paid (${payment.usd}, receipt in _meta). Report it to the remote's operator.`,
    );
    return { type: 'refused', error, ...receipts, payment };
  }
  return { type: 'success', output: checked.data, ...receipts, payment };
}

/** Keeps a payment whose outcome is unknown pending, with the payment itself, for the next identical call. */
export async function keepPending(
  ctx: DeliveryContext,
  sent: SignedPayment,
  why: string,
  receipt?: SettleResponse,
): Promise<CallOutcome> {
  await ctx.spends.completeSpend(ctx.spend.id, {
    status: 'pending',
    payload: storedForm(sent),
    note: why,
    ...(receipt?.transaction ? { transaction: receipt.transaction } : {}),
  });
  const payment = await paymentNote(ctx, 'pending');
  const error = new ToolError(
    'payment_pending',
    `The payment for ${ctx.tool} (${payment.usd} on ${ctx.spend.network}) may have been taken, but its outcome is not known yet: ${why}. It counts against today's budget and is kept: call ${ctx.tool} again with the same input later to receive the result; the very same payment is re-sent, never a new one.`,
    { details: { paymentId: ctx.spend.paymentId, network: ctx.spend.network, transaction: receipt?.transaction } },
  );
  return { type: 'refused', error, ...(receipt ? { receipt } : {}), payment };
}

/** What became of a refused payment: the chain's answer, or `not_sent` when the refusal came before any settlement. */
type Fate = AuthorizationState | { type: 'not_sent'; rule: string };

/**
 * What became of a payment the remote refused or answered with an error after it left (classified by
 * after-payment.ts): refused before any settlement → not sent (no chain check); "already used" to the very same
 * payment re-sent → it settled and the answer was lost; anything ambiguous is asked of the chain.
 */
async function fateOf(ctx: DeliveryContext, sent: SignedPayment, verdict: AnswerVerdict): Promise<Fate> {
  switch (verdict.type) {
    case 'before_settlement':
      return { type: 'not_sent', rule: verdict.rule };
    case 'already_used':
      return { type: 'used' };
    case 'in_flight':
    case 'settling':
    case 'ambiguous':
      break;
  }
  const { reason } = verdict;
  const state = await authorizationState(
    forChainCheck(sent),
    { network: ctx.spend.network, asset: ctx.spend.asset },
    ctx.networks,
    Math.min(ctx.timeoutMs, CHAIN_CHECK_TIMEOUT_MS),
  );
  ctx.log.info('asked the chain about a refused payment', {
    tool: ctx.tool,
    network: ctx.spend.network,
    reason,
    state: state.type,
  });
  return state;
}

/** Books a payment whose answer was lost as settled: the money moved once, the result is gone, nothing more is paid. */
async function settledAnswerLost(
  ctx: DeliveryContext,
  said: string,
  receipt: SettleResponse | undefined,
): Promise<CallOutcome> {
  await ctx.spends.completeSpend(ctx.spend.id, {
    status: 'settled',
    note: `settled on chain; the answer was lost (${said})`,
    ...(receipt?.transaction ? { transaction: receipt.transaction } : {}),
  });
  const payment = await paymentNote(ctx, 'settled');
  ctx.log.warn('a payment was settled but its answer was lost', {
    tool: ctx.tool,
    network: ctx.spend.network,
    usd: payment.usd,
  });
  const error = new ToolError(
    'payment_failed',
    `The payment for ${ctx.tool} (${payment.usd} on ${ctx.spend.network}) was taken, but its answer was lost (${said}) and ${ctx.request.url} keeps no result for retries. It is booked as spent; nothing more was paid. Calling again pays for a new result.`,
  );
  return { type: 'refused', error, ...(receipt ? { receipt } : {}), payment };
}

/** Keeps a refused payment counted (pending, with its payment) when the chain cannot say whether it was used. */
async function keepUnsure(
  ctx: DeliveryContext,
  sent: SignedPayment,
  said: string,
  why: string,
  receipt: SettleResponse | undefined,
): Promise<CallOutcome> {
  await ctx.spends.completeSpend(ctx.spend.id, {
    status: 'pending',
    payload: storedForm(sent),
    note: `${said}; whether it was paid is unknown: ${why}`,
  });
  const payment = await paymentNote(ctx, 'pending');
  const error = new ToolError(
    'payment_pending',
    `The payment for ${ctx.tool} (${payment.usd} on ${ctx.spend.network}) was sent and ${said}, but whether it was taken cannot be checked on chain: ${why}. It is not booked as free: it counts against today's budget and is kept. Call ${ctx.tool} again with the same input later; the very same payment is re-sent, never a new one.`,
    { details: { paymentId: ctx.spend.paymentId, network: ctx.spend.network } },
  );
  return { type: 'refused', error, ...(receipt ? { receipt } : {}), payment };
}

/** Why a refused payment is booked as not charged: the refusal came before any settlement, or the chain says unused. */
function notCharged(ctx: DeliveryContext, fate: Extract<Fate, { type: 'not_sent' | 'unused' }>, said: string): string {
  if (fate.type === 'unused') return 'the chain shows the payment unused';
  ctx.log.info('a payment refused before settlement was released', { tool: ctx.tool, said, rule: fate.rule });
  return `refused before settlement: ${fate.rule}`;
}

/** Books a payment the remote refused (or could not settle) after it left, by the verdict of after-payment.ts. */
export async function refusedAfterPayment(
  ctx: DeliveryContext,
  payload: SignedPayment,
  answer: Extract<RemoteAnswer, { type: 'challenge' }>,
  verdict: AnswerVerdict,
): Promise<CallOutcome> {
  const { receipt } = answer;
  const reason = verdict.reason ?? 'payment_refused';
  const detail = remoteMessage(answer.body);
  const withReceipt = receipt ? { receipt } : {};
  const settleFailed = receipt !== undefined && receipt.success === false;
  const said = settleFailed ? `the remote could not settle it (${reason})` : `the remote refused it (${reason})`;
  const fate = await fateOf(ctx, payload, verdict);
  if (fate.type === 'used') return settledAnswerLost(ctx, said, receipt);
  if (fate.type === 'unknown') return keepUnsure(ctx, payload, said, fate.why, receipt);
  const why = notCharged(ctx, fate, said);
  if (settleFailed) {
    await ctx.spends.completeSpend(ctx.spend.id, { status: 'failed', note: `settlement failed: ${reason}; ${why}` });
    const error = new ToolError(
      'payment_failed',
      `The remote ran ${ctx.tool} but could not settle the payment (${reason}); nothing was charged and the result was withheld. Tollbooth does not pay again on its own: call again to make a new payment. (${why}.)`,
    );
    return { type: 'refused', error, ...withReceipt, payment: await paymentNote(ctx, 'failed') };
  }
  await ctx.spends.releaseSpend(ctx.spend.id, `refused by the remote: ${reason}; ${why}`);
  const error = new ToolError(
    'payment_failed',
    `The remote refused the payment (${reason})${detail}; nothing was charged. Tollbooth does not pay again on its own: call again to make a new payment. (${why}.)`,
  );
  return { type: 'refused', error, ...withReceipt, payment: await paymentNote(ctx, 'cancelled') };
}

/** Books a payment answered with an error by the verdict of after-payment.ts (released, settled, or kept pending). */
export async function errorAfterPayment(
  ctx: DeliveryContext,
  sent: SignedPayment,
  answer: Extract<RemoteAnswer, { type: 'error' }>,
  verdict: AnswerVerdict,
): Promise<CallOutcome> {
  const code = remoteCode(answer.body);
  const said = `the remote answered ${answer.status}${code ? ` ${code}` : ''}`;
  const fate = await fateOf(ctx, sent, verdict);
  if (fate.type === 'used') return settledAnswerLost(ctx, said, answer.receipt);
  if (fate.type === 'unknown') return keepUnsure(ctx, sent, said, fate.why, answer.receipt);
  await ctx.spends.releaseSpend(ctx.spend.id, `${said}; ${notCharged(ctx, fate, said)}`);
  return {
    type: 'remote_error',
    status: answer.status,
    body: answer.body,
    ...(answer.receipt ? { receipt: answer.receipt } : {}),
  };
}
