/**
 * Load run of `npm run bench` (also runnable alone: `node --import tsx test/bench/load.ts`): autocannon with
 * 200 connections (BENCH_LOAD_CONNECTIONS) for 30 s (BENCH_LOAD_SECONDS) against one Tollbooth instance in its own
 * process with the embedded SQLite store and the in-process facilitator settling on a local hardhat chain:
 * (a) unpaid 402 probes of every paid route in turn, (b) paid local-tool calls, each with its own pre-signed
 * EIP-3009 payment, then (c) a replay of used payments. Reports throughput and latency and checks that nothing
 * failed and no payment bought two executions (handler runs vs settled receipts vs payments used vs the chain).
 */
import { fileURLToPath } from 'node:url';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { paidTools as tools } from '../../tools/index.js';
import { mint } from '../support/chain/token.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import {
  type CannonRequest,
  type CannonResult,
  type LoadServer,
  cannon,
  sendAll,
  startLoadServer,
  statuses,
} from './load-harness.js';
import { PaymentPool } from './load-payments.js';
import type { ServerStats } from './load-server.js';

/** The paid calls of the run: local tools (no upstream), each with a valid input. */
export const PAID_CALLS: ReadonlyArray<{ tool: string; input: unknown }> = [
  { tool: 'annuity', input: { payment: 100, ratePerPeriod: 0.05, periods: 10 } },
  { tool: 'geo-distance', input: { from: { lat: 52.52, lng: 13.405 }, to: { lat: 48.8566, lng: 2.3522 } } },
  { tool: 'card-validate', input: { number: '4111 1111 1111 1111' } },
];

/** Abuse limits off: the run measures the server's capacity, not its per-IP and per-payer buckets. */
const LIMITS_OFF = { RATE_LIMIT_IP_PER_MINUTE: '0', RATE_LIMIT_PAYER_PER_MINUTE: '0', RATE_LIMIT_TOOL_PER_MINUTE: '0' };

const write = (line: string) => process.stdout.write(line + '\n');

/** Everything a load or soak run drives: the chain, the server, the payment pools and the request sequences. */
export interface LoadSetup {
  paid: PaidEnvironment;
  server: LoadServer;
  pools: PaymentPool[];
  /** A bare probe (no body, no query, no payment) of every paid route. */
  probes: CannonRequest[];
  /** One paid call per entry of PAID_CALLS, each taking a fresh payment. */
  paidCalls: CannonRequest[];
  /** Sum of the payers' token balances, and the pay-to balance. */
  balances(): Promise<{ payers: bigint; payTo: bigint }>;
  stop(): Promise<void>;
}

/** Starts chain, server and payment pools (pre-filled with `prefill` payments each, refilled in the background). */
export async function setupLoad(options: { prefill: number; payerCount?: number }): Promise<LoadSetup> {
  // Payments are valid for the challenge's 300 s only: the chain's clock must follow the wall clock under load.
  const paid = await startPaidEnvironment(options.payerCount ?? 7, { sameTimestampBlocks: true });
  // 100 USDC per payer (70,000 calls at $0.001 with 7 payers), enough for long soaks.
  for (const payer of paid.payers) await mint(paid.chain, paid.token, payer.address, 90_000_000n);
  const server = await startLoadServer({ ...paid.env, ...LIMITS_OFF });
  const probes: CannonRequest[] = tools.map((t) => ({ method: t.method, path: t.path }));
  const pools = new Map<string, PaymentPool>();
  const paidCalls: CannonRequest[] = [];
  for (const call of PAID_CALLS) {
    const tool = tools.find((t) => t.name === call.tool);
    if (!tool) throw new Error(`tool ${call.tool} is not in the registry`);
    const res = await fetch(server.url + tool.path, { method: tool.method });
    const challenge = JSON.parse(
      Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString('utf8'),
    ) as PaymentRequired;
    const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK);
    if (!entry) throw new Error(`${call.tool} does not advertise the local network`);
    const key = JSON.stringify(entry);
    let pool = pools.get(key);
    if (!pool) {
      pool = new PaymentPool(paid.payers, entry as PaymentRequirements);
      pools.set(key, pool);
    }
    const from = pool;
    paidCalls.push({
      method: 'POST',
      path: tool.path,
      body: JSON.stringify(call.input),
      headers: { 'content-type': 'application/json' },
      setupRequest: (request) => {
        const payment = from.take();
        return payment ? { ...request, headers: { ...request.headers, 'payment-signature': payment } } : request;
      },
    });
  }
  for (const pool of pools.values()) {
    await pool.fill(options.prefill);
    pool.refill(Math.ceil(options.prefill / 2), options.prefill);
  }
  const balances = async () => {
    let payers = 0n;
    for (const p of paid.payers) payers += await paid.balance(p.address);
    return { payers, payTo: await paid.balance(paid.payTo) };
  };
  return {
    paid,
    server,
    pools: [...pools.values()],
    probes,
    paidCalls,
    balances,
    stop: async () => {
      for (const pool of pools.values()) await pool.stop();
      await server.stop();
      await paid.stop();
    },
  };
}

