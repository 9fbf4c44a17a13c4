/**
 * Paid path, side by side (`npm run bench:paid`, also section (g) of `npm run bench`): Tollbooth's built CLI
 * (`node dist/bin/cli.js serve`, SQLite store, info logs to a file, rate limits on but high) against the official
 * express + @x402/express middleware selling the same POST /api/annuity (same network, asset, EIP-712 domain, amount,
 * pay-to, timeout), both verifying and settling through ONE stub facilitator process over HTTP (official
 * x402Facilitator + ExactEvmScheme, chain answered from memory). Every process is separate; autocannon runs here.
 * Each call carries its own pre-signed EIP-3009 payment taken from the server's own 402 challenge.
 *
 * Beside them, Tollbooth's MPP paid path on the same process: `Authorization: Payment` credentials (mppx's EVM charge
 * client, one fresh challenge and EIP-3009 authorization per call) in runs of their own between the others; skipped,
 * with a message, when the server's 402 carries no `WWW-Authenticate: Payment` (or BENCH_PAID_MPP=0).
 *
 * Environment: BENCH_PAID_CONNECTIONS (20), BENCH_PAID_SECONDS (10, target length of a timed run), BENCH_PAID_RUNS
 * (3 per server, alternating), BENCH_PAID_WARMUP_SECONDS (12, per server: both servers reach their steady JIT state), BENCH_PAID_STARTS (15 starts per kind
 * for the start-up figures: medians of 5 moved by ±8% from one run to the next on a 2-core machine), BENCH_PROFILE=1 (add a --cpu-prof run of Tollbooth) or BENCH_PROFILE=only (just that run),
 * BENCH_PROFILE_TARGET=official|vouchers (profile the official server, or Tollbooth paid by vouchers).
 *
 * Then batch settlement side by side (paid-batch.ts, BENCH_PAID_BATCH=0 skips it, =only runs only it): a Hardhat
 * node, the same facilitator process serving `batch-settlement` there; Tollbooth paid by vouchers against the
 * official middleware with `exact` and with the official batch-settlement server scheme, and against its own unpaid
 * 402. The last line printed is one JSON object: `ok`, `exact` (ours/official ratios) and `batch` (the (a), (b), (c)
 * ratios).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { SignedPool, paidRun, runProblems, type PaidRun } from './paid-load.js';
import { MppPool, mppChallenges } from './paid-mpp.js';
import { cpuMs, machineCpuMs, median, startProc, type Proc } from './paid-procs.js';
import { describeProfile, readProfile, summarizeProfile } from './paid-profile.js';
import { bareSpec, challengeEntry, facilitatorSpec, officialSpec, oursSpec } from './paid-servers.js';
import { describeStartups, measureStartups } from './paid-startup.js';
import { describeUnpaid, measureUnpaid } from './paid-unpaid.js';
import { describeBatch, runBatchComparison, startBatchSetup } from './paid-batch.js';
import { profileVouchers } from './paid-batch-profile.js';
import { Signer, describeRun, f, totals, warmUp, type Totals, type WarmUp } from './paid-runs.js';

const env = process.env;
const options = {
  connections: Number(env.BENCH_PAID_CONNECTIONS ?? 20),
  seconds: Number(env.BENCH_PAID_SECONDS ?? 10),
  runs: Math.max(1, Number(env.BENCH_PAID_RUNS ?? 3)),
  warmupSeconds: Number(env.BENCH_PAID_WARMUP_SECONDS ?? 12),
  starts: Number(env.BENCH_PAID_STARTS ?? 15),
  unpaidSeconds: Number(env.BENCH_PAID_UNPAID_SECONDS ?? 5),
  profile:
    env.BENCH_PROFILE === 'only' ? 'only' : env.BENCH_PROFILE === '1' || env.BENCH_PROFILE === 'true' ? 'also' : 'off',
  mpp: env.BENCH_PAID_MPP !== '0',
  batch: env.BENCH_PAID_BATCH !== '0',
  batchOnly: env.BENCH_PAID_BATCH === 'only',
};
const payers = Array.from({ length: 8 }, () => privateKeyToAccount(generatePrivateKey()));
const write = (line: string) => process.stdout.write(line + '\n');

/** Warm-up, pool sizing and the alternating timed runs; returns the problems found. */
async function compare(facilitator: Proc, label: string, summary: Record<string, unknown>): Promise<string[]> {
  const problems: string[] = [];
  const servers = [await startProc(oursSpec(facilitator.url)), await startProc(officialSpec(facilitator.url))];
  try {
    const pools: SignedPool[] = [];
    for (const server of servers) pools.push(new SignedPool(payers, await challengeEntry(server.url)));
    const signer = new Signer();
    const warm: WarmUp[] = [];
    for (const [i, server] of servers.entries()) {
      const w = await warmUp(server, facilitator, pools[i]!, signer, options);
      warm.push(w);
      problems.push(...w.problems.map((p) => `${server.name} warm-up: ${p}`));
    }
    // Our MPP path, on the same Tollbooth process: detected from its own 402, warmed up after the x402 warm-ups.
    const mpp = options.mpp ? await mppChallenges(servers[0]!.url) : { missing: 'BENCH_PAID_MPP=0' };
    const mppServer: Proc = { ...servers[0]!, name: 'tollbooth MPP' };
    const mppPool = 'missing' in mpp ? undefined : new MppPool(payers, servers[0]!.url);
    const mppSigner = new Signer();
    let mppWarm: WarmUp | undefined;
    if (mppPool) {
      mppWarm = await warmUp(mppServer, facilitator, mppPool, mppSigner, options);
      problems.push(...mppWarm.problems.map((p) => `${mppServer.name} warm-up: ${p}`));
    }
    const amounts = warm.map((w) => w.amount);
    for (const [i, pool] of pools.entries()) await signer.fill(pool, amounts[i]! * options.runs);
    if (mppPool && mppWarm) await mppSigner.fill(mppPool, mppWarm.amount * options.runs);
    write(
      `${label} paid POST /api/annuity: Tollbooth (node dist/bin/cli.js serve) vs official express + @x402/express, both through one stub facilitator process over HTTP`,
    );
    write(
      `    (official x402Facilitator + ExactEvmScheme, chain answered from memory); ${options.connections} connections; after a ~${options.warmupSeconds} s warm-up each, ${options.runs} alternating`,
    );
    write(
      `    runs each of a fixed number of calls sized to ~${options.seconds} s at the warm-up rate; each call with its own pre-signed EIP-3009 payment taken from the`,
    );
    write(
      `    server's own 402 (${signer.count} signed with viem by ${payers.length} payers in ${f(signer.ms / 1000, 1)} s, all before the runs they are used in)`,
    );
    for (const [i, w] of warm.entries()) {
      write(
        `    warm-up ${servers[i]!.name.padEnd(14)} ${w.calls} paid calls in ${f(w.seconds, 1)} s, ${f(w.rate)} req/s after the first chunk -> ${w.amount} calls per timed run`,
      );
    }
    if (mppPool && mppWarm) {
      write(
        `    beside them, Tollbooth's MPP path on the same process: Authorization: Payment credentials of mppx's EVM charge client, each for its own fresh`,
      );
      write(
        `    challenge (one bare 402 each) with a fresh EIP-3009 authorization (${mppSigner.count} prepared in ${f(mppSigner.ms / 1000, 1)} s, of which ${f(mppPool.challengeMs / 1000, 1)} s fetching challenges, all before the runs)`,
      );
      write(
        `    warm-up ${mppServer.name.padEnd(14)} ${mppWarm.calls} paid calls in ${f(mppWarm.seconds, 1)} s, ${f(mppWarm.rate)} req/s after the first chunk -> ${mppWarm.amount} calls per timed run`,
      );
    } else {
      write(
        `    MPP path skipped: ${'missing' in mpp ? mpp.missing : 'no pool'} (Tollbooth's MPP server side is off or not there yet)`,
      );
    }
    const runs: PaidRun[][] = servers.map(() => []);
    const mppRuns: PaidRun[] = [];
    const ownCpu = () =>
      [...servers, facilitator].reduce((n, p) => n + cpuMs(p.pid), 0) +
      process.cpuUsage().user / 1000 +
      process.cpuUsage().system / 1000;
    const machineBefore = machineCpuMs();
    const ownBefore = ownCpu();
    const wallBefore = performance.now();
    for (let k = 0; k < options.runs; k++) {
      for (const [i, s] of servers.entries()) {
        await new Promise((r) => setTimeout(r, 500));
        const run = await paidRun(s, facilitator, pools[i]!, amounts[i]!, options.connections);
        runs[i]!.push(run);
        write(describeRun(`    run ${k + 1}  `, run));
        problems.push(...runProblems(run).map((p) => `${s.name} run ${k + 1}: ${p}`));
      }
      if (mppPool && mppWarm) {
        await new Promise((r) => setTimeout(r, 500));
        const run = await paidRun(mppServer, facilitator, mppPool, mppWarm.amount, options.connections);
        mppRuns.push(run);
        write(describeRun(`    run ${k + 1}  `, run));
        problems.push(...runProblems(run).map((p) => `${mppServer.name} run ${k + 1}: ${p}`));
      }
    }
    const machineAfter = machineCpuMs();
    const wall = performance.now() - wallBefore;
    const cores = (machineAfter.total - machineBefore.total) / wall;
    const others = (machineAfter.busy - machineBefore.busy - (ownCpu() - ownBefore)) / wall;
    write(
      `    machine during the timed runs: ${f(cores, 0)} cores, ${f((machineAfter.busy - machineBefore.busy) / wall, 2)} busy, of which other processes (not this bench) ${f(others, 2)} cores`,
    );
    const [ours, official] = runs.map(totals) as [Totals, Totals];
    for (const t of [ours, official]) {
      write(
        `    => ${t.name.padEnd(14)} ${f(t.rps).padStart(5)} req/s (mean of runs); server CPU ${f(t.cpuPerCall, 2)} ms per paid call; facilitator CPU ${f(t.facilitatorPerCall, 2)} ms per paid call`,
      );
    }
    write(
      `    => ours/official: throughput ${f(ours.rps / official.rps, 2)}x, server CPU per call ${f(ours.cpuPerCall / official.cpuPerCall, 2)}x`,
    );
    summary.exact = { rps: ours.rps / official.rps, serverCpu: ours.cpuPerCall / official.cpuPerCall };
    if (mppRuns.length > 0) {
      const ourMpp = totals(mppRuns);
      const ratio = ourMpp.rps / ours.rps;
      write(
        `    => ${ourMpp.name.padEnd(14)} ${f(ourMpp.rps).padStart(5)} req/s (mean of runs); server CPU ${f(ourMpp.cpuPerCall, 2)} ms per paid call; facilitator CPU ${f(ourMpp.facilitatorPerCall, 2)} ms per paid call`,
      );
      write(
        `    => ours MPP/x402: throughput ${f(ratio, 2)}x (target: within 10%, >= 0.90x: ${ratio >= 0.9 ? 'met' : 'NOT met'}), server CPU per call ${f(ourMpp.cpuPerCall / ours.cpuPerCall, 2)}x`,
      );
    }
    const ok = [...runs.flat(), ...mppRuns].reduce((n, r) => n + r.ok, 0);
    write(
      problems.length === 0
        ? `    checks held: ${ok} timed 200s, each with a receipt of a distinct transaction settling a payment sent in its run; facilitator settlements = 200s in every run; no non-200, no errors, no pool starvation`
        : `    CHECKS FAILED: ${problems.join('; ')}`,
    );
  } finally {
    for (const s of servers) await s.stop();
  }
  return problems;
}

