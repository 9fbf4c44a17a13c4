/**
 * `npm run soak` (by hand; about 12 minutes): the load run's traffic for 10 minutes (SOAK_SECONDS) against one
 * Tollbooth instance in its own process (embedded SQLite store, in-process facilitator on a local chain): unpaid
 * probes of every paid route (SOAK_PROBE_CONNECTIONS, default 100, at most SOAK_PROBE_RATE per second, default 500) and paid local-tool calls with fresh payments
 * (SOAK_PAID_CONNECTIONS, default 100) at the same time. The server's memory is measured after a warm-up
 * (SOAK_WARMUP_SECONDS, default 120: the allocator's working set takes a minute or two of this traffic to reach its
 * level) and after the soak, each time idle and after a full GC; it must not grow by 10% or more (RSS and V8 heap).
 * Every minute under load it is sampled too, and the trend (least-squares slope) of those samples is reported. Also: zero errors, zero non-2xx paid answers, one settled receipt per handler run and per
 * payment, the chain moved exactly the settled amount, and used payments are refused when replayed.
 */
import { cannon, statuses } from './load-harness.js';
import { describeExecutions, describeRun, PAID_CALLS, paidProblems, replaySettled, setupLoad } from './load.js';

const seconds = Number(process.env.SOAK_SECONDS ?? 600);
const warmup = Number(process.env.SOAK_WARMUP_SECONDS ?? 120);
const probeConnections = Number(process.env.SOAK_PROBE_CONNECTIONS ?? 100);
const paidConnections = Number(process.env.SOAK_PAID_CONNECTIONS ?? 100);
const probeRate = Number(process.env.SOAK_PROBE_RATE ?? 500);
const MAX_GROWTH = 0.1;
const write = (line: string) => process.stdout.write(line + '\n');
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const sum = (record: Record<string, number>) => Object.values(record).reduce((a, b) => a + b, 0);
/** Least-squares slope of a memory series, in MB per minute. */
function slope(points: Array<{ minute: number; rss: number; heap: number }>, key: 'rss' | 'heap'): string {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.minute, 0) / n;
  const my = points.reduce((s, p) => s + p[key], 0) / n;
  const num = points.reduce((s, p) => s + (p.minute - mx) * (p[key] - my), 0);
  const den = points.reduce((s, p) => s + (p.minute - mx) ** 2, 0);
  return `${(num / den / 1024 / 1024).toFixed(2)} MB/min`;
}

const setup = await setupLoad({ prefill: 4000 });
const { server } = setup;
const problems: string[] = [];
const traffic = (duration: number) =>
  Promise.all([
    cannon({
      url: server.url,
      connections: probeConnections,
      duration,
      timeout: 30,
      overallRate: probeRate,
      requests: setup.probes,
    }),
    cannon({ url: server.url, connections: paidConnections, duration, timeout: 60, requests: setup.paidCalls }),
  ]);

try {
  write(
    `soak: ${seconds} s of unpaid probes (${probeConnections} connections, at most ${probeRate}/s) and paid calls of ${PAID_CALLS.map((c) => c.tool).join(', ')} (${paidConnections} connections) against one instance (pid ${server.pid}), after a ${warmup} s warm-up`,
  );
  const initial = await setup.balances();
  await traffic(warmup);
  await server.settle();
  const start = await server.memory();
  const runsBefore = sum((await server.stats()).runs);
  write(
    `  start (idle after warm-up, after GC): rss ${mb(start.rss)}, heap used ${mb(start.heapUsed)}, external ${mb(start.external)}`,
  );

  const began = Date.now();
  const samples: Array<{ minute: number; rss: number; heap: number }> = [];
  const sampler = setInterval(() => {
    void server.memory().then((m) => {
      samples.push({ minute: (Date.now() - began) / 60_000, rss: m.rss, heap: m.heapUsed });
      write(
        `  ${Math.round((Date.now() - began) / 1000)} s (under load): rss ${mb(m.rss)}, heap used ${mb(m.heapUsed)}`,
      );
    });
  }, 60_000);
  const [probed, paid] = await traffic(seconds);
  clearInterval(sampler);
  const stats = await server.settle();
  const end = await server.memory();
  const after = await setup.balances();

  write(`  probes: ${describeRun(probed)}`);
  write(`  paid:   ${describeRun(paid)}`);
  const used = setup.pools.reduce((n, p) => n + p.taken, 0);
  const starved = setup.pools.reduce((n, p) => n + p.starved, 0);
  write(
    `  ${describeExecutions(stats, used, starved)} (since the start, warm-up included; ${sum(stats.runs) - runsBefore} runs in the soak)`,
  );
  write(
    `  chain: payers -${initial.payers - after.payers}, pay-to +${after.payTo - initial.payTo} units since the start (settled receipts: ${stats.receipts.settledAmount})`,
  );
  if (probed.errors || probed.timeouts) problems.push(`probes: ${probed.errors} errors, ${probed.timeouts} timeouts`);
  if (Object.keys(statuses(probed)).some((s) => s !== '402'))
    problems.push(`probes answered ${JSON.stringify(statuses(probed))}`);
  if (paid.errors || paid.timeouts || paid.non2xx)
    problems.push(`paid: ${paid.errors} errors, ${paid.timeouts} timeouts, ${paid.non2xx} non-2xx`);
  if (starved) problems.push(`${starved} paid requests found no payment ready`);
  // Receipts and handler runs count since the server started, so the chain is compared from before the warm-up.
  problems.push(
    ...paidProblems(
      stats,
      { payersSpent: initial.payers - after.payers, payToGained: after.payTo - initial.payTo },
      used,
      statuses(paid)['200'] ?? 0,
    ),
  );

  const replay = await replaySettled(setup, paidConnections);
  write(`  ${replay.line}`);
  problems.push(...replay.problems);

  if (samples.length >= 3)
    write(
      `  trend under load (${samples.length} samples): rss ${slope(samples, 'rss')}, heap used ${slope(samples, 'heap')}`,
    );
  const rssGrowth = (end.rss - start.rss) / start.rss;
  const heapGrowth = (end.heapUsed - start.heapUsed) / start.heapUsed;
  write(
    `  end (idle, after GC): rss ${mb(end.rss)} (${(rssGrowth * 100).toFixed(1)}%), heap used ${mb(end.heapUsed)} (${(heapGrowth * 100).toFixed(1)}%), external ${mb(end.external)} (limit +${MAX_GROWTH * 100}%)`,
  );
  if (rssGrowth >= MAX_GROWTH) problems.push(`RSS grew ${(rssGrowth * 100).toFixed(1)}%`);
  if (heapGrowth >= MAX_GROWTH) problems.push(`heap grew ${(heapGrowth * 100).toFixed(1)}%`);
} finally {
  await setup.stop();
}
write(`  => ${problems.length === 0 ? 'OK' : `FAILED: ${problems.join('; ')}`}`);
process.exit(problems.length === 0 ? 0 : 1);
