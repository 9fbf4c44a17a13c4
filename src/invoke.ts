import type { SettleResponse } from '@x402/core/types';
import type { z } from 'zod';
import { ToolError, toToolError } from './errors.js';
import type { Logger } from './log.js';
import { requestHash } from './payments/idempotency.js';
import type { PaymentBroker } from './payments/broker.js';
import type { RawPayment } from './payments/decode.js';
import type { PaymentRejection } from './payments/outcomes.js';
import type { Challenge } from './payments/requirements.js';
import type { Providers } from './providers/index.js';
import type { Store, Transport } from './store/store.js';
import type { AnyFreeToolDefinition, AnyToolDefinition, ToolContext } from './tool.js';

/** Everything the pipeline needs besides the call itself. */
export interface InvokeDeps {
  broker: PaymentBroker;
  store: Store;
  providers: Providers;
  log: Logger;
}

/** One paid call as a transport hands it over. */
export interface CallRequest {
  tool: AnyToolDefinition;
  /** The caller's input; `undefined` means a bare probe with no body or arguments. */
  input: unknown;
  payment: RawPayment | undefined;
  transport: Transport;
  signal: AbortSignal;
  progress?: (done: number, total: number, message?: string) => void;
}

/** What a paid call came to; transports encode it and nothing else. */
export type CallResult =
  | { type: 'payment_required'; challenge: Challenge }
  | { type: 'payment_rejected'; rejection: PaymentRejection }
  | { type: 'error'; error: ToolError }
  | { type: 'settlement_failed'; receipt: SettleResponse; challenge: Challenge }
  | { type: 'settlement_pending'; receipt: SettleResponse }
  | { type: 'success'; output: unknown; receipt: SettleResponse };

/** Turns a zod failure into an invalid_input error that names the first offending field. */
export function inputError(error: z.ZodError): ToolError {
  const issues = error.issues.map((i) => ({ field: i.path.join('.') || '(body)', message: i.message }));
  const first = issues[0] ?? { field: '(body)', message: 'invalid input' };
  return new ToolError('invalid_input', `Invalid input: ${first.field}: ${first.message}. Fix the field and call again; nothing was charged.`, {
    field: first.field,
    details: { issues },
  });
}

/** Runs the paid-call pipeline: validate → payment → claim → verify → handler → output check → settle. */
export async function invokePaid(deps: InvokeDeps, req: CallRequest): Promise<CallResult> {
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

  const begun = await broker.begin(tool, req.payment, req.transport, requestHash(tool.name, parsed.data));
  switch (begun.type) {
    case 'rejected':
      return { type: 'payment_rejected', rejection: begun };
    case 'replayed':
      return { type: 'success', output: begun.output, receipt: begun.receipt };
    case 'verified':
      break;
  }
  const { ticket } = begun;

  let output: unknown;
  try {
    const raw = await tool.handler(parsed.data, { ...handlerContext(deps, req), payment: { payer: ticket.payer, key: ticket.replayKey } });
    const checked = tool.output.safeParse(raw);
    if (!checked.success) {
      deps.log.error('tool output failed its schema', { tool: tool.name, issues: checked.error.issues.slice(0, 5) });
      throw new ToolError('internal', `${tool.name} produced an invalid result; nothing was charged. Try again later.`);
    }
    output = checked.data;
  } catch (err) {
    await broker.release(ticket);
    const error = toToolError(err);
    if (error.code === 'internal') deps.log.error('tool handler failed', { tool: tool.name, error: String((error.cause as Error)?.stack ?? error.message) });
    return { type: 'error', error };
  }
  if (req.signal.aborted) {
    await broker.release(ticket);
    return { type: 'error', error: new ToolError('cancelled', 'The call was cancelled before it finished; nothing was charged.') };
  }
  const settled = await broker.settle(tool, ticket, output);
  switch (settled.type) {
    case 'settled':
      return { type: 'success', output, receipt: settled.receipt };
    case 'pending':
      return { type: 'settlement_pending', receipt: settled.receipt };
    case 'failed':
      return { type: 'settlement_failed', receipt: settled.receipt, challenge: settled.challenge };
  }
}

function handlerContext(deps: InvokeDeps, req: { signal: AbortSignal; progress?: CallRequest['progress'] }): ToolContext {
  return { providers: deps.providers, store: deps.store, log: deps.log, signal: req.signal, progress: req.progress ?? (() => {}) };
}

function logged(deps: InvokeDeps, tool: string, error: ToolError): ToolError {
  if (error.code === 'internal') deps.log.error('tool failed', { tool, error: String((error.cause as Error)?.stack ?? error.message) });
  return error;
}

/** One call of a free endpoint as a transport hands it over. */
export interface FreeCallRequest {
  tool: AnyFreeToolDefinition;
  /** The caller's input (query, path parameters or body, merged by the transport); `undefined` reads as `{}`. */
  input: unknown;
  signal: AbortSignal;
  progress?: (done: number, total: number, message?: string) => void;
}

/** What a free call came to. */
export type FreeCallResult = { type: 'success'; output: unknown } | { type: 'error'; error: ToolError };

/** Runs a free endpoint: validate → handler → output check; nothing to pay, nothing to settle. */
export async function invokeFree(deps: InvokeDeps, req: FreeCallRequest): Promise<FreeCallResult> {
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
