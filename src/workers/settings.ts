/** The worker pools' bounds (WORKER_THREADS_PER_TOOL, WORKER_QUEUE_PER_TOOL, WORKER_JOB_TIMEOUT_MS) and their defaults. */
import { availableParallelism } from 'node:os';

/** How each tool with a worker job runs: threads, calls waiting beyond them, and the time limit of one job. */
export interface WorkerSettings {
  /** Jobs of one tool running at once, each on its own thread. */
  threads: number;
  /** Calls of one tool admitted beyond the running ones, waiting for a thread; one more is refused with `tool_busy`. */
  queue: number;
  /** Longest a job may run; the worker is then terminated and the call fails. */
  timeoutMs: number;
}

/**
 * Defaults for the machine: one thread per tool on up to 2 cores (the event loop keeps a core), else cores − 1 up
 * to 4; 8 waiting calls per tool; 30 s per job, a safety net (the slowest known input takes about 1.5 s on a cold
 * worker, whose start-up counts against the limit).
 */
export function workerSettings(env: {
  WORKER_THREADS_PER_TOOL?: number | undefined;
  WORKER_QUEUE_PER_TOOL?: number | undefined;
  WORKER_JOB_TIMEOUT_MS?: number | undefined;
}): WorkerSettings {
  return {
    threads: env.WORKER_THREADS_PER_TOOL ?? Math.max(1, Math.min(4, availableParallelism() - 1)),
    queue: env.WORKER_QUEUE_PER_TOOL ?? 8,
    timeoutMs: env.WORKER_JOB_TIMEOUT_MS ?? 30_000,
  };
}