/**
 * One timed run of Tollbooth (or, with BENCH_PROFILE_TARGET=official, of the official server) started with
 * --cpu-prof; prints where its CPU went during that run.
 */
async function profile(facilitator: Proc, label: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-paid-profile-'));
  const flags = ['--cpu-prof', `--cpu-prof-dir=${dir}`];
  const server = await startProc(
    process.env.BENCH_PROFILE_TARGET === 'official'
      ? officialSpec(facilitator.url, flags)
      : oursSpec(facilitator.url, flags),
  );
  let window: { fromUs: number; toUs: number };
  let run: PaidRun | undefined;
  try {
    const pool = new SignedPool(payers, await challengeEntry(server.url));
    const signer = new Signer();
    const { amount } = await warmUp(server, facilitator, pool, signer, options);
    await signer.fill(pool, amount);
    const from = Number(process.hrtime.bigint() / 1000n);
    run = await paidRun(server, facilitator, pool, amount, options.connections);
    window = { fromUs: from, toUs: Number(process.hrtime.bigint() / 1000n) };
  } finally {
    await server.stop(30_000);
  }
  if (!run) throw new Error('the profiled run did not complete');
  const summary = summarizeProfile(readProfile(dir), window);
  write(`${label} profile of ${server.name} (--cpu-prof) over one timed run: ${describeRun('', run).trim()}`);
  write(`    (profiling slows the server; the profile is in ${dir})`);
  write(
    `    CPU time of the process over the run (/proc, all threads): ${f(run.serverCpuMs)} ms; the profile samples the main JavaScript thread only`,
  );
  for (const line of describeProfile(summary)) write('    ' + line);
}

