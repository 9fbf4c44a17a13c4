/**
 * Batch settlement, side by side (part of `npm run bench:paid`): Tollbooth's built CLI with BATCH_SETTLEMENT=on
 * (SQLite store, durable channel state; claims set never to run during the bench: interval one day, threshold far
 * above what the runs charge) paid by vouchers, against (a) the official express + @x402/express middleware with
 * `exact` and (b) the same middleware with the official batch-settlement server scheme and its in-memory channel
 * storage, plus (c) Tollbooth's own unpaid 402 on the same process. All through ONE facilitator process over HTTP
 * serving both schemes (stub-facilitator.mjs): `exact` keeps its chain answered from memory (so its figures compare
 * with the exact-only section), `batch-settlement` (batch-facilitator.mjs) relays deposits to a Hardhat node (chain
 * 8453, TestUSDC at Base's USDC address, the look-alike escrow where @x402/evm expects it), whose CPU is reported
 * apart. Each payer opens one channel per server with a real deposit before the runs; each autocannon connection
 * sends one channel's pre-signed vouchers in order (paid-vouchers.ts). Every timed 200 is checked: a voucher-only
 * receipt charging the price for a distinct (channel, cumulative amount) sent in its run, no facilitator settlement
 * during a run, and for Tollbooth, after the runs, its store's voucher receipts and charged sums equal the 200s.
 */
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { BASE_MAINNET } from '../../src/shared/networks.js';
import { startBatchSettlementEnvironment, type BatchSettlementEnvironment } from '../support/chain/batch-settlement.js';
import { BASE_USDC, mint } from '../support/chain/token.js';
import { loadavg } from 'node:os';
import { fsyncP50ms, sequentialSeries, unpaidP50, type Series } from './paid-latency.js';
import { SignedPool, paidRun, runProblems, type PaidRun, type PaymentPool } from './paid-load.js';
import { cpuMs, startProc, type Proc, type ProcSpec } from './paid-procs.js';
import { describeRun, f, Signer, totals, warmUp, type Totals, type WarmUpOptions } from './paid-runs.js';
import { challengeEntry, officialSpec, oursSpec, SALE, type BatchChain } from './paid-servers.js';
import { storeCharges, VoucherPool } from './paid-vouchers.js';

const PRICE = BigInt(SALE.amount);
/** Calls of each sequential (one connection) latency series per round. */
const SEQUENTIAL = 200;

/** The chain of the batch part and its payers (fresh keys, minted plenty of TestUSDC: deposits are gasless). */
export interface BatchSetup {
  env: BatchSettlementEnvironment;
  payers: PrivateKeyAccount[];
  facilitator: BatchChain;
}

/** Starts the Hardhat node with the escrow installed and mints `count` payers 1000 USDC each. */
export async function startBatchSetup(count: number): Promise<BatchSetup> {
  const env = await startBatchSettlementEnvironment(1);
  const payers = Array.from({ length: count }, () => privateKeyToAccount(generatePrivateKey()));
  for (const payer of payers) await mint(env.chain, env.token, payer.address, 1_000_000_000n);
  const facilitator = {
    rpcUrl: env.chain.rpcUrl,
    chainId: env.chain.chainId,
    facilitatorKey: env.env.FACILITATOR_EVM_PRIVATE_KEY!,
  };
  return { env, payers, facilitator };
}

/** Tollbooth with batch settlement on the local Base; its DATA_DIR is in the spec's env. */
export function oursBatchSpec(facilitatorUrl: string, setup: BatchSetup, nodeFlags: string[] = []): ProcSpec {
  const base = { id: BASE_MAINNET, rpcUrl: setup.env.chain.rpcUrl, label: 'Base (local chain 8453)' };
  return oursSpec(facilitatorUrl, nodeFlags, {
    name: 'tollbooth batch',
    networks: [base],
    env: {
      BATCH_SETTLEMENT: 'on',
      BATCH_RECEIVER_AUTHORIZER_KEY: generatePrivateKey(),
      BATCH_CLAIM_INTERVAL: '86400',
      BATCH_CLAIM_THRESHOLD: '1' + '0'.repeat(29),
    },
  });
}

