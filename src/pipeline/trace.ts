/** What the pipeline tells its observer: that a call started, and how it ended with where the time went. */
import { performance } from 'node:perf_hooks';
import type { SettleResponse } from '@x402/core/types';
import type { CallEvent, PaidCallEvent } from '../observe/call-event.js';
import type { PaymentTicket } from '../payments/ledger/outcomes.js';
import type { PaymentProtocol } from '../store/store.js';
import type { CallRequest, CallResult, InvokeDeps } from './call.js';

/** What a call's observer learns on the way: the verified ticket and the time each stage took. */
export interface Trace {
  ticket?: PaymentTicket;
  verifyMs?: number;
  handlerMs?: number;
  settleMs?: number;
}

/** Milliseconds since `start` (a `performance.now()` reading), to the microsecond. */
export const since = (start: number) => Math.round((performance.now() - start) * 1000) / 1000;

function notify(deps: InvokeDeps, event: CallEvent): void {
  try {
    deps.observe?.(event);
  } catch (err) {
    deps.log.error('call observer failed', { error: String((err as Error)?.message ?? err) });
  }
}

/**
 * Runs one call between its `started` event and the event `ended` makes of its result (`undefined` when it threw);
 * without an observer, just runs it.
 */
export async function observed(
  deps: InvokeDeps,
  req: CallRequest,
  run: (trace: Trace) => Promise<CallResult>,
  ended: (result: CallResult | undefined, trace: Trace, totalMs: number) => CallEvent,
): Promise<CallResult> {
  const trace: Trace = {};
  if (!deps.observe) return run(trace);
  const start = performance.now();
  notify(deps, { type: 'started', tool: req.tool.name });
  let result: CallResult | undefined;
  try {
    result = await run(trace);
    return result;
  } finally {
    notify(deps, ended(result, trace, since(start)));
  }
}

/** The observer's view of a finished free call (an exception counts as an internal error). */
export function freeEvent(req: CallRequest, result: CallResult | undefined, totalMs: number): CallEvent {
  const reason = result === undefined ? 'internal' : result.type === 'error' ? result.error.code : undefined;
  return {
    type: 'free',
    tool: req.tool.name,
    outcome: result?.type === 'success' ? 'success' : 'error',
    ...(reason ? { reason } : {}),
    totalMs,
  };
}

/** The protocol of a call's payment: the verified ticket's, else what the transport read (an MPP credential or an x402 payment). */
function protocolOf(req: CallRequest, ticket: PaymentTicket | undefined): PaymentProtocol | undefined {
  if (ticket) return ticket.protocol ?? 'x402';
  if (req.proof === undefined) return undefined;
  return req.proof.source === 'mpp' ? 'mpp' : 'x402';
}

const receiptFields = (r: SettleResponse) => ({
  network: r.network,
  transaction: r.transaction,
  ...(r.payer ? { payer: r.payer } : {}),
});

/** What every paid call's event says whatever its outcome: tool, transport, protocol, who paid what, stage times. */
function paidBase(req: CallRequest, trace: Trace, totalMs: number): PaidCallEvent {
  const { ticket } = trace;
  const protocol = protocolOf(req, ticket);
  return {
    type: 'paid',
    tool: req.tool.name,
    transport: req.transport,
    outcome: 'error',
    ...(protocol ? { protocol } : {}),
    ...(ticket
      ? { network: ticket.requirements.network, amount: ticket.requirements.amount, payer: ticket.payer }
      : {}),
    ...(trace.verifyMs === undefined ? {} : { verifyMs: trace.verifyMs }),
    ...(trace.handlerMs === undefined ? {} : { handlerMs: trace.handlerMs }),
    ...(trace.settleMs === undefined ? {} : { settleMs: trace.settleMs }),
    totalMs,
  };
}

/** The observer's view of a finished paid call (an exception counts as an internal error). */
export function paidEvent(
  req: CallRequest,
  result: CallResult | undefined,
  trace: Trace,
  totalMs: number,
): PaidCallEvent {
  const base = paidBase(req, trace, totalMs);
  if (!result) return { ...base, reason: 'internal' };
  switch (result.type) {
    case 'payment_required':
      return { ...base, outcome: 'payment_required' };
    case 'payment_rejected':
      return { ...base, outcome: 'rejected', reason: result.rejection.reason };
    case 'error':
      return { ...base, outcome: 'error', reason: result.error.code };
    case 'settlement_failed':
      return {
        ...base,
        ...receiptFields(result.receipt),
        outcome: 'settlement_failed',
        reason: result.receipt.errorReason ?? 'settlement_failed',
      };
    case 'settlement_pending':
      return { ...base, ...receiptFields(result.receipt), outcome: 'pending' };
    case 'success': {
      // A paid success always carries its settlement's receipt (only a free tool's success has none).
      const settled = result.receipt;
      if (!settled) return { ...base, reason: 'internal' };
      if (!trace.ticket) return { ...base, ...receiptFields(settled), outcome: 'replayed' };
      const amount = settled.amount || trace.ticket.requirements.amount;
      return { ...base, ...receiptFields(settled), outcome: 'settled', amount };
    }
  }
}
