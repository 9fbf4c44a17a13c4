/**
 * The paid pipeline: validate → configured? → precheck → payment → claim and verify (the broker) → limits → handler → output check →
 * settle. Whatever fails after the claim releases it, so nothing is charged for a call that did not complete.
 */
import { performance } from 'node:perf_hooks';
import { ToolError, toToolError } from '../shared/errors.js';
import { requestHash } from '../shared/json.js';
import { mainThreadTurns } from '../limits/turns.js';
import type { PaymentTicket } from '../payments/ledger/outcomes.js';
import { inputError } from '../shared/input-error.js';
import type { RawPayment } from '../payments/reading/decode.js';
import type { WorkerSlot } from '../workers/pool.js';
import {
  admitted,
  checkedOutput,
  handlerContext,
  logged,
  type CallResult,
  type InvokeDeps,
  type PaidCallRequest,
  unconfigured,
} from './call.js';
import { since, type Trace } from './trace.js';
import { withChargeNote, withRefusalNote } from './charge-note.js';

const cancelled = (when: string) => new ToolError('cancelled', `The call was cancelled ${when}.`);

/**
 * Runs one call of a tool that has a price, noting the ticket and the stage times in `trace`. Every error and payment
 * refusal it comes to ends with the charge fact (src/pipeline/charge-note.ts): the one place a paid call's answer says
 * what was charged.
 */
export async function runPaid(deps: InvokeDeps, req: PaidCallRequest, trace: Trace): Promise<CallResult> {
  const result = await runCall(deps, req, trace);
  if (result.type === 'error') return { type: 'error', error: withChargeNote(result.error) };
  if (result.type === 'payment_rejected') return { ...result, rejection: withRefusalNote(result.rejection) };
  return result;
}

/** The paid call itself: validate, what it needs configured, precheck, admission to the worker lane, then the payment. */
async function runCall(deps: InvokeDeps, req: PaidCallRequest, trace: Trace): Promise<CallResult> {
  const { tool } = req;
  const { broker } = deps;
  if (req.refundOnly) return runRefundOnly(deps, req, trace);
  if (req.input === undefined && req.proof === undefined) {
    return { type: 'payment_required', challenge: broker.challenge(tool) };
  }
  const parsed = tool.input.safeParse(req.input ?? {});
  if (!parsed.success) {
    // A channel's refund request buys no call and reads no input: it needs no valid arguments (MCP, POST).
    if (req.proof && req.proof.source !== 'mpp' && broker.isRefundProof(req.proof))
      return runRefundOnly(deps, { ...req, refundOnly: true }, trace);
    return { type: 'error', error: inputError(parsed.error) };
  }
  // A call that cannot succeed on this server (an upstream or key not configured) is never asked to pay.
  const missing = unconfigured(deps, tool, parsed.data);
  if (missing) return { type: 'error', error: missing };
  if (tool.precheck) {
    // Before the payment is even read: what the precheck refuses is never a 402 and never charged.
    try {
      await tool.precheck(parsed.data, handlerContext(deps, req));
    } catch (err) {
      return { type: 'error', error: logged(deps, tool.name, toToolError(err)) };
    }
  }
  if (req.proof === undefined) return { type: 'payment_required', challenge: broker.challenge(tool) };
  // Admission to the tool's worker lane, before the payment is read: a full lane claims, verifies and charges nothing.
  const { slot, busy } = admitted(deps, tool);
  if (busy) return { type: 'error', error: busy };
  try {
    return await runPayment(deps, { ...req, proof: req.proof }, parsed.data, trace, slot);
  } finally {
    slot?.release();
  }
}

/**
 * A GET on a paid POST route: without a payment, the refund probe (the challenge's `batch-settlement` entries); with
 * one, a channel refund request, answered by the broker (the refund settled) with no input read and no handler run.
 */
async function runRefundOnly(deps: InvokeDeps, req: PaidCallRequest, trace: Trace): Promise<CallResult> {
  const { tool, proof } = req;
  if (proof === undefined)
    return { type: 'payment_required', challenge: deps.broker.refundChallenge(tool) ?? deps.broker.challenge(tool) };
  return runPayment(deps, { ...req, proof }, undefined, trace, undefined);
}

