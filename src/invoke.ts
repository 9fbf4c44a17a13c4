import { performance } from 'node:perf_hooks';
import type { SettleResponse } from '@x402/core/types';
import type { z } from 'zod';
import { ToolError, toToolError } from './errors.js';
import type { Logger } from './log.js';
import { requestHash } from './payments/idempotency.js';
import type { PaymentBroker } from './payments/broker.js';
import type { RawPayment } from './payments/decode.js';
import type { PaymentRejection, PaymentTicket } from './payments/outcomes.js';
import type { Challenge } from './payments/requirements.js';
import type { Providers } from './providers/index.js';
import type { PaymentProtocol, Store, Transport } from './store/store.js';
import type { CallEvent, PaidCallEvent } from './call-event.js';
import { isPaid, type AnyPaidToolDefinition, type AnyToolDefinition, type ToolContext } from './tool.js';

/** Everything the pipeline needs besides the call itself (the broker is asked only about tools with a price). */
export interface InvokeDeps {
  broker: PaymentBroker;
  store: Store;
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

export type { CallEvent, CallOutcome, PaidCallEvent } from './call-event.js';

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
interface PaidCallRequest extends CallRequest {
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

/** Turns a zod failure into an invalid_input error that names the first offending field (unknown fields first). */
export function inputError(error: z.ZodError): ToolError {
  const issues = error.issues.map((i) => ({ field: i.path.join('.') || '(body)', message: i.message }));
  const unknown = error.issues.find((i) => i.code === 'unrecognized_keys');
  if (unknown) {
    const field = [...unknown.path, unknown.keys[0] ?? ''].join('.');
    return new ToolError('invalid_input', `${unknown.message} Nothing was charged.`, { field, details: { issues } });
  }
  const first = issues[0] ?? { field: '(body)', message: 'invalid input' };
  return new ToolError(
    'invalid_input',
    `Invalid input: ${first.field}: ${first.message}. Fix the field and call again; nothing was charged.`,
    {
      field: first.field,
      details: { issues },
    },
  );
}

/** What a call's observer learns on the way: the verified ticket and the time each stage took. */
interface Trace {
  ticket?: PaymentTicket;
  verifyMs?: number;
  handlerMs?: number;
  settleMs?: number;
}

function notify(deps: InvokeDeps, event: CallEvent): void {
  try {
    deps.observe?.(event);
  } catch (err) {
    deps.log.error('call observer failed', { error: String((err as Error)?.message ?? err) });
  }
}

const since = (start: number) => Math.round((performance.now() - start) * 1000) / 1000;

/** The protocol of a call's payment: the verified ticket's, else what the transport read (an MPP credential or an x402 payment). */
function protocolOf(req: CallRequest, ticket: PaymentTicket | undefined): PaymentProtocol | undefined {
  if (ticket) return ticket.protocol ?? 'x402';
  if (req.payment === undefined) return undefined;
  return req.payment.source === 'mpp' ? 'mpp' : 'x402';
}

/** The observer's view of a finished paid call (an exception counts as an internal error). */
function paidEvent(req: CallRequest, result: CallResult | undefined, trace: Trace, totalMs: number): PaidCallEvent {
  const { ticket } = trace;
  const protocol = protocolOf(req, ticket);
  const base: PaidCallEvent = {
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
  if (!result) return { ...base, reason: 'internal' };
  const receipt = (r: SettleResponse) => ({
    network: r.network,
    transaction: r.transaction,
    ...(r.payer ? { payer: r.payer } : {}),
  });
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
        ...receipt(result.receipt),
        outcome: 'settlement_failed',
        reason: result.receipt.errorReason ?? 'settlement_failed',
      };
    case 'settlement_pending':
      return { ...base, ...receipt(result.receipt), outcome: 'pending' };
    case 'success': {
      // A paid success always carries its settlement's receipt (only a free tool's success has none).
      const settled = result.receipt;
      if (!settled) return { ...base, reason: 'internal' };
      if (!ticket) return { ...base, ...receipt(settled), outcome: 'replayed' };
      return { ...base, ...receipt(settled), outcome: 'settled', amount: settled.amount || ticket.requirements.amount };
    }
  }
}

/**
 * Runs one call and reports it to the observer. A tool with a price goes through the paid pipeline (validate →
 * payment → claim → verify → handler → output check → settle); a free tool goes straight to its handler (validate →
 * handler → output check) and never reaches the broker.
 */
export async function invoke(deps: InvokeDeps, req: CallRequest): Promise<CallResult> {
  const { tool } = req;
  return isPaid(tool) ? callPaid(deps, { ...req, tool }) : callFree(deps, req);
}

async function callPaid(deps: InvokeDeps, req: PaidCallRequest): Promise<CallResult> {
  if (!deps.observe) return runPaid(deps, req, {});
  const trace: Trace = {};
  const start = performance.now();
  notify(deps, { type: 'started', tool: req.tool.name });
  let result: CallResult | undefined;
  try {
    result = await runPaid(deps, req, trace);
    return result;
  } finally {
    notify(deps, paidEvent(req, result, trace, since(start)));
  }
}

async function runPaid(deps: InvokeDeps, req: PaidCallRequest, trace: Trace): Promise<CallResult> {
  const { tool } = req;
  const { broker } = deps;
  if (req.input === undefined && req.payment === undefined) {
    return { type: 'payment_required', challenge: broker.challenge(tool) };
  }
  const parsed = tool.input.safeParse(req.input ?? {});
  if (!parsed.success) return { type: 'error', error: inputError(parsed.error) };
  if (tool.precheck) {
    // Before the payment is even read: what the precheck refuses is never a 402 and never charged.
    try {
      await tool.precheck(parsed.data, handlerContext(deps, req));
    } catch (err) {
      return { type: 'error', error: logged(deps, tool.name, toToolError(err)) };
    }
  }
  if (req.payment === undefined) return { type: 'payment_required', challenge: broker.challenge(tool) };

  const verifyStart = performance.now();
  const begun = await broker.begin(tool, req.payment, req.transport, requestHash(tool.name, parsed.data));
  trace.verifyMs = since(verifyStart);
  switch (begun.type) {
    case 'rejected':
      return { type: 'payment_rejected', rejection: begun };
    case 'replayed':
      return { type: 'success', output: begun.output, receipt: begun.receipt };
    case 'verified':
      break;
  }
  const { ticket } = begun;
  trace.ticket = ticket;
  const refused = deps.admit
    ? await deps.admit({ tool: tool.name, payer: ticket.payer }).catch(toToolError)
    : undefined;
  if (refused) {
    await broker.release(ticket);
    return { type: 'error', error: refused };
  }

  if (req.signal.aborted) {
    // The caller left while the payment was being verified: nothing runs, nothing is charged.
    await broker.release(ticket);
    return {
      type: 'error',
      error: new ToolError('cancelled', 'The call was cancelled before it ran; nothing was charged.'),
    };
  }

  let output: unknown;
  const handlerStart = performance.now();
  try {
    const raw = await tool.handler(parsed.data, {
      ...handlerContext(deps, req),
      payment: { payer: ticket.payer, key: ticket.replayKey },
    });
    const checked = tool.output.safeParse(raw);
    if (!checked.success) {
      deps.log.error('tool output failed its schema', { tool: tool.name, issues: checked.error.issues.slice(0, 5) });
      throw new ToolError('internal', `${tool.name} produced an invalid result; nothing was charged. Try again later.`);
    }
    output = checked.data;
    trace.handlerMs = since(handlerStart);
  } catch (err) {
    trace.handlerMs = since(handlerStart);
    await broker.release(ticket);
    const error = toToolError(err);
    if (error.code === 'internal')
      deps.log.error('tool handler failed', {
        tool: tool.name,
        error: String((error.cause as Error)?.stack ?? error.message),
      });
    return { type: 'error', error };
  }
  if (req.signal.aborted) {
    await broker.release(ticket);
    return {
      type: 'error',
      error: new ToolError('cancelled', 'The call was cancelled before it finished; nothing was charged.'),
    };
  }
  const settleStart = performance.now();
  const settled = await broker.settle(tool, ticket, output);
  trace.settleMs = since(settleStart);
  switch (settled.type) {
    case 'settled':
      return { type: 'success', output, receipt: settled.receipt };
    case 'pending':
      return { type: 'settlement_pending', receipt: settled.receipt };
    case 'failed':
      return { type: 'settlement_failed', receipt: settled.receipt, challenge: settled.challenge };
  }
}

function handlerContext(
  deps: InvokeDeps,
  req: { signal: AbortSignal; progress?: CallRequest['progress'] },
): ToolContext {
  return {
    providers: deps.providers,
    store: deps.store,
    log: deps.log,
    signal: req.signal,
    progress: req.progress ?? (() => {}),
  };
}

function logged(deps: InvokeDeps, tool: string, error: ToolError): ToolError {
  if (error.code === 'internal')
    deps.log.error('tool failed', { tool, error: String((error.cause as Error)?.stack ?? error.message) });
  return error;
}

/** Runs a free tool and reports it to the observer: nothing to pay, nothing to settle, no broker. */
async function callFree(deps: InvokeDeps, req: CallRequest): Promise<CallResult> {
  if (!deps.observe) return runFree(deps, req);
  const start = performance.now();
  notify(deps, { type: 'started', tool: req.tool.name });
  let result: CallResult | undefined;
  try {
    result = await runFree(deps, req);
    return result;
  } finally {
    const reason = result === undefined ? 'internal' : result.type === 'error' ? result.error.code : undefined;
    notify(deps, {
      type: 'free',
      tool: req.tool.name,
      outcome: result?.type === 'success' ? 'success' : 'error',
      ...(reason ? { reason } : {}),
      totalMs: since(start),
    });
  }
}

async function runFree(deps: InvokeDeps, req: CallRequest): Promise<CallResult> {
  const { tool } = req;
  const parsed = tool.input.safeParse(req.input ?? {});
  if (!parsed.success) return { type: 'error', error: inputError(parsed.error) };
  try {
    const checked = tool.output.safeParse(await tool.handler(parsed.data, handlerContext(deps, req)));
    if (!checked.success) {
      deps.log.error('tool output failed its schema', { tool: tool.name, issues: checked.error.issues.slice(0, 5) });
      throw new ToolError('internal', `${tool.name} produced an invalid result. Try again later.`);
    }
    return { type: 'success', output: checked.data };
  } catch (err) {
    return { type: 'error', error: logged(deps, tool.name, toToolError(err)) };
  }
}