/** The official middleware with the official batch-settlement server scheme (in-memory storage) on the local Base. */
function officialBatchSpec(facilitatorUrl: string): ProcSpec {
  return officialSpec(facilitatorUrl, [], {
    name: '@x402/express batch',
    env: {
      SCHEME: 'batch-settlement',
      NETWORK: BASE_MAINNET,
      ASSET: BASE_USDC,
      TOKEN_NAME: 'USD Coin',
      TOKEN_VERSION: '2',
      RECEIVER_AUTHORIZER_KEY: generatePrivateKey(),
      WITHDRAW_DELAY: '86400',
    },
  });
}

/** The figures of the batch part: (a), (b), (c) ratios and what they are made of. */
export interface BatchFigures {
  ours: Totals;
  exact: Totals;
  officialBatch: Totals;
  unpaidP50ms: number;
  /** One caller alone, one call after the other: median over rounds of each round's p50. */
  sequential: { voucherP50ms: number; unpaidP50ms: number };
  /** p50 of one WAL-sized fdatasync on the store's disk: the floor under every voucher answer (paid-latency.ts). */
  fsyncP50ms: number;
  hardhatCpuMs: number;
  loadAverage: number[];
  ratios: {
    aRps: number;
    aCpuServerPlusFacilitator: number;
    bRps: number;
    bServerCpu: number;
    cP50: number;
    cP50Sequential: number;
  };
  problems: string[];
}

/** One server of the comparison: its payments, calls per timed run, timed runs and warm-up 200s. */
interface Side {
  server: Proc;
  pool: PaymentPool;
  amount: number;
  runs: PaidRun[];
  warmCalls: number;
}

/** Starts the three servers, opens the channels, warms each up; returns the sides in run order. */
async function prepare(
  facilitator: Proc,
  setup: BatchSetup,
  options: WarmUpOptions,
  signer: Signer,
  write: (l: string) => void,
) {
  const oursSpecB = oursBatchSpec(facilitator.url, setup);
  const specs = [oursSpecB, officialSpec(facilitator.url), officialBatchSpec(facilitator.url)];
  const servers: Proc[] = [];
  for (const spec of specs) servers.push(await startProc(spec));
  const sides: Side[] = [];
  const problems: string[] = [];
  try {
    const payers = setup.payers.slice(0, options.connections);
    const ours = new VoucherPool(PRICE, servers[0]!.url);
    await ours.open(setup.env.chain, payers);
    const official = new VoucherPool(PRICE, servers[2]!.url);
    await official.open(setup.env.chain, payers);
    const exact = new SignedPool(payers, await challengeEntry(servers[1]!.url));
    for (const [i, pool] of [ours, exact, official].entries()) {
      const w = await warmUp(servers[i]!, facilitator, pool, signer, options);
      problems.push(...w.problems.map((p) => `${servers[i]!.name} warm-up: ${p}`));
      write(
        `    warm-up ${servers[i]!.name.padEnd(20)} ${w.calls} paid calls in ${f(w.seconds, 1)} s, ${f(w.rate)} req/s -> ${w.amount} calls per timed run`,
      );
      sides.push({ server: servers[i]!, pool, amount: w.amount, runs: [], warmCalls: w.calls });
    }
    return { sides, problems, dataDir: oursSpecB.env.DATA_DIR!, deposits: ours.deposits };
  } catch (err) {
    for (const s of servers) await s.stop();
    throw err;
  }
}

/** Tollbooth's store against the 200s it answered: one voucher receipt each, the charged sums exact. */
function checkStore(dataDir: string, side: Side, deposits: number, more: number): string[] {
  const paid = side.runs.reduce((n, r) => n + r.ok + r.wrongBodies, 0) + side.warmCalls + more;
  const held = storeCharges(dataDir);
  const problems: string[] = [];
  if (held.vouchers !== paid) problems.push(`store holds ${held.vouchers} voucher receipts for ${paid} voucher 200s`);
  if (held.deposits !== deposits)
    problems.push(`store holds ${held.deposits} deposit receipts for ${deposits} deposits`);
  if (held.charged !== PRICE * BigInt(paid + deposits))
    problems.push(`channels charged ${held.charged} for ${paid + deposits} paid calls of ${PRICE}`);
  return problems;
}