/** Start-up time and idle memory, and the unpaid 402's req/s, ours against official. */
async function startupsAndUnpaid(facilitator: Proc, summary: Record<string, unknown>): Promise<void> {
  const figures = await measureStartups(
    [() => oursSpec(facilitator.url), () => officialSpec(facilitator.url), bareSpec],
    options.starts,
  );
  write(
    `    start-up, median of ${options.starts} starts each (in turn): spawn -> first 402 on POST /api/annuity (polled in a tight loop), then RSS after 1 s idle`,
  );
  for (const line of describeStartups(figures)) write('      ' + line);
  const [ours, official, bare] = figures.map((x) => ({ ms: median(x.firstAnswerMs), mb: median(x.idleRssMb) }));
  write(
    `      ours/official: first 402 ${f(ours!.ms / official!.ms, 2)}x, idle RSS ${f(ours!.mb / official!.mb, 2)}x; ours/bare express: ${f(ours!.ms / bare!.ms, 2)}x, ${f(ours!.mb / bare!.mb, 2)}x`,
  );
  const unpaid = { connections: options.connections, seconds: options.unpaidSeconds, runs: options.runs };
  write(
    `    unpaid 402 (bare POST /api/annuity, no payment), ${unpaid.connections} connections, ${unpaid.runs} alternating runs of ${unpaid.seconds} s`,
  );
  const measured = await measureUnpaid([() => oursSpec(facilitator.url), () => officialSpec(facilitator.url)], unpaid);
  for (const line of describeUnpaid(measured)) write('      ' + line);
  const rps = measured.figures.map((x) => x.rps.reduce((sum, r) => sum + r, 0) / Math.max(1, x.rps.length));
  summary.startup = {
    firstAnswer: ours!.ms / official!.ms,
    idleRss: ours!.mb / official!.mb,
    unpaidRps: rps[0]! / rps[1]!,
  };
}

