/**
 * The worker thread entry (a piscina task module): runs one job of `jobs.ts` per task. Built to
 * `dist/bin/tool-worker.js` beside the bundled CLI (scripts/bundle.mjs) and to `dist/src/workers/tool-worker.js`.
 */
import { runJob, type JobName } from './jobs.js';

/** One task as the pool sends it. */
export interface WorkerTask {
  job: JobName;
  data: unknown;
}

/** Runs the task's job and returns its result to the pool. */
export default function run(task: WorkerTask): Promise<unknown> {
  return runJob(task.job, task.data as never);
}
