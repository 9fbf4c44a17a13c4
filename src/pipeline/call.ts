/** The pipeline's vocabulary (what a call needs, what it is given, what it comes to) and the steps both kinds of call share. */
import type { SettleResponse } from '@x402/core/types';
import { ToolError } from '../errors.js';
import type { Logger } from '../log.js';
import type { PaymentBroker } from '../payments/broker.js';
import type { RawPayment } from '../payments/decode.js';
import type { PaymentRejection } from '../payments/outcomes.js';
import type { Challenge } from '../payments/requirements.js';
import type { Providers } from '../providers/index.js';
import type { Transport } from '../store/ledger.js';
import type { ToolState } from '../store/tool-state.js';
import type { CallEvent } from '../call-event.js';
import type { AnyPaidToolDefinition, AnyToolDefinition, ToolContext } from '../tool.js';

/** Everything the pipeline needs besides the call itself (the broker is asked only about tools with a price). */
export interface InvokeDeps {
  broker: PaymentBroker;
  /** The tool state handlers keep (drips, orders): the only part of the store a handler is given. */
  store: ToolState;
  providers: Providers;
  log: Logger;
  /** Told when each call starts and how it ended (logs, metrics, draining at shutdown); never sees the input. */
  observe?: (event: CallEvent) => void;
  /**
   * Asked after the payment verified and before the handler runs (abuse limits per payer and per tool); an error
   * refuses the call: the claim is released, so nothing is charged and the same payment stays usable.
   */
  admit?: (call: { tool: string; payer: string }) => Promise<ToolError | undefined>;
}

/** One call as a transport hands it over: of a paid tool (one with a price) or of a free one. */
export interface CallRequest {
  tool: AnyToolDefinition;
  /** The caller's input; `undefined` means a bare probe with no body or arguments (a free tool reads it as `{}`). */
  input: unknown;
  /** The payment the call carries; never read for a free tool. */
  payment?: RawPayment | undefined;
  transport: Transport;
  signal: AbortSignal;
  progress?: (done: number, total: number, message?: string) => void;
}

/** A call of a tool that has a price: what the paid pipeline works on. */
export interface PaidCallRequest extends CallRequest {
  tool: AnyPaidToolDefinition;
}

/** What a call came to; transports encode it and nothing else. A free tool only ever succeeds (no receipt) or errs. */
export type CallResult =
  | { type: 'payment_required'; challenge: Challenge }
  | { type: 'payment_rejected'; rejection: PaymentRejection }
  | { type: 'error'; error: ToolError }
  | { type: 'settlement_failed'; receipt: SettleResponse; challenge: Challenge }
  | { type: 'settlement_pending'; receipt: SettleResponse }
  /** `receipt` is the settlement of a paid call; absent for a free tool, which nothing was paid for. */
  | { type: 'success'; output: unknown; receipt?: SettleResponse };

/** What a handler (or a precheck) is given: the shared parts, this call's signal and its progress reporter. */
export function handlerContext(deps: InvokeDeps, req: Pick<CallRequest, 'signal' | 'progress'>): ToolContext {
  return {
    providers: deps.providers,
    store: deps.store,
    log: deps.log,
    signal: req.signal,
    progress: req.progress ?? (() => {}),
  };
}

/** Logs an internal error with its stack (the caller only sees its message); other errors are the caller's business. */
export function logged(deps: InvokeDeps, tool: string, error: ToolError, what = 'tool failed'): ToolError {
  if (error.code === 'internal')
    deps.log.error(what, { tool, error: String((error.cause as Error)?.stack ?? error.message) });
  return error;
}

/** A handler's output checked against the tool's output schema; an invalid one is logged and thrown as internal. */
export function checkedOutput(deps: InvokeDeps, tool: AnyToolDefinition, raw: unknown, invalid: string): unknown {
  const checked = tool.output.safeParse(raw);
  if (checked.success) return checked.data;
  deps.log.error('tool output failed its schema', { tool: tool.name, issues: checked.error.issues.slice(0, 5) });
  throw new ToolError('internal', invalid);
}
