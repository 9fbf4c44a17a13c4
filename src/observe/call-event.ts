/** What the call pipeline tells its observer (logs, metrics, draining at shutdown); never the input. */
import type { PaymentProtocol, Transport } from '../store/store.js';

/** How a paid call ended: `rejected` carries the payment's refusal reason, `error` the error code, in `reason`. */
export type PaidCallEnding =
  'settled' | 'payment_required' | 'rejected' | 'error' | 'settlement_failed' | 'pending' | 'replayed';

/** One paid call after it ended: what it was, who paid on which network, how it ended and where the time went (ms). */
export interface PaidCallEvent {
  type: 'paid';
  tool: string;
  transport: Transport;
  outcome: PaidCallEnding;
  /** The protocol the payment came in (absent when the call carried none). */
  protocol?: PaymentProtocol;
  /** Rejection reason, error code, or the settlement's error reason. */
  reason?: string;
  network?: string;
  /** Atomic units settled (settled calls) or authorized (others). */
  amount?: string;
  payer?: string;
  transaction?: string;
  /** Reading, claiming and verifying the payment (broker.begin). */
  verifyMs?: number;
  /** The handler and its output check. */
  handlerMs?: number;
  settleMs?: number;
  totalMs: number;
}

/** What the pipeline reports: a call (paid or free) started, a paid call ended, a free call ended. */
export type CallEvent =
  | { type: 'started'; tool: string }
  | PaidCallEvent
  | { type: 'free'; tool: string; outcome: 'success' | 'error'; reason?: string; totalMs: number };
