/**
 * The voucher path's CPU profile (`BENCH_PROFILE=1 BENCH_PROFILE_TARGET=vouchers npm run bench:paid`): Tollbooth with
 * batch settlement started with --cpu-prof, channels opened, warmed up, then one timed run of vouchers; prints the top
 * self-time functions and packages of the samples taken inside that run.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { paidRun, runProblems, type PaidRun } from './paid-load.js';
import { oursBatchSpec, type BatchSetup } from './paid-batch.js';
import { startProc, type Proc } from './paid-procs.js';
import { describeProfile, readProfile, summarizeProfile } from './paid-profile.js';
import { describeRun, f, Signer, warmUp, type WarmUpOptions } from './paid-runs.js';
import { SALE } from './paid-servers.js';
import { VoucherPool } from './paid-vouchers.js';

/** One profiled timed run of vouchers against Tollbooth with batch settlement; prints where its CPU went. */
export async function profileVouchers(
  facilitator: Proc,
  setup: BatchSetup,
  options: WarmUpOptions,
  write: (line: string) => void,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-paid-profile-'));
  const server = await startProc(oursBatchSpec(facilitator.url, setup, ['--cpu-prof', `--cpu-prof-dir=${dir}`]));
  let window: { fromUs: number; toUs: number } | undefined;
  let run: PaidRun | undefined;
  try {
    const pool = new VoucherPool(BigInt(SALE.amount), server.url);
    await pool.open(setup.env.chain, setup.payers.slice(0, options.connections));
    const signer = new Signer();
    const { amount } = await warmUp(server, facilitator, pool, signer, options);
    await signer.fill(pool, amount);
    const from = Number(process.hrtime.bigint() / 1000n);
    run = await paidRun(server, facilitator, pool, amount, options.connections);
    window = { fromUs: from, toUs: Number(process.hrtime.bigint() / 1000n) };
  } finally {
    await server.stop(30_000);
  }
  if (!run || !window) throw new Error('the profiled voucher run did not complete');
  const summary = summarizeProfile(readProfile(dir), window, { functions: 25, packages: 12 });
  write(`    profile of the voucher path (--cpu-prof) over one timed run: ${describeRun('', run).trim()}`);
  const problems = runProblems(run);
  if (problems.length) write(`    CHECKS FAILED in the profiled run: ${problems.join('; ')}`);
  write(
    `    (profiling slows the server; the profile is in ${dir}); process CPU over the run (/proc, all threads) ${f(run.serverCpuMs)} ms`,
  );
  for (const line of describeProfile(summary)) write('    ' + line);
}