/**
 * The (c) figures of one round on our server: unpaid 402s under the runs' load (autocannon), then one caller alone:
 * SEQUENTIAL vouchers in a row (on the first channel) and SEQUENTIAL unpaid 402s in a row.
 */
async function latencies(ours: Side, connections: number, label: string, write: (line: string) => void) {
  const unpaidP50ms = await unpaidP50(ours.server, ours.amount, connections);
  write(`${label} ${ours.server.name} unpaid 402 p50 ${unpaidP50ms} ms`);
  const voucher = await sequentialSeries(ours.server, SEQUENTIAL, ours.pool);
  const unpaid = await sequentialSeries(ours.server, SEQUENTIAL);
  write(
    `${label} one caller, ${SEQUENTIAL} calls in a row each: voucher p50 ${f(voucher.p50ms, 2)} ms (p90 ${f(voucher.p90ms, 2)}, server CPU ${f(voucher.serverCpuMsPerCall, 2)} ms/call), unpaid 402 p50 ${f(unpaid.p50ms, 2)} ms (p90 ${f(unpaid.p90ms, 2)}, server CPU ${f(unpaid.serverCpuMsPerCall, 2)} ms/call)`,
  );
  const problems =
    voucher.statuses['200'] !== SEQUENTIAL || unpaid.statuses['402'] !== SEQUENTIAL
      ? [`one caller: vouchers ${JSON.stringify(voucher.statuses)}, unpaid ${JSON.stringify(unpaid.statuses)}`]
      : [];
  return { unpaidP50ms, voucher, unpaid, problems };
}

/** The comparison's figures and ratios from the timed runs and the latency series. */
function figuresOf(
  sides: Side[],
  m: {
    unpaid: number[];
    sequential: Array<{ voucher: Series; unpaid: Series }>;
    fsyncP50ms: number;
    hardhatCpuMs: number;
    loadAverage: number[];
    problems: string[];
  },
): BatchFigures {
  const { unpaid, sequential, fsyncP50ms, hardhatCpuMs, loadAverage, problems } = m;
  const [ours, exact, officialBatch] = sides.map((s) => totals(s.runs)) as [Totals, Totals, Totals];
  const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const unpaidP50ms = mid(unpaid);
  const one = {
    voucherP50ms: mid(sequential.map((s) => s.voucher.p50ms)),
    unpaidP50ms: mid(sequential.map((s) => s.unpaid.p50ms)),
  };
  return {
    ours,
    exact,
    officialBatch,
    unpaidP50ms,
    sequential: one,
    fsyncP50ms,
    hardhatCpuMs,
    loadAverage,
    ratios: {
      aRps: ours.rps / exact.rps,
      aCpuServerPlusFacilitator:
        (ours.cpuPerCall + ours.facilitatorPerCall) / (exact.cpuPerCall + exact.facilitatorPerCall),
      bRps: ours.rps / officialBatch.rps,
      bServerCpu: ours.cpuPerCall / officialBatch.cpuPerCall,
      cP50: ours.p50ms / unpaidP50ms,
      cP50Sequential: one.voucherP50ms / one.unpaidP50ms,
    },
    problems,
  };
}

