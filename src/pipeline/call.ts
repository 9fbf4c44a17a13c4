/** The pipeline's vocabulary (what a call needs, what it is given, what it comes to) and the steps both kinds of call share. */
import type { SettleResponse } from '@x402/core/types';
import { ToolError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import type { PaymentBroker } from '../payments/broker.js';
import type { RawPayment } from '../payments/reading/decode.js';
import type { PaymentRejection } from '../payments/ledger/outcomes.js';
import type { Challenge } from '../payments/challenges/requirements.js';
import type { Providers } from '../providers/index.js';
import type { Transport } from '../store/ledger.js';
import type { ToolState } from '../store/tool-state.js';
import type { CallEvent } from '../observe/call-event.js';
import type { AnyPaidToolDefinition, AnyToolDefinition, ToolContext } from '../tool/tool.js';
import { runJob } from '../workers/jobs.js';
import type { ToolWorkers, WorkerSlot } from '../workers/pool.js';

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
  /**
   * The worker lanes of the tools with a worker job (src/workers/pool.ts): such a call is admitted to its tool's
   * bounded lane before its payment is read. Absent (pipelines built by hand in tests), worker jobs run inline.
   */
  workers?: ToolWorkers;
}

/** One call as a transport hands it over: of a paid tool (one with a price) or of a free one. */
export interface CallRequest {
  tool: AnyToolDefinition;
  /** The caller's input; `undefined` means a bare probe with no body or arguments (a free tool reads it as `{}`). */
  input: unknown;
  /** The proof of payment the call carries (an x402 payload or an MPP credential); never read for a free tool. */
  proof?: RawPayment | undefined;
  transport: Transport;
  signal: AbortSignal;
  progress?: (done: number, total: number, message?: string) => void;
  /**
   * Set for a GET on a paid POST route (src/http/app.ts): only a `batch-settlement` refund may be sent that way, so
   * no input is read and the handler never runs; without a payment it is the refund probe.
   */
  refundOnly?: boolean;
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

/**
 * What a handler (or a precheck) is given: the shared parts, this call's signal, its progress reporter and its
 * worker jobs, run in the slot the call was admitted to (a precheck has none and runs no job).
 */
export function handlerContext(
  deps: InvokeDeps,
  req: Pick<CallRequest, 'signal' | 'progress' | 'tool'>,
  slot?: WorkerSlot,
): ToolContext {
  const { tool, signal } = req;
  return {
    providers: deps.providers,
    store: deps.store,
    log: deps.log,
    signal,
    progress: req.progress ?? (() => {}),
    offload: (job, data) => {
      if (tool.worker?.job !== job)
        return Promise.reject(new Error(`${tool.name} ran the worker job ${job}, which it does not declare`));
      if (slot) return slot.run(job, data, signal);
      if (deps.workers) return Promise.reject(new Error(`${tool.name} ran its worker job outside its admitted slot`));
      return runJob(job, data);
    },
  };
}

/**
 * The refusal of a call whose tool needs something the operator has not configured (its `needs`): 501
 * `not_implemented` naming the missing settings, answered before any payment; undefined when the call can run.
 */
export function unconfigured(deps: InvokeDeps, tool: AnyToolDefinition, input: unknown): ToolError | undefined {
  const missing = tool.needs?.(input, deps.providers);
  if (!missing) return undefined;
  return new ToolError('not_implemented', missing.message, { details: { settings: missing.settings } });
}

/** A call of a tool with a worker job admitted to its lane (the slot), refused with `tool_busy`, or nothing to admit. */
export function admitted(deps: InvokeDeps, tool: AnyToolDefinition): { slot?: WorkerSlot; busy?: ToolError } {
  const admission = deps.workers?.admit(tool.name);
  if (admission === undefined) return {};
  return admission.type === 'busy' ? { busy: admission.error } : { slot: admission.slot };
}

/** Longest answer, in bytes of JSON: a larger one is an `output_too_large` error and is never settled (docs/tools.md). */
export const MAX_OUTPUT_BYTES = 1024 * 1024;

/** Logs an internal error with its stack (the caller only sees its message); other errors are the caller's business. */
export function logged(deps: InvokeDeps, tool: string, error: ToolError, what = 'tool failed'): ToolError {
  if (error.code === 'internal')
    deps.log.error(what, { tool, error: String((error.cause as Error)?.stack ?? error.message) });
  return error;
}

/**
 * A handler's output checked against the tool's output schema (an invalid one is logged and thrown as internal) and
 * the output size limit (a larger one is thrown as `output_too_large`).
 */
export function checkedOutput(deps: InvokeDeps, tool: AnyToolDefinition, raw: unknown, invalid: string): unknown {
  const checked = tool.output.safeParse(raw);
  if (!checked.success) {
    deps.log.error('tool output failed its schema', { tool: tool.name, issues: checked.error.issues.slice(0, 5) });
    throw new ToolError('internal', invalid);
  }
  const bytes = Buffer.byteLength(JSON.stringify(checked.data) ?? '');
  if (bytes <= MAX_OUTPUT_BYTES) return checked.data;
  deps.log.warn('tool output over the size limit', { tool: tool.name, bytes });
  throw new ToolError(
    'output_too_large',
    `The answer of ${tool.name} to this input would be ${bytes} bytes, over the limit of ${MAX_OUTPUT_BYTES}. Send a smaller input.`,
  );
}