const sum = (record: Record<string, number>) => Object.values(record).reduce((a, b) => a + b, 0);

/** One line of throughput and latency. */
export function describeRun(result: CannonResult): string {
  return `${result.requests.average.toFixed(0)} req/s (${result.requests.total} requests), p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms; statuses ${JSON.stringify(statuses(result))}; errors ${result.errors}, timeouts ${result.timeouts}`;
}

/**
 * Checks that hold after paid traffic: no unpaid or double execution, one settled receipt per charged run, the chain
 * moved exactly the settled amount, no more settlements than payments used. Returns the problems found.
 */
export function paidProblems(
  stats: ServerStats,
  chain: { payersSpent: bigint; payToGained: bigint },
  used: number,
  ok2xx: number,
): string[] {
  const problems: string[] = [];
  if (stats.unpaidRuns !== 0) problems.push(`${stats.unpaidRuns} handler runs without a verified payment`);
  if (stats.doubleExecutions !== 0) problems.push(`${stats.doubleExecutions} payments ran a handler twice`);
  if (stats.receipts.failed !== 0)
    problems.push(`${stats.receipts.failed} failed settlements ${JSON.stringify(stats.receipts.failedReasons)}`);
  if (stats.receipts.distinctSettled !== stats.receipts.settled)
    problems.push(`${stats.receipts.settled} settled receipts for ${stats.receipts.distinctSettled} distinct payments`);
  if (stats.chargedRuns !== stats.receipts.settled)
    problems.push(`${stats.chargedRuns} charged handler runs but ${stats.receipts.settled} settled receipts`);
  if (stats.settledWithoutRun !== 0) problems.push(`${stats.settledWithoutRun} payments settled without a handler run`);
  if (stats.receipts.settled > used) problems.push(`${stats.receipts.settled} settlements from ${used} payments`);
  if (ok2xx > stats.receipts.settled) problems.push(`${ok2xx} paid answers but ${stats.receipts.settled} settlements`);
  const amount = BigInt(stats.receipts.settledAmount);
  if (chain.payersSpent !== amount || chain.payToGained !== amount) {
    problems.push(
      `chain moved ${chain.payersSpent} from payers / ${chain.payToGained} to pay-to, receipts say ${amount}`,
    );
  }
  return problems;
}

/** One line about the executions of a run. */
export function describeExecutions(stats: ServerStats, used: number, starved: number): string {
  return `handler runs ${sum(stats.runs)} ${JSON.stringify(stats.runs)}: charged ${stats.chargedRuns}, released uncharged ${stats.unchargedRuns} (client gone before settlement); settled receipts ${stats.receipts.settled} (distinct payments ${stats.receipts.distinctSettled}, failed ${stats.receipts.failed}); payments used ${used}${starved ? `, ${starved} requests found no payment ready` : ''}; double executions ${stats.doubleExecutions}, runs without payment ${stats.unpaidRuns}`;
}

function nonceOf(header: string): string {
  const payload = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as {
    payload: { authorization: { nonce: string } };
  };
  return payload.payload.authorization.nonce.toLowerCase();
}