/** The batch comparison: warm-ups, then `runs` rounds of ours (vouchers), official exact, official batch, ours unpaid. */
export async function runBatchComparison(
  facilitator: Proc,
  setup: BatchSetup,
  options: WarmUpOptions & { runs: number },
  write: (line: string) => void,
): Promise<BatchFigures> {
  write(
    `    batch settlement: ${options.connections} connections, one channel per connection; signing ahead, warm-ups:`,
  );
  const signer = new Signer();
  const { sides, problems, dataDir, deposits } = await prepare(facilitator, setup, options, signer, write);
  const unpaid: number[] = [];
  const sequential: Array<{ voucher: Series; unpaid: Series }> = [];
  const loadAverage: number[] = [];
  let hardhatCpuMs: number;
  let fsyncMs: number;
  try {
    for (const side of sides) await signer.fill(side.pool, side.amount * options.runs);
    await (sides[0]!.pool as VoucherPool).fillFirst(
      (sides[0]!.amount / options.connections) * options.runs + SEQUENTIAL * options.runs,
    );
    write(
      `    ${signer.count} payments signed by the official clients in ${f(signer.ms / 1000, 1)} s, all before the runs`,
    );
    const hardhatBefore = cpuMs(setup.env.chain.pid);
    for (let k = 0; k < options.runs; k++) {
      for (const side of sides) {
        await new Promise((r) => setTimeout(r, 500));
        const run = await paidRun(side.server, facilitator, side.pool, side.amount, options.connections);
        side.runs.push(run);
        write(describeRun(`    run ${k + 1}  `, run));
        problems.push(...runProblems(run).map((p) => `${side.server.name} run ${k + 1}: ${p}`));
      }
      const latency = await latencies(sides[0]!, options.connections, `    run ${k + 1}  `, write);
      unpaid.push(latency.unpaidP50ms);
      sequential.push(latency);
      problems.push(...latency.problems.map((p) => `run ${k + 1}: ${p}`));
      loadAverage.push(loadavg()[0]!);
    }
    hardhatCpuMs = cpuMs(setup.env.chain.pid) - hardhatBefore;
    problems.push(...checkStore(dataDir, sides[0]!, deposits, SEQUENTIAL * sequential.length));
    fsyncMs = fsyncP50ms(dataDir);
  } finally {
    for (const side of sides) await side.server.stop();
  }
  return figuresOf(sides, { unpaid, sequential, fsyncP50ms: fsyncMs, hardhatCpuMs, loadAverage, problems });
}

/** The batch figures as report lines, targets marked met or not. */
export function describeBatch(b: BatchFigures): string[] {
  const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const line = (t: Totals) =>
    `=> ${t.name.padEnd(20)} ${f(t.rps).padStart(5)} req/s; CPU per paid call: server ${f(t.cpuPerCall, 3)} ms + facilitator ${f(t.facilitatorPerCall, 3)} ms; p50 ${t.p50ms} ms`;
  const r = b.ratios;
  return [
    line(b.ours),
    line(b.exact),
    line(b.officialBatch),
    `=> ${b.ours.name} unpaid 402 p50 ${b.unpaidP50ms} ms (same connections, median of runs); Hardhat CPU over the timed rounds ${f(b.hardhatCpuMs)} ms (not in the ratios)`,
    `=> (a) ours vouchers / official exact: req/s ${f(r.aRps, 2)}x (target >= 4: ${mark(r.aRps >= 4)}), CPU server+facilitator per call ${f(r.aCpuServerPlusFacilitator, 3)}x (target <= 0.25: ${mark(r.aCpuServerPlusFacilitator <= 0.25)})`,
    `=> (b) ours vouchers / official batch (in-memory): req/s ${f(r.bRps, 2)}x (target >= 1.0: ${mark(r.bRps >= 1)}), server CPU per call ${f(r.bServerCpu, 2)}x (target <= 1.0: ${mark(r.bServerCpu <= 1)})`,
    `=> (c) voucher p50 / unpaid 402 p50: one caller ${f(b.sequential.voucherP50ms, 2)} / ${f(b.sequential.unpaidP50ms, 2)} ms = ${f(r.cP50Sequential, 2)}x (target <= 2: ${mark(r.cP50Sequential <= 2)}); under the runs' load (${b.ours.p50ms} / ${b.unpaidP50ms} ms, autocannon's whole ms) ${f(r.cP50, 2)}x`,
    `   (c)'s floor on this disk: a voucher's 200 waits for one WAL fsync (p50 ${f(b.fsyncP50ms, 2)} ms here), so (fsync + unpaid 402) / unpaid 402 = ${f((b.fsyncP50ms + b.sequential.unpaidP50ms) / b.sequential.unpaidP50ms, 2)}x before any other work`,
    `   load average after each round: ${b.loadAverage.map((l) => f(l, 1)).join(', ')} (2 cores; other processes share them)`,
    b.problems.length === 0
      ? `checks held: every timed voucher 200 a voucher-only receipt of the price for a distinct (channel, cumulative) sent in its run, no facilitator settlement in a run, Tollbooth's store charges = its 200s`
      : `CHECKS FAILED: ${b.problems.join('; ')}`,
  ];
}
