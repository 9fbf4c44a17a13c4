/**
 * A worker entry for tests (RuntimeOptions.workerEntry), standing in for src/workers/tool-worker.ts: a job whose data
 * is `gate:<file>…` blocks its thread (as a CPU-bound input would) until that file exists, then runs the real job;
 * `crash` ends the worker thread; `spin` loops forever (the job time limit must stop it). Anything else runs as is.
 */
import { existsSync } from 'node:fs';
import { runJob, type JobName } from '../../src/workers/jobs.js';

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Runs one task as the pool sends it. */
export default function run(task: { job: JobName; data: unknown }): Promise<unknown> {
  const { data } = task;
  if (typeof data === 'string' && data.startsWith('gate:')) {
    const file = data.slice('gate:'.length).split('|')[0]!;
    // Synchronous, like zxcvbn on a crafted password: this thread runs nothing else until the gate opens.
    while (!existsSync(file)) Atomics.wait(pause, 0, 0, 5);
  }
  if (data === 'crash') process.exit(1);
  if (data === 'spin') for (;;);
  return runJob(task.job, task.data as never);
}