/** Sends the settled payments of the pools' samples again, `concurrency` at once: each must be refused, nothing may run. */
export async function replaySettled(
  setup: LoadSetup,
  concurrency: number,
): Promise<{ line: string; problems: string[] }> {
  const { server } = setup;
  const settled = new Set(await server.settledNonces());
  const sample = setup.pools.flatMap((p) => p.sample).filter((payment) => settled.has(nonceOf(payment)));
  const before = await server.stats();
  const call = setup.paidCalls[0]!;
  const replay = await sendAll(
    sample.map(
      (payment) => () =>
        fetch(server.url + call.path, {
          method: 'POST',
          headers: { ...call.headers, 'payment-signature': payment },
          body: call.body,
        }),
    ),
    concurrency,
  );
  const after = await server.settle();
  const moreRuns = sum(after.runs) - sum(before.runs);
  const moreReceipts = after.receipts.settled - before.receipts.settled;
  const line = `replay of ${sample.length} settled payments, ${concurrency} at once: statuses ${JSON.stringify(replay.statuses)}, reasons ${JSON.stringify(replay.reasons)}; handler runs +${moreRuns}, settled receipts +${moreReceipts}`;
  const refused = replay.reasons['payment_already_used'] ?? 0;
  const problems = [
    ...(sample.length === 0 ? ['replay: no settled payment to replay'] : []),
    ...(refused !== sample.length ? [`replay: ${refused} of ${sample.length} refused as already used`] : []),
    ...(moreRuns !== 0 || moreReceipts !== 0 ? ['replay: a settled payment ran or settled again'] : []),
  ];
  return { line, problems };
}

/** The load run: probes, paid calls, replay; prints the figures and returns whether every check held. */
export async function runLoad(seconds: number, connections: number): Promise<boolean> {
  const setup = await setupLoad({ prefill: 4000 });
  const { server } = setup;
  const problems: string[] = [];
  try {
    write(
      `(f) load: ${connections} connections, ${seconds} s per phase, one instance (pid ${server.pid}), embedded SQLite store, in-process facilitator on a local chain, abuse limits off`,
    );
    await cannon({ url: server.url, connections: 20, duration: 1, requests: setup.probes });
    const probed = await cannon({
      url: server.url,
      connections,
      duration: seconds,
      timeout: 30,
      requests: setup.probes,
    });
    const afterProbes = await server.stats();
    write(
      `    (a) unpaid probes of the ${setup.probes.length} paid routes: ${describeRun(probed)}; handler runs ${sum(afterProbes.runs)}`,
    );
    if (probed.errors || probed.timeouts) problems.push(`probes: ${probed.errors} errors, ${probed.timeouts} timeouts`);
    if (Object.keys(statuses(probed)).some((s) => s !== '402'))
      problems.push(`probes answered ${JSON.stringify(statuses(probed))}, expected only 402`);
    if (sum(afterProbes.runs) !== 0) problems.push(`probes ran ${sum(afterProbes.runs)} handlers`);

    const before = await setup.balances();
    const paidRun = await cannon({
      url: server.url,
      connections,
      duration: seconds,
      timeout: 60,
      requests: setup.paidCalls,
    });
    const stats = await server.settle();
    const after = await setup.balances();
    const used = setup.pools.reduce((n, p) => n + p.taken, 0);
    const starved = setup.pools.reduce((n, p) => n + p.starved, 0);
    const ok2xx = statuses(paidRun)['200'] ?? 0;
    write(
      `    (b) paid calls (${PAID_CALLS.map((c) => c.tool).join(', ')}; ${setup.paid.payers.length} payers, one fresh EIP-3009 payment each): ${describeRun(paidRun)}`,
    );
    write(
      `        ${(stats.receipts.settled / paidRun.duration).toFixed(1)} settlements/s; ${used - ok2xx} calls were still in flight when autocannon stopped and closed their connections`,
    );
    write(`        ${describeExecutions(stats, used, starved)}`);
    write(
      `        chain: payers -${before.payers - after.payers}, pay-to +${after.payTo - before.payTo} units (settled receipts: ${stats.receipts.settledAmount})`,
    );
    if (paidRun.errors || paidRun.timeouts || paidRun.non2xx)
      problems.push(`paid: ${paidRun.errors} errors, ${paidRun.timeouts} timeouts, ${paidRun.non2xx} non-2xx`);
    if (starved) problems.push(`paid: ${starved} requests went out without a payment (signer too slow)`);
    problems.push(
      ...paidProblems(
        stats,
        { payersSpent: before.payers - after.payers, payToGained: after.payTo - before.payTo },
        used,
        ok2xx,
      ),
    );

    const replay = await replaySettled(setup, connections);
    write(`    (c) ${replay.line}`);
    problems.push(...replay.problems);
  } finally {
    await setup.stop();
  }
  write(
    `    => ${problems.length === 0 ? 'OK: zero errors, zero double executions, every replay refused' : `FAILED: ${problems.join('; ')}`}`,
  );
  return problems.length === 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ok = await runLoad(
    Number(process.env.BENCH_LOAD_SECONDS ?? 30),
    Number(process.env.BENCH_LOAD_CONNECTIONS ?? 200),
  );
  process.exit(ok ? 0 : 1);
}
