/**
 * The one pipeline every transport calls: `invoke` runs a call of a tool with a price through the paid pipeline
 * (`src/pipeline/paid.ts`) and a free tool straight to its handler, and reports each call to the observer.
 */
import { toToolError } from '../shared/errors.js';
import { inputError } from '../shared/input-error.js';
import { isPaid } from '../tool/tool.js';
import {
  admitted,
  checkedOutput,
  handlerContext,
  logged,
  type CallRequest,
  type CallResult,
  type InvokeDeps,
  unconfigured,
} from './call.js';
import { runPaid } from './paid.js';
import { freeEvent, observed, paidEvent } from './trace.js';

export type { CallEvent, PaidCallEnding, PaidCallEvent } from '../observe/call-event.js';
export type { CallRequest, CallResult, InvokeDeps } from './call.js';
export { inputError } from '../shared/input-error.js';

/**
 * Runs one call and reports it to the observer. A tool with a price goes through the paid pipeline (validate →
 * payment → claim → verify → handler → output check → settle); a free tool goes straight to its handler (validate →
 * handler → output check) and never reaches the broker.
 */
export async function invoke(deps: InvokeDeps, req: CallRequest): Promise<CallResult> {
  const { tool } = req;
  if (isPaid(tool)) {
    const paid = { ...req, tool };
    return observed(
      deps,
      req,
      (trace) => runPaid(deps, paid, trace),
      (result, trace, ms) => paidEvent(req, result, trace, ms),
    );
  }
  return observed(
    deps,
    req,
    () => runFree(deps, req),
    (result, _trace, ms) => freeEvent(req, result, ms),
  );
}

/** A free tool: validate, handler, output check; nothing to pay, nothing to settle, no broker. */
async function runFree(deps: InvokeDeps, req: CallRequest): Promise<CallResult> {
  const { tool } = req;
  const parsed = tool.input.safeParse(req.input ?? {});
  if (!parsed.success) return { type: 'error', error: inputError(parsed.error) };
  const missing = unconfigured(deps, tool, parsed.data);
  if (missing) return { type: 'error', error: missing };
  const { slot, busy } = admitted(deps, tool);
  if (busy) return { type: 'error', error: busy };
  try {
    const raw = await tool.handler(parsed.data, handlerContext(deps, req, slot));
    return {
      type: 'success',
      output: checkedOutput(deps, tool, raw, `${tool.name} produced an invalid result. Try again later.`),
    };
  } catch (err) {
    return { type: 'error', error: logged(deps, tool.name, toToolError(err)) };
  } finally {
    slot?.release();
  }
}