/** The payment read, claimed and verified by the broker, then the verified call; a replay answers its stored result. */
async function runPayment(
  deps: InvokeDeps,
  req: PaidCallRequest & { proof: RawPayment },
  input: unknown,
  trace: Trace,
  slot: WorkerSlot | undefined,
): Promise<CallResult> {
  const { tool } = req;
  const { broker } = deps;
  const verifyStart = performance.now();
  // Hashing grows with the input: it waits for a main-thread turn, so a burst of large inputs does not stall the loop.
  await mainThreadTurns.take();
  const begun = await broker.begin(tool, req.proof, req.transport, requestHash(tool.name, input));
  trace.verifyMs = since(verifyStart);
  switch (begun.type) {
    case 'rejected':
      return { type: 'payment_rejected', rejection: begun };
    case 'replayed':
      return { type: 'success', output: begun.output, receipt: begun.receipt };
    case 'verified':
      trace.ticket = begun.ticket;
      // Only a refund may come refund-only, and the broker answers it: anything else is released, never run.
      if (req.refundOnly) {
        await broker.release(begun.ticket);
        const only = `Only a batch-settlement refund may be sent with GET on ${tool.path}; send the call with ${tool.method}.`;
        return { type: 'error', error: new ToolError('method_not_allowed', only) };
      }
      return runVerified(deps, req, input, begun.ticket, trace, slot);
  }
}

/** A verified call: the limits, the handler and the settlement; every refusal or failure releases the claim. */
async function runVerified(
  deps: InvokeDeps,
  req: PaidCallRequest,
  input: unknown,
  ticket: PaymentTicket,
  trace: Trace,
  slot: WorkerSlot | undefined,
): Promise<CallResult> {
  const { tool } = req;
  const { broker } = deps;
  const refusal = deps.admit
    ? await deps.admit({ tool: tool.name, payer: ticket.payer }).catch(toToolError)
    : undefined;
  // The caller left while the payment was being verified: nothing runs, nothing is charged.
  const before = refusal ?? (req.signal.aborted ? cancelled('before it ran') : undefined);
  if (before) {
    await broker.release(ticket);
    return { type: 'error', error: before };
  }
  const handled = await runHandler(deps, req, input, ticket, trace, slot);
  const after = handled.error ?? (req.signal.aborted ? cancelled('before it finished') : undefined);
  if (after) {
    await broker.release(ticket);
    return { type: 'error', error: after };
  }
  const settleStart = performance.now();
  const settled = await broker.settle(tool, ticket, handled.output);
  trace.settleMs = since(settleStart);
  switch (settled.type) {
    case 'settled':
      return { type: 'success', output: handled.output, receipt: settled.receipt };
    case 'pending':
      return { type: 'settlement_pending', receipt: settled.receipt };
    case 'failed':
      return { type: 'settlement_failed', receipt: settled.receipt, challenge: settled.challenge };
  }
}

/** The handler, told who paid, and its output check: the checked output, or the error it came to. */
async function runHandler(
  deps: InvokeDeps,
  req: PaidCallRequest,
  input: unknown,
  ticket: PaymentTicket,
  trace: Trace,
  slot: WorkerSlot | undefined,
): Promise<{ output: unknown; error?: undefined } | { output?: undefined; error: ToolError }> {
  const { tool } = req;
  const start = performance.now();
  try {
    const raw = await tool.handler(input, {
      ...handlerContext(deps, req, slot),
      payer: { payer: ticket.payer, replayKey: ticket.replayKey },
    });
    return { output: checkedOutput(deps, tool, raw, `${tool.name} produced an invalid result. Try again later.`) };
  } catch (err) {
    return { error: logged(deps, tool.name, toToolError(err), 'tool handler failed') };
  } finally {
    trace.handlerMs = since(start);
    // The job has ended: its place goes to the next call before the settlement, which needs no thread.
    slot?.release();
  }
}
