/**
 * The facilitator thread: the in-process x402 facilitator of the families with a settlement key runs on one worker
 * thread of its own (facilitator-worker.ts), so signature checks, transaction signing and the chain's RPC of verify
 * and settle never hold the event loop that answers callers and `/healthz`. This is the main side: it starts the
 * thread, sends it verify, settle and `/supported`, and rebuilds the errors the broker tells apart.
 *
 * A thread that stops (crash, terminate) fails what it had in hand: a settlement as an unknown outcome (the broker
 * keeps it in doubt and the reconciler asks the chain; it is never sent again blindly), anything else as the
 * facilitator being unavailable. The next call starts a new thread.
 */
import type { Worker } from 'node:worker_threads';
import { FacilitatorResponseError, FacilitatorTimeoutError } from '@x402/core/server';
import {
  SettleError,
  VerifyError,
  type PaymentPayload,
  type PaymentRequirements,
  type SettleResponse,
  type SupportedResponse,
  type VerifyResponse,
} from '@x402/core/types';
import type { PaymentCode } from '../../shared/errors.js';
import { entryBeside, startThread, type WorkerEntry } from '../../workers/entry.js';
import type { NetworkEntry, NetworkFamily } from '../../shared/networks.js';
import type { InProcessSettings } from '../rails/rail.js';

/** What the thread is started with (structured-cloneable): the settlement keys, time limits and what to register. */
export interface ThreadSetup {
  settings: InProcessSettings;
  /** The families with a settlement key and their networks. */
  families: Array<{ family: NetworkFamily; nets: NetworkEntry[] }>;
  /** Ids of the rails to register (the thread has the rails themselves). */
  rails: string[];
  /** True with BATCH_SETTLEMENT=on: the EVM networks also get the official batch-settlement facilitator scheme. */
  batchSettlement?: boolean;
}

/** What the thread can do, once it started. */
export interface ThreadReady {
  /** `network|scheme` pairs it verifies and settles. */
  supported: string[];
}

/** What the thread counted, as it says itself (for tests and diagnostics). */
export interface ThreadStats {
  threadId: number;
  verify: number;
  settle: number;
}

/** One request to the thread. */
export type ThreadOp = 'verify' | 'settle' | 'supported' | 'stats';

/** An error as it crosses from the thread: its class name, message and the fields of the known x402 errors. */
export interface ThreadError {
  name: string;
  message: string;
  fields: Record<string, string | number | undefined>;
}

/** A message from the thread. */
export type ThreadMessage =
  | ({ type: 'ready' } & ThreadReady)
  | { type: 'reply'; id: number; ok: true; value: unknown }
  | { type: 'reply'; id: number; ok: false; error: ThreadError }
  | { type: 'rejection'; error: ThreadError };

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The known error classes rebuilt on this side (the broker checks them with `instanceof`); anything else is a plain Error. */
export function rebuildError(e: ThreadError): Error {
  const f = e.fields;
  const status = typeof f.statusCode === 'number' ? f.statusCode : 400;
  switch (e.name) {
    case 'VerifyError':
      return new VerifyError(status, {
        isValid: false,
        ...(f.invalidReason !== undefined ? { invalidReason: String(f.invalidReason) } : {}),
        ...(f.invalidMessage !== undefined ? { invalidMessage: String(f.invalidMessage) } : {}),
        ...(f.payer !== undefined ? { payer: String(f.payer) } : {}),
      });
    case 'SettleError':
      return new SettleError(status, {
        success: false,
        transaction: str(f.transaction) ?? '',
        network: (str(f.network) ?? '') as SettleResponse['network'],
        ...(f.errorReason !== undefined ? { errorReason: String(f.errorReason) } : {}),
        ...(f.errorMessage !== undefined ? { errorMessage: String(f.errorMessage) } : {}),
        ...(f.payer !== undefined ? { payer: String(f.payer) } : {}),
      });
    case 'FacilitatorTimeoutError':
      return new FacilitatorTimeoutError(str(f.operation) ?? 'request', Number(f.timeoutMs ?? 0));
    case 'FacilitatorResponseError':
      return new FacilitatorResponseError(e.message);
    default:
      return new Error(e.message);
  }
}

interface Pending {
  op: ThreadOp;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/** Why a call the thread had in hand failed when it stopped: a settlement's outcome is unknown. */
function stoppedError(op: ThreadOp, why: string): Error {
  if (op === 'settle')
    return new Error(
      `the facilitator thread stopped (${why}) while a settlement was in flight; its outcome is unknown`,
    );
  return new Error(`the facilitator thread stopped (${why}) before it answered`);
}

/** The facilitator thread's entry beside this module (`dist/bin/facilitator-worker.js` in the bundled CLI). */
export function facilitatorThreadEntry(): WorkerEntry {
  return entryBeside(import.meta.url, 'facilitator-worker');
}

/** One dedicated thread running the in-process facilitator; started by `start`, again after it stopped. */
export class FacilitatorThread {
  private worker: Worker | undefined;
  private ready: Promise<ThreadReady> | undefined;
  private readonly pending = new Map<number, Pending>();
  /** The answers still awaited, for `close`. */
  private readonly inHand = new Set<Promise<unknown>>();
  private nextId = 1;

