/**
 * The one list of worker jobs: the CPU-bound pure functions tools run on worker threads (`ctx.offload`), each taking
 * and returning structured-cloneable data. The worker entry (`tool-worker.ts`) serves exactly these; their heavy
 * libraries (zxcvbn, the Solidity lexer, indicator maths) load on first use, so a worker holds only what its tool needs.
 */
import { indicatorReport, type IndicatorJob } from '../indicators/job.js';
import { estimatePasswordStrength } from '../password/strength.js';
import { scanSolidity } from '../solidity/scan.js';

/** The jobs by name. */
export const JOBS = {
  'password-strength': async (password: string) => estimatePasswordStrength(password),
  'solidity-scan': async (source: string) => scanSolidity(source),
  indicators: async (job: IndicatorJob) => indicatorReport(job),
};

/** A job's name. */
export type JobName = keyof typeof JOBS;
/** What a job takes. */
export type JobInput<K extends JobName> = Parameters<(typeof JOBS)[K]>[0];
/** What a job returns. */
export type JobOutput<K extends JobName> = Awaited<ReturnType<(typeof JOBS)[K]>>;

/** Runs a job on the calling thread: what a worker does with a job it is handed (and unit tests of handlers). */
export function runJob<K extends JobName>(job: K, data: JobInput<K>): Promise<JobOutput<K>> {
  const fn = JOBS[job] as ((data: JobInput<K>) => Promise<JobOutput<K>>) | undefined;
  if (!fn) return Promise.reject(new Error(`unknown worker job: ${String(job)}`));
  return fn(data);
}
