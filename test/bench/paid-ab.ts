/**
 * Two Tollbooth servers side by side under the same voucher load (`npm run bench:ab`): A and B differ only in what
 * the environment says — the build (BENCH_AB_CLI_A/B: another build's `dist/bin/cli.js`, e.g. a worktree of the
 * commit before a change), the Node binary (BENCH_AB_NODE_A/B: a path, or a major version such as `22` taken from
 * npm with `npx -p node@22`), Node flags (BENCH_AB_FLAGS_A/B) and settings (BENCH_AB_ENV_A/B, JSON, e.g.
 * `{"SQLITE_DRIVER":"libsql"}`). Each runs the built CLI with batch settlement on one local chain (as in
 * paid-batch.ts), its own channels opened with real deposits, and each autocannon connection sends one channel's
 * pre-signed vouchers in order. After a warm-up each, timed runs alternate A, B, B, A… (BENCH_AB_RUNS each, default
 * 4, of BENCH_AB_CALLS calls, default 4000, over BENCH_PAID_CONNECTIONS connections, default 20), so a machine whose
 * speed drifts moves both alike. Every run's answers are checked (each a voucher-only 200). Prints each run, the
 * means and the B/A ratios, then one JSON line. For "profile before optimising": what one change of setting, flag or
 * Node version is worth, measured rather than guessed.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { oursBatchSpec, startBatchSetup, type BatchSetup } from './paid-batch.js';
import { paidRun, runProblems, type PaidRun } from './paid-load.js';
import { startProc, type Proc } from './paid-procs.js';
import { describeRun, f, Signer, warmUp } from './paid-runs.js';
import { facilitatorSpec } from './paid-servers.js';
import { VoucherPool } from './paid-vouchers.js';

const env = process.env;
const options = {
  connections: Number(env.BENCH_PAID_CONNECTIONS ?? 20),
  runs: Math.max(1, Number(env.BENCH_AB_RUNS ?? 4)),
  calls: Number(env.BENCH_AB_CALLS ?? 4000),
  seconds: 5,
  warmupSeconds: Number(env.BENCH_PAID_WARMUP_SECONDS ?? 10),
};
const PRICE = 1000n;
const write = (line: string) => process.stdout.write(line + '\n');

/** A Node binary: a path as given, or a major version (`22`) resolved from npm (downloaded once into npx's cache). */
function nodeBinary(value: string | undefined): string | undefined {
  if (!value) return undefined;
  if (!/^\d+$/.test(value)) return value;
  const out = execFileSync('npx', ['-y', '-p', `node@${value}`, '-c', 'command -v node'], { encoding: 'utf8' });
  return out.trim().split('\n').at(-1);
}

/** One side: its server, channels and the figures of its timed runs. */
interface Side {
  label: 'A' | 'B';
  describe: string;
  server: Proc;
  pool: VoucherPool;
  runs: PaidRun[];
}

/** Starts side `label` on the chain, with the payers `payers` (one channel each). */
async function startSide(label: 'A' | 'B', facilitator: Proc, setup: BatchSetup, from: number): Promise<Side> {
  const node = nodeBinary(env[`BENCH_AB_NODE_${label}`]);
  const flags = (env[`BENCH_AB_FLAGS_${label}`] ?? '').split(' ').filter(Boolean);
  const extra = JSON.parse(env[`BENCH_AB_ENV_${label}`] ?? '{}') as Record<string, string>;
  const cli = env[`BENCH_AB_CLI_${label}`];
  const spec = oursBatchSpec(facilitator.url, setup, flags);
  Object.assign(spec.env, extra);
  if (cli) spec.args = [resolve(cli), ...spec.args.slice(1)];
  const server = await startProc({ ...spec, name: `tollbooth ${label}`, ...(node && { node }) });
  const version = execFileSync(node ?? process.execPath, ['--version'], { encoding: 'utf8' }).trim();
  const settings = Object.entries(extra).map(([k, v]) => `${k}=${v}`);
  const describe = [version, ...(cli ? [cli] : []), ...flags, ...settings].join(' ');
  const pool = new VoucherPool(PRICE, server.url);
  await pool.open(setup.env.chain, setup.payers.slice(from, from + options.connections));
  return { label, describe, server, pool, runs: [] };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** Mean req/s and server CPU per call of a side's runs. */
function figures(side: Side) {
  return {
    rps: mean(side.runs.map((r) => r.ok / r.seconds)),
    cpuMsPerCall: mean(side.runs.map((r) => r.serverCpuMs / Math.max(1, r.ok))),
  };
}

/** Warm-ups, then the alternating timed runs; returns the problems found. */
async function measure(sides: Side[], facilitator: Proc): Promise<string[]> {
  const problems: string[] = [];
  const signer = new Signer();
  for (const side of sides) {
    const w = await warmUp(side.server, facilitator, side.pool, signer, options);
    problems.push(...w.problems.map((p) => `${side.label} warm-up: ${p}`));
    write(`    warm-up ${side.label} (${side.describe}): ${w.calls} calls, ${f(w.rate)} req/s`);
  }
  for (const side of sides) await signer.fill(side.pool, options.calls * options.runs);
  for (let k = 0; k < options.runs; k++) {
    for (const side of k % 2 === 0 ? sides : [...sides].reverse()) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const run = await paidRun(side.server, facilitator, side.pool, options.calls, options.connections);
      side.runs.push(run);
      write(describeRun(`    run ${k + 1} ${side.label} `, run));
      problems.push(...runProblems(run).map((p) => `${side.label} run ${k + 1}: ${p}`));
    }
  }
  return problems;
}

/** The comparison: prints its figures and returns whether every check held. */
export async function runAb(): Promise<boolean> {
  const setup = await startBatchSetup(options.connections * 2);
  const facilitator = await startProc(facilitatorSpec(setup.facilitator));
  const sides: Side[] = [];
  let problems: string[];
  try {
    sides.push(await startSide('A', facilitator, setup, 0));
    sides.push(await startSide('B', facilitator, setup, options.connections));
    problems = await measure(sides, facilitator);
  } finally {
    for (const side of sides) await side.server.stop();
    await facilitator.stop();
    await setup.env.stop();
  }
  const [a, b] = sides.map(figures) as [ReturnType<typeof figures>, ReturnType<typeof figures>];
  for (const [i, side] of sides.entries()) {
    const x = i === 0 ? a : b;
    write(`=> ${side.label} (${side.describe}): ${f(x.rps)} req/s, server CPU ${f(x.cpuMsPerCall, 3)} ms per call`);
  }
  const ratios = { rps: b.rps / a.rps, cpuPerCall: b.cpuMsPerCall / a.cpuMsPerCall };
  write(`=> B/A: req/s ${f(ratios.rps, 3)}x, server CPU per call ${f(ratios.cpuPerCall, 3)}x`);
  for (const p of problems) write(`PROBLEM: ${p}`);
  const describe = Object.fromEntries(sides.map((s) => [s.label, s.describe]));
  write(JSON.stringify({ bench: 'ab', ok: problems.length === 0, ...describe, a, b, ratios }));
  return problems.length === 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ok = await runAb();
  process.exit(ok ? 0 : 1);
}
