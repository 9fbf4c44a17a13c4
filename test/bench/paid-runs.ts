/**
 * Shared steps of the paid comparison's sections (paid-compare.ts, paid-batch.ts): signing ahead with the cost
 * counted, the warm-up that sizes the timed runs, and the one-line description and totals of runs.
 */
import { paidRun, runProblems, type PaidRun, type PaymentPool } from './paid-load.js';
import type { Proc } from './paid-procs.js';

/** A number for the report (`n/a` when not finite). */
export const f = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

/** One timed run as one line: answers, rate, latency, CPU per call, facilitator calls per call. */
export function describeRun(label: string, r: PaidRun): string {
  const per = (n: number) => f(n / Math.max(1, r.ok), 2);
  const non200 = Object.entries(r.statuses).filter(([s]) => s !== '200');
  return (
    `${label} ${r.server.padEnd(14)} ${r.ok} x 200 in ${f(r.seconds, 1)} s = ${f(r.rps).padStart(5)} req/s, p50 ${r.p50ms} ms, p99 ${r.p99ms} ms; ` +
    `CPU/call: server ${per(r.serverCpuMs)} ms (kernel ${per(r.serverSystemMs)}), facilitator ${per(r.facilitatorCpuMs)} ms, load generator ${per(r.loadGeneratorCpuMs)} ms; ` +
    `facilitator verify ${per(r.facilitator.verified + r.facilitator.invalid)}/call, settle ${per(r.facilitator.settled + r.facilitator.settleFailed)}/call, ${r.facilitator.connections} new connections` +
    (non200.length ? `; NOT 200: ${JSON.stringify(Object.fromEntries(non200))}` : '')
  );
}

/** Means over a server's timed runs. */
export interface Totals {
  name: string;
  rps: number;
  cpuPerCall: number;
  facilitatorPerCall: number;
  /** Median of the runs' p50 latencies, ms. */
  p50ms: number;
}

/** Mean req/s, and server and facilitator CPU per paid call, over runs of one server. */
export function totals(runs: PaidRun[]): Totals {
  const ok = runs.reduce((n, r) => n + r.ok, 0);
  const p50s = runs.map((r) => r.p50ms).sort((a, b) => a - b);
  return {
    name: runs[0]!.server,
    rps: runs.reduce((n, r) => n + r.rps, 0) / runs.length,
    cpuPerCall: runs.reduce((n, r) => n + r.serverCpuMs, 0) / ok,
    facilitatorPerCall: runs.reduce((n, r) => n + r.facilitatorCpuMs, 0) / ok,
    p50ms: p50s[Math.floor(p50s.length / 2)] ?? NaN,
  };
}

/** Signs the payments a run needs, keeping count of what signing cost (it happens before, never during, a timed run). */
export class Signer {
  ms = 0;
  count = 0;
  async fill(pool: PaymentPool, available: number): Promise<void> {
    const t = performance.now();
    const before = pool.headers.length;
    await pool.fill(available);
    this.ms += performance.now() - t;
    this.count += pool.headers.length - before;
  }
}

/** What a warm-up found: its calls, its problems, and the number of calls that take ~`seconds` at its rate. */
export interface WarmUp {
  calls: number;
  seconds: number;
  rate: number;
  amount: number;
  problems: string[];
}

/** How long to warm up and how to size the timed runs. */
export interface WarmUpOptions {
  connections: number;
  warmupSeconds: number;
  /** Target length of a timed run. */
  seconds: number;
}

/**
 * Paid calls in chunks (each chunk's payments signed before it) until `warmupSeconds` of load and at least two
 * chunks; the rate of the chunks after the first sizes the timed runs: a fixed number of calls each (a multiple of
 * the connections), so that no call is in flight when a run ends and every 200 can be matched with its payment.
 */
export async function warmUp(
  server: Proc,
  facilitator: Proc,
  pool: PaymentPool,
  signer: Signer,
  options: WarmUpOptions,
): Promise<WarmUp> {
  const chunk = Math.max(options.connections * 5, 100 - (100 % options.connections));
  const runs: PaidRun[] = [];
  let loaded = 0;
  while (runs.length < 2 || loaded < options.warmupSeconds) {
    await signer.fill(pool, chunk);
    const run = await paidRun(server, facilitator, pool, chunk, options.connections);
    runs.push(run);
    loaded += run.seconds;
    if (run.ok === 0)
      throw new Error(`${server.name}: no paid call succeeded in the warm-up: ${runProblems(run).join('; ')}`);
  }
  const later = runs.slice(1);
  const rate = later.reduce((n, r) => n + r.ok, 0) / later.reduce((n, r) => n + r.seconds, 0);
  const perConnection = Math.max(1, Math.round((rate * options.seconds) / options.connections));
  return {
    calls: runs.reduce((n, r) => n + r.ok, 0),
    seconds: loaded,
    rate,
    amount: perConnection * options.connections,
    problems: runs.flatMap(runProblems),
  };
}