/** The whole paid comparison; prints its figures and returns whether every check held. */
export async function runPaidComparison(label = '(g)'): Promise<boolean> {
  const wanted = options.batch && (options.profile !== 'only' || env.BENCH_PROFILE_TARGET === 'vouchers');
  const batch = wanted ? await startBatchSetup(Math.max(options.connections, payers.length)) : undefined;
  const facilitator = await startProc(facilitatorSpec(batch?.facilitator));
  const problems: string[] = [];
  const summary: Record<string, unknown> = {};
  try {
    if (options.profile !== 'only') {
      if (!options.batchOnly) problems.push(...(await compare(facilitator, label, summary)));
      if (batch) {
        const figures = await runBatchComparison(facilitator, batch, options, write);
        for (const line of describeBatch(figures)) write('    ' + line);
        problems.push(...figures.problems);
        const { fsyncP50ms, sequential } = figures;
        const cFloor = (fsyncP50ms + sequential.unpaidP50ms) / sequential.unpaidP50ms;
        summary.batch = { ...figures.ratios, cFloor, problems: figures.problems.length };
      }
      if (!options.batchOnly) await startupsAndUnpaid(facilitator, summary);
    }
    if (options.profile !== 'off' && env.BENCH_PROFILE_TARGET === 'vouchers' && batch)
      await profileVouchers(facilitator, batch, options, write);
    else if (options.profile !== 'off') await profile(facilitator, options.profile === 'only' ? label : '   ');
  } finally {
    await facilitator.stop();
    await batch?.env.stop();
  }
  write(JSON.stringify({ bench: 'paid', ok: problems.length === 0, ...summary }));
  return problems.length === 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ok = await runPaidComparison();
  process.exit(ok ? 0 : 1);
}
