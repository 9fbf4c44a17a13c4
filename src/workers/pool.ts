/**
 * Worker threads for the tools whose cost grows with their input (docs/development.md#cpu-heavy-tools): one piscina
 * pool per tool that declares a `worker` job, started on its first call. A call is admitted to its tool's lane before
 * its payment is read: at most `threads` jobs run and `queue` calls wait; one more is refused with `tool_busy` (503,
 * Retry-After) and nothing is claimed. The admitted call holds its slot until its handler ends, so a call admitted and
 * then paid is never refused for lack of room. A job past its time limit has its worker terminated.
 */
import { performance } from 'node:perf_hooks';
import type { Piscina } from 'piscina';
import type { Registry } from 'prom-client';
import { ToolError } from '../shared/errors.js';
import { promClient } from '../observe/metrics-process.js';
import type { JobInput, JobName, JobOutput } from './jobs.js';
import type { WorkerSettings } from './settings.js';
import { entryBeside, type WorkerEntry } from './entry.js';

export type { WorkerEntry } from './entry.js';

/** `tool-worker.js` beside this module (`dist/bin/` in the bundled CLI), or `tool-worker.ts` from sources: see `entryBeside`. */
export function defaultWorkerEntry(): WorkerEntry {
  return entryBeside(import.meta.url, 'tool-worker');
}

/** A place in a tool's lane, held from admission until the handler ended: runs the tool's jobs. */
export interface WorkerSlot {
  /** Runs a job on the lane's threads once one is free; rejects on a crash, the time limit or `signal`. */
  run<K extends JobName>(job: K, data: JobInput<K>, signal: AbortSignal): Promise<JobOutput<K>>;
  /** Gives the place back (idempotent). */
  release(): void;
}

/** Admitted with a slot, or refused because the lane is full. */
export type Admission = { type: 'admitted'; slot: WorkerSlot } | { type: 'busy'; error: ToolError };

/** How full a lane is: calls admitted (running, waiting, or in the payment steps before their job), jobs running. */
export interface LaneStats {
  admitted: number;
  running: number;
}

/** One tool's bounded lane over its own piscina pool. */
class Lane {
  private admitted = 0;
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Moving average of job times, for the Retry-After estimate. */
  private meanMs = 1000;
  private pool: Promise<Piscina> | undefined;

  constructor(
    private readonly tool: string,
    private readonly settings: WorkerSettings,
    private readonly entry: WorkerEntry,
  ) {}

  admit(): Admission {
    const { threads, queue } = this.settings;
    if (this.admitted >= threads + queue) return { type: 'busy', error: this.busy() };
    this.admitted++;
    let held = true;
    const release = () => {
      if (held) this.admitted--;
      held = false;
    };
    return { type: 'admitted', slot: { run: (job, data, signal) => this.run(job, data, signal), release } };
  }

  stats(): LaneStats {
    return { admitted: this.admitted, running: this.running };
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    if (pool) await (await pool).destroy();
  }

  private busy(): ToolError {
    const waves = Math.ceil((this.admitted + 1) / this.settings.threads);
    const seconds = Math.min(30, Math.max(1, Math.ceil((this.meanMs * waves) / 1000)));
    return new ToolError(
      'tool_busy',
      `${this.tool} is busy: ${this.admitted} calls are running or waiting for it. Retry in ${seconds} seconds.`,
      { details: { retryAfterSeconds: seconds } },
    );
  }

  private piscina(): Promise<Piscina> {
    return (this.pool ??= import('piscina').then(
      ({ Piscina }) =>
        new Piscina({
          filename: this.entry.filename,
          execArgv: this.entry.execArgv,
          name: 'default',
          minThreads: 0,
          maxThreads: this.settings.threads,
          idleTimeout: 5 * 60_000,
          // Lower priority than the event loop's thread (Linux, @napi-rs/nice): under CPU contention the OS runs
          // /healthz, challenges and settlements first; a job only loses time the loop needed.
          niceIncrement: 10,
        }),
    ));
  }

  /** Waits for a free thread (the call's signal gives up waiting). */
  private acquire(signal: AbortSignal): Promise<void> {
    if (this.running < this.settings.threads) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const wake = () => {
        signal.removeEventListener('abort', leave);
        resolve();
      };
      const leave = () => {
        this.waiting.splice(this.waiting.indexOf(wake), 1);
        reject(new ToolError('cancelled', 'The call was cancelled while it waited to run.'));
      };
      if (signal.aborted) return leave();
      this.waiting.push(wake);
      signal.addEventListener('abort', leave, { once: true });
    });
  }

  /** Hands the thread to the next waiting job, or frees it. */
  private free(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  private async run<K extends JobName>(job: K, data: JobInput<K>, signal: AbortSignal): Promise<JobOutput<K>> {
    await this.acquire(signal);
    const start = performance.now();
    const timeout = AbortSignal.timeout(this.settings.timeoutMs);
    try {
      const pool = await this.piscina();
      return (await pool.run({ job, data }, { signal: AbortSignal.any([signal, timeout]) })) as JobOutput<K>;
    } catch (err) {
      if (timeout.aborted && !signal.aborted) {
        const seconds = this.settings.timeoutMs / 1000;
        throw new ToolError(
          'internal',
          `${this.tool} did not finish within ${seconds} seconds on this input and was stopped. Try a smaller input.`,
          { cause: err },
        );
      }
      if (signal.aborted) throw new ToolError('cancelled', 'The call was cancelled while it ran.');
      throw err;
    } finally {
      this.meanMs = 0.8 * this.meanMs + 0.2 * (performance.now() - start);
      this.free();
    }
  }
}

/** The lanes of every tool that declares a worker job; tools without one are never admitted here. */
export class ToolWorkers {
  private readonly lanes = new Map<string, Lane>();

  /** Lanes for `tools` that declare a worker job; with a registry, their occupancy is the gauge `tollbooth_tool_worker_calls`. */
  constructor(
    tools: ReadonlyArray<{ name: string; worker?: { job: JobName } | undefined }>,
    settings: WorkerSettings,
    entry: WorkerEntry = defaultWorkerEntry(),
    registry?: Registry,
  ) {
    for (const tool of tools) if (tool.worker) this.lanes.set(tool.name, new Lane(tool.name, settings, entry));
    if (registry) this.watch(registry);
  }

  private watch(registry: Registry): void {
    const lanes = this.lanes;
    new promClient.Gauge({
      name: 'tollbooth_tool_worker_calls',
      help: 'Calls of each CPU-heavy tool in its worker lane: `admitted` (running, waiting for a thread, or in their payment steps) and `running` (a job on a thread). At WORKER_THREADS_PER_TOOL + WORKER_QUEUE_PER_TOOL admitted, more are refused with tool_busy.',
      labelNames: ['tool', 'state'],
      registers: [registry],
      collect() {
        for (const [tool, lane] of lanes) {
          const { admitted, running } = lane.stats();
          this.set({ tool, state: 'admitted' }, admitted);
          this.set({ tool, state: 'running' }, running);
        }
      },
    });
  }

  /** Admits one call of `tool` to its lane; `undefined` when the tool has no worker job (nothing to admit). */
  admit(tool: string): Admission | undefined {
    return this.lanes.get(tool)?.admit();
  }

  /** How full a tool's lane is (zeros for a tool without one). */
  stats(tool: string): LaneStats {
    return this.lanes.get(tool)?.stats() ?? { admitted: 0, running: 0 };
  }

  /** Terminates every worker thread. */
  async close(): Promise<void> {
    await Promise.all([...this.lanes.values()].map((lane) => lane.close()));
  }
}
