import { ERROR_CODES, type ErrorCode } from './errors.js';
import type { CallEvent, PaidCallEvent } from './invoke.js';
import type { Logger } from './log.js';
import { REASONS } from './payments/outcomes.js';

/** Counts the calls running right now, so shutdown can wait until they finished (and settled). */
export class CallTracker {
  private active = 0;
  private waiters = new Set<() => void>();

  /** How many calls (paid and free) are running. */
  get inFlight(): number {
    return this.active;
  }

  /** Counts a started or ended call (see `InvokeDeps.observe`). */
  observe(event: CallEvent): void {
    if (event.type === 'started') {
      this.active += 1;
      return;
    }
    this.active = Math.max(0, this.active - 1);
    if (this.active === 0) for (const wake of [...this.waiters]) wake();
  }

  /** Resolves true once no call is running, or false when `timeoutMs` passed first. */
  drain(timeoutMs: number): Promise<boolean> {
    if (this.active === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (drained: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(drained);
      };
      const wake = () => done(true);
      const timer = setTimeout(() => done(false), Math.max(0, timeoutMs));
      this.waiters.add(wake);
    });
  }
}

function levelOf(event: PaidCallEvent): keyof Logger {
  switch (event.outcome) {
    case 'settled':
    case 'replayed':
    case 'payment_required':
      return 'info';
    case 'rejected':
      return event.reason === REASONS.facilitatorUnavailable ? 'warn' : 'info';
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
