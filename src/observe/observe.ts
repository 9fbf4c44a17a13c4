import { ERROR_CODES, type ErrorCode, type PaymentCode } from '../shared/errors.js';
import type { CallEvent, PaidCallEvent } from '../pipeline/invoke.js';
import { InFlight } from '../shared/in-flight.js';
import type { Logger } from '../shared/log.js';

/** Counts the calls running right now from the pipeline's events, so shutdown can wait until they finished (and settled). */
export class CallTracker extends InFlight {
  /** How many calls (paid and free) are running. */
  get inFlight(): number {
    return this.count;
  }

  /** Counts a started or ended call (see `InvokeDeps.observe`). */
  observe(event: CallEvent): void {
    if (event.type === 'started') this.enter();
    else this.leave();
  }
}

function levelOf(event: PaidCallEvent): keyof Logger {
  switch (event.outcome) {
    case 'settled':
    case 'replayed':
    case 'payment_required':
      return 'info';
    case 'rejected':
      return event.reason === ('facilitator_unavailable' satisfies PaymentCode) ? 'warn' : 'info';
    case 'error':
      return (ERROR_CODES[event.reason as ErrorCode]?.http ?? 500) >= 500 ? 'warn' : 'info';
    case 'settlement_failed':
    case 'pending':
      return 'warn';
  }
}

/** Writes the one log line of a finished paid call: tool, transport, protocol, network, amount, payer, outcome, stage durations; never the input. */
export function logPaidCall(log: Logger, event: PaidCallEvent): void {
  const { type: _type, ...fields } = event;
  log[levelOf(event)]('paid call', fields);
}

/** The pipeline's observer of one runtime: in-flight tracking, metrics, and one log line per call that carried a payment. */
export function createCallObserver(
  log: Logger,
  sinks: ReadonlyArray<{ observe(event: CallEvent): void }>,
): (event: CallEvent) => void {
  return (event) => {
    for (const sink of sinks) sink.observe(event);
    // A call that brought no payment moved no money: metrics count it, the log keeps to calls that carried one.
    if (event.type === 'paid' && event.outcome !== 'payment_required') logPaidCall(log, event);
  };
}
