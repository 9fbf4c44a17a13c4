/**
 * Per-call record of what a chain's RPC did during one verify or settle of an in-process facilitator scheme: whether
 * a request failed (no answer, HTTP error, timeout, unreadable answer) and whether a transaction was handed to the
 * node. Libraries report RPC failures as verdicts on the payment ("invalid signature", "simulation failed"); the
 * guarded schemes read this record to report the facilitator as unavailable instead, and to know whether money can
 * have moved. Kept in AsyncLocalStorage, so concurrent calls never mix.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { SettleResponse } from '@x402/core/types';
import type { PaymentCode } from '../../shared/errors.js';

/** What the RPC did during one facilitator call. */
export interface CallTrace {
  /** The first RPC failure of this call, as a short text. */
  rpcFailure?: string;
  /** True once a transaction may have reached the node: from then on only the chain knows what happened. */
  sent?: boolean;
}

const traces = new AsyncLocalStorage<CallTrace>();

/** Runs one facilitator call with a fresh trace, which `run` can read when the library has answered. */
export function traceCall<T>(run: (trace: CallTrace) => Promise<T>): Promise<T> {
  const trace: CallTrace = {};
  return traces.run(trace, () => run(trace));
}

/** Records an RPC failure in the current call, if any (the first one is kept). */
export function noteRpcFailure(text: string): void {
  const trace = traces.getStore();
  if (trace && trace.rpcFailure === undefined) trace.rpcFailure = text;
}

/** Records that a transaction may have reached the node in the current call. */
export function noteSend(): void {
  const trace = traces.getStore();
  if (trace) trace.sent = true;
}

/** The errors along a cause chain, outermost first (bounded). */
export function causeChain(err: unknown): unknown[] {
  const found: unknown[] = [];
  for (
    let e = err, depth = 0;
    e !== undefined && e !== null && depth < 8;
    e = (e as { cause?: unknown }).cause, depth++
  )
    found.push(e);
  return found;
}

/** Every message along an error's cause chain, joined. */
export function chainText(err: unknown): string {
  return causeChain(err)
    .map((e) => (e instanceof Error ? e.message : String(e)))
    .join(' | ');
}

/** The first line of an error (plus an HTTP `Status:` line when viem added one), bounded; never the request body. */
export function rpcErrorText(err: unknown): string {
  const lines = (err instanceof Error ? err.message : String(err))
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const status = lines.find((l) => l.startsWith('Status:'));
  return [lines[0] ?? 'RPC request failed', status].filter(Boolean).join(' ').slice(0, 200);
}

/** True when no connection could be made (nothing was sent). */
export function connectionRefused(err: unknown): boolean {
  return causeChain(err).some((e) => (e as { code?: unknown }).code === 'ECONNREFUSED');
}

/**
 * Settles through a library scheme inside a trace: until a transaction may have reached the node, an RPC failure
 * (thrown, or hidden behind the library's refusal) is `unavailable(why)`, nothing charged; after that the library's
 * own answer stands, and a throw is left to the broker (outcome unknown).
 */
export async function settleTraced(
  trace: CallTrace,
  settle: () => Promise<SettleResponse>,
  unavailable: (why: string) => SettleResponse,
): Promise<SettleResponse> {
  let result: SettleResponse;
  try {
    result = await settle();
  } catch (err) {
    if (trace.sent) throw err;
    return unavailable(rpcErrorText(err));
  }
  const beforeSending =
    !result.success &&
    !result.transaction &&
    !trace.sent &&
    result.errorReason !== ('settlement_pending' satisfies PaymentCode);
  return beforeSending && trace.rpcFailure
    ? { ...unavailable(trace.rpcFailure), ...(result.payer ? { payer: result.payer } : {}) }
    : result;
}
