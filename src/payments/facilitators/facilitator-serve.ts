/**
 * The facilitator thread's side (see facilitator-thread.ts): builds the in-process x402 facilitator with the rails'
 * `registerInProcess` for the families with a settlement key, says `ready` with what it can settle, then answers
 * verify, settle and `/supported` as they come (each awaited on its own, so they run concurrently). The thread's
 * entry module (facilitator-worker.ts, or a test's) calls `serveFacilitatorThread`.
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { ThreadError, ThreadMessage, ThreadOp, ThreadSetup } from './facilitator-thread.js';
import { RAILS } from '../rails/index.js';
import { BATCH_SCHEME } from '../batch/kinds.js';

/** The fields of the known x402 errors that cross to the main side (strings and numbers only). */
const ERROR_FIELDS = [
  'statusCode',
  'invalidReason',
  'invalidMessage',
  'payer',
  'errorReason',
  'errorMessage',
  'transaction',
  'network',
  'operation',
  'timeoutMs',
] as const;

/** An error as it crosses to the main side: class name, message and the known fields (never its cause or stack). */
function describeError(err: unknown): ThreadError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err), fields: {} };
  const fields: ThreadError['fields'] = {};
  for (const key of ERROR_FIELDS) {
    const value = (err as unknown as Record<string, unknown>)[key];
    if (typeof value === 'string' || typeof value === 'number') fields[key] = value;
  }
  return { name: err.name, message: err.message, fields };
}

/** Registers the rails of every family with a key; returns the facilitator and its `network|scheme` pairs. */
async function build(setup: ThreadSetup): Promise<{ facilitator: x402Facilitator; supported: string[] }> {
  const facilitator = new x402Facilitator();
  const supported: string[] = [];
  for (const { family, nets } of setup.families) {
    for (const rail of RAILS.filter((r) => r.family === family && setup.rails.includes(r.id))) {
      for (const id of (await rail.sdk()).registerInProcess(facilitator, nets, setup.settings))
        supported.push(`${id}|${rail.scheme}`);
    }
  }
  const evm = setup.families.find((f) => f.family === 'evm');
  if (setup.batchSettlement && evm) {
    // Loaded with BATCH_SETTLEMENT=on only: a facilitator without it never loads the batch-settlement scheme.
    const { registerBatchInProcess } = await import('../batch/facilitator-scheme.js');
    for (const id of registerBatchInProcess(facilitator, evm.nets, setup.settings))
      supported.push(`${id}|${BATCH_SCHEME}`);
  }
  return { facilitator, supported };
}

interface Request {
  id: number;
  op: ThreadOp;
  payload?: PaymentPayload;
  requirements?: PaymentRequirements;
}

/** What the thread serves calls with: the facilitator, or a test's wrapper of it. */
export type ThreadFacilitator = Pick<x402Facilitator, 'verify' | 'settle' | 'getSupported'>;

/** Serves the main side's requests on this worker thread; `adapt` lets a test entry wrap the facilitator. */
export async function serveFacilitatorThread(
  adapt: (facilitator: x402Facilitator) => ThreadFacilitator = (f) => f,
): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('facilitator-worker runs as a worker thread only');
  const post = (message: ThreadMessage) => port.postMessage(message);
  // A rejection a library left unhandled is reported to the main side, which treats it as its own (kept serving).
  process.on('unhandledRejection', (reason) => post({ type: 'rejection', error: describeError(reason) }));
  const built = await build(workerData as ThreadSetup);
  const facilitator = adapt(built.facilitator);
  const counts = { verify: 0, settle: 0 };
  const run = (req: Request): Promise<unknown> => {
    if (req.op === 'supported') return Promise.resolve(facilitator.getSupported());
    if (req.op === 'stats') return Promise.resolve({ threadId, ...counts });
    counts[req.op]++;
    return facilitator[req.op](req.payload!, req.requirements!);
  };
  const fail = (id: number, err: unknown) => post({ type: 'reply', id, ok: false, error: describeError(err) });
  port.on('message', (req: Request) => {
    run(req).then(
      (value) => {
        try {
          post({ type: 'reply', id: req.id, ok: true, value });
        } catch (err) {
          fail(req.id, err); // an answer that cannot be cloned
        }
      },
      (err: unknown) => fail(req.id, err),
    );
  });
  post({ type: 'ready', supported: built.supported });
}