  constructor(
    private readonly setup: ThreadSetup,
    private readonly entry: WorkerEntry = facilitatorThreadEntry(),
  ) {}

  /** The running thread's id (undefined while none runs). */
  get threadId(): number | undefined {
    return this.worker?.threadId;
  }

  /** Starts the thread if none runs; resolves once its rails are registered, with what it can settle. */
  start(): Promise<ThreadReady> {
    return (this.ready ??= this.spawn());
  }

  private spawn(): Promise<ThreadReady> {
    const worker = startThread(this.entry, { workerData: this.setup });
    // An idle thread never keeps the process alive; one with calls in hand does (see `send`).
    worker.unref();
    this.worker = worker;
    return new Promise<ThreadReady>((resolve, reject) => {
      let failure = 'it exited';
      worker.on('message', (m: ThreadMessage) => {
        if (m.type === 'ready') resolve({ supported: m.supported });
        else if (m.type === 'reply') this.answer(m);
        // A rejection nobody handled in the thread is one of this process, as before the thread (process-policy.ts).
        else void Promise.reject(rebuildError(m.error));
      });
      worker.on('error', (err) => (failure = err.message.split('\n', 1)[0]!));
      worker.once('exit', (code) => {
        const why = code === 0 ? failure : `${failure}, code ${code}`;
        reject(new Error(`the facilitator thread could not start: ${why}`));
        this.stopped(worker, why);
      });
    });
  }

  private answer(m: Extract<ThreadMessage, { type: 'reply' }>): void {
    const call = this.pending.get(m.id);
    if (!call) return;
    this.pending.delete(m.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (m.ok) call.resolve(m.value);
    else call.reject(rebuildError(m.error));
  }

  /** The thread ended: what it had in hand fails (see the module comment), and the next call starts a new one. */
  private stopped(worker: Worker, why: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.ready = undefined;
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const call of calls) call.reject(stoppedError(call.op, why));
  }

  /** Sends one request to the thread (started first when none runs) and waits for its answer. */
  async send(op: ThreadOp, payload?: PaymentPayload, requirements?: PaymentRequirements): Promise<unknown> {
    await this.start();
    const worker = this.worker;
    if (!worker) throw stoppedError(op, 'as it started');
    const id = this.nextId++;
    const answer = new Promise((resolve, reject) => {
      if (this.pending.size === 0) worker.ref();
      this.pending.set(id, { op, resolve, reject });
      worker.postMessage({ id, op, payload, requirements });
    });
    this.inHand.add(answer);
    void answer.catch(() => undefined).finally(() => this.inHand.delete(answer));
    return answer;
  }

  /** Verifies a payment on the thread. */
  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    return (await this.send('verify', payload, requirements)) as VerifyResponse;
  }

  /**
   * Settles a payment on the thread. A thread that cannot be started has been sent nothing: that is the facilitator
   * being unavailable, nothing charged; once the request is posted, only an answer (or the unknown outcome) counts.
   */
  async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    try {
      await this.start();
    } catch (err) {
      return {
        success: false,
        errorReason: 'facilitator_unavailable' satisfies PaymentCode,
        errorMessage: `${(err as Error).message}; nothing was sent.`,
        transaction: '',
        network: requirements.network as SettleResponse['network'],
      };
    }
    return (await this.send('settle', payload, requirements)) as SettleResponse;
  }

  /** What the thread's facilitator lists at `/supported`. */
  async supported(): Promise<SupportedResponse> {
    return (await this.send('supported')) as SupportedResponse;
  }

  /** How many verifications and settlements the current thread ran, and its thread id, as the thread reports them. */
  async stats(): Promise<ThreadStats> {
    return (await this.send('stats')) as ThreadStats;
  }

  /** Ends the thread now: whatever it had in hand fails (a settlement as an unknown outcome). */
  async terminate(): Promise<void> {
    await this.worker?.terminate();
  }

  /** Lets the calls in hand finish (bounded by the settlement time limit), then ends the thread. */
  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>(
      (done) => (timer = setTimeout(done, this.setup.settings.facilitator.settleTimeoutMs)),
    );
    await Promise.race([Promise.allSettled(this.inHand), bound]);
    clearTimeout(timer);
    await this.terminate();
  }
}
