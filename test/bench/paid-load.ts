/**
 * Paid load of the comparison: pools of pre-signed EIP-3009 payments (real signatures, viem via test/support/payer.ts,
 * one fresh random nonce each), and one timed autocannon run of a fixed number of paid calls against one server, with
 * the server's and the facilitator's CPU time over the run and the checks on what came back.
 */
import type { PaymentRequirements } from '@x402/core/types';
import { concat, getAddress, keccak256, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { annuity } from '../../tools/annuity.js';
import { testContext } from '../support/context.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { cannon, statuses, type CannonOptions, type CannonRequest } from './load-harness.js';
import { cpuMs, cpuSplitMs, type Proc } from './paid-procs.js';
import { facilitatorStats, type FacilitatorStats } from './paid-servers.js';

/** The paid call: a valid annuity input. */
export const CALL_BODY = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });

/**
 * Authorizations are valid for 300 s, the challenge's `maxTimeoutSeconds` and so the longest Tollbooth accepts
 * (docs/payments.md, bounded authorization windows): the pool of a comparison is signed right before its timed runs.
 */
const VALID_FOR_SECONDS = 300;

/**
 * Payments prepared ahead for one server, each handed out once: x402 (below) or MPP credentials (paid-mpp.ts). The
 * queue is shared; each kind says how it signs (`fill`) and how it reads its receipt header (`receiptOf`).
 */
export abstract class PaymentPool {
  /** The request header a payment travels in, and the answer header its receipt comes back in (lower case). */
  abstract readonly paymentHeader: string;
  abstract readonly receiptHeader: string;
  readonly headers: string[] = [];
  /** The settlement transaction each payment leads to on the stub chain: keccak256(asset ‖ from ‖ nonce). */
  readonly txs: Hex[] = [];
  head = 0;
  starved = 0;
  /** Facilitator settlements each paid call leads to (vouchers: none). */
  readonly settlementsPerCall: number = 1;

  /** Signs payments until `count` are waiting. */
  abstract fill(count: number): Promise<void>;
  /** Reads one receipt header value. */
  abstract receiptOf(raw: string): { success?: boolean; transaction?: string };

  /**
   * Prepares a run of `amount` calls over `connections`; returns how many requests each connection's sequence has
   * (autocannon keeps a connection's context for one pass over its sequence).
   */
  startRun(_amount: number, _connections: number): number {
    return 1;
  }

  /** The next prepared payment (for the connection whose autocannon context is given), or undefined (counted as starved) when none is left. */
  take(_context?: Record<string, unknown>): string | undefined {
    const header = this.headers[this.head];
    if (header === undefined) {
      this.starved++;
      return undefined;
    }
    this.head++;
    return header;
  }

  get available(): number {
    return this.headers.length - this.head;
  }
}

/** Payments signed ahead for one server's challenge entry, each handed out once. */
export class SignedPool extends PaymentPool {
  readonly paymentHeader = 'payment-signature';
  readonly receiptHeader = 'payment-response';

  constructor(
    private readonly payers: readonly PrivateKeyAccount[],
    readonly entry: PaymentRequirements,
  ) {
    super();
  }

  /** Signs until `count` payments are available. */
  async fill(count: number): Promise<void> {
    const asset = getAddress(this.entry.asset);
    while (this.headers.length - this.head < count) {
      const payer = this.payers[this.headers.length % this.payers.length]!;
      const validBefore = BigInt(Math.floor(Date.now() / 1000) + VALID_FOR_SECONDS);
      const payload = await signExactPayment(payer, this.entry, { validBefore });
      const nonce = (payload.payload as { authorization: { nonce: Hex } }).authorization.nonce;
      this.headers.push(encodePayment(payload));
      this.txs.push(keccak256(concat([asset, payer.address, nonce])));
    }
  }

  receiptOf(raw: string): { success?: boolean; transaction?: string } {
    return JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as { success?: boolean; transaction?: string };
  }
}

/** One timed run against one server. */
export interface PaidRun {
  server: string;
  amount: number;
  seconds: number;
  /** 200 answers with the right result. */
  ok: number;
  rps: number;
  statuses: Record<string, number>;
  wrongBodies: number;
  errors: number;
  timeouts: number;
  p50ms: number;
  p99ms: number;
  serverCpuMs: number;
  /** The part of it spent in the kernel (syscalls: sockets, file writes, fsync). */
  serverSystemMs: number;
  facilitatorCpuMs: number;
  loadGeneratorCpuMs: number;
  facilitator: {
    verified: number;
    invalid: number;
    settled: number;
    settleFailed: number;
    chainTransfers: number;
    replaysRefused: number;
    connections: number;
    reasons: Record<string, number>;
  };
  /** Receipts (PAYMENT-RESPONSE, or Payment-Receipt for MPP) of the 200 answers: successful, distinct transactions, and from payments sent in this run. */
  receipts: { success: number; distinct: number; fromThisRun: number };
  starved: number;
  settlementsPerCall: number;
}

const expected = await annuity.handler(annuity.input.parse(JSON.parse(CALL_BODY)), testContext());

function header(headers: Record<string, string | string[]>, name: string): string | undefined {
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return Array.isArray(v) ? v[0] : v;
  return undefined;
}

function diff(after: FacilitatorStats, before: FacilitatorStats): PaidRun['facilitator'] {
  const reasons: Record<string, number> = {};
  for (const kind of ['verify', 'settle'] as const) {
    for (const [k, v] of Object.entries(after[kind].reasons)) {
      const d = v - (before[kind].reasons[k] ?? 0);
      if (d) reasons[`${kind}:${k}`] = d;
    }
  }
  return {
    verified: after.verify.valid - before.verify.valid,
    invalid: after.verify.invalid - before.verify.invalid,
    settled: after.settle.success - before.settle.success,
    settleFailed: after.settle.failed - before.settle.failed,
    chainTransfers: after.chainTransfers - before.chainTransfers,
    replaysRefused: after.chainReplaysRefused - before.chainReplaysRefused,
    connections: after.connections - before.connections,
    reasons,
  };
}

/** Sends `amount` paid calls over `connections` connections, each with the next payment of the pool; measures and checks. */
export async function paidRun(
  server: Proc,
  facilitator: Proc,
  pool: PaymentPool,
  amount: number,
  connections: number,
): Promise<PaidRun> {
  const receipts: string[] = [];
  let wrongBodies = 0;
  const sequence = pool.startRun(amount, connections);
  const firstTaken = pool.head;
  const starvedBefore = pool.starved;
  const facBefore = await facilitatorStats(facilitator.url);
  const cpuBefore = {
    server: cpuMs(server.pid),
    serverSystem: cpuSplitMs(server.pid).system,
    facilitator: cpuMs(facilitator.pid),
    self: process.cpuUsage(),
  };
  const t0 = performance.now();
  let lastAnswer = t0;
  const request = {
    method: 'POST',
    path: '/api/annuity',
    body: CALL_BODY,
    headers: { 'content-type': 'application/json' },
    setupRequest: (req: CannonRequest, context: Record<string, unknown>) => {
      const payment = pool.take(context);
      return payment ? { ...req, headers: { ...req.headers, [pool.paymentHeader]: payment } } : req;
    },
    onResponse: (status: number, body: string, _ctx: unknown, headers: Record<string, string | string[]>) => {
      lastAnswer = performance.now();
      if (status !== 200) return;
      const receipt = header(headers, pool.receiptHeader);
      if (receipt) receipts.push(receipt);
      try {
        const out = JSON.parse(body) as { presentValue?: number; futureValue?: number };
        if (out.presentValue !== expected.presentValue || out.futureValue !== expected.futureValue) wrongBodies++;
      } catch {
        wrongBodies++;
      }
    },
  } as CannonRequest;
  const options: CannonOptions & { sampleInt: number } = {
    url: server.url,
    connections: Math.min(connections, amount),
    amount,
    timeout: 60,
    // autocannon notices the end of a fixed-amount run only at its next sampling tick (1 s by default); the run's
    // length is taken from the last answer below, and a short tick keeps the idle tail out of the CPU readings.
    sampleInt: 50,
    requests: Array.from({ length: sequence }, () => request),
  };
  const result = await cannon(options);
  const seconds = (lastAnswer - t0) / 1000;
  const self = process.cpuUsage(cpuBefore.self);
  const serverCpuMs = cpuMs(server.pid) - cpuBefore.server;
  const serverSystemMs = cpuSplitMs(server.pid).system - cpuBefore.serverSystem;
  const facilitatorCpuMs = cpuMs(facilitator.pid) - cpuBefore.facilitator;
  const facAfter = await facilitatorStats(facilitator.url);
  const codes = statuses(result);
  const ok = (codes['200'] ?? 0) - wrongBodies;
  const sent = new Set(pool.txs.slice(firstTaken, pool.head));
  const txs = receipts.map((r) => pool.receiptOf(r));
  return {
    server: server.name,
    amount,
    seconds,
    ok,
    rps: ok / seconds,
    statuses: codes,
    wrongBodies,
    errors: result.errors,
    timeouts: result.timeouts,
    p50ms: result.latency.p50,
    p99ms: result.latency.p99,
    serverCpuMs,
    serverSystemMs,
    facilitatorCpuMs,
    loadGeneratorCpuMs: (self.user + self.system) / 1000,
    facilitator: diff(facAfter, facBefore),
    receipts: {
      success: txs.filter((t) => t.success === true).length,
      distinct: new Set(txs.map((t) => t.transaction?.toLowerCase())).size,
      fromThisRun: txs.filter((t) => sent.has((t.transaction ?? '') as Hex)).length,
    },
    starved: pool.starved - starvedBefore,
    settlementsPerCall: pool.settlementsPerCall,
  };
}

/** What is wrong with a run (empty when every check held). */
export function runProblems(run: PaidRun): string[] {
  const p: string[] = [];
  const non200 = Object.entries(run.statuses).filter(([s]) => s !== '200');
  if (non200.length) p.push(`non-200 answers ${JSON.stringify(Object.fromEntries(non200))}`);
  if (run.wrongBodies) p.push(`${run.wrongBodies} 200 answers with a wrong result`);
  if (run.errors || run.timeouts) p.push(`${run.errors} connection errors, ${run.timeouts} timeouts`);
  if (run.starved) p.push(`${run.starved} requests found the payment pool empty`);
  if (run.receipts.success !== run.ok + run.wrongBodies)
    p.push(`${run.receipts.success} successful receipts for ${run.ok + run.wrongBodies} 200 answers`);
  if (run.receipts.distinct !== run.receipts.success)
    p.push(`${run.receipts.success} receipts name only ${run.receipts.distinct} distinct transactions`);
  if (run.receipts.fromThisRun !== run.receipts.success)
    p.push(`${run.receipts.success - run.receipts.fromThisRun} receipts are not for a payment sent in this run`);
  if (run.facilitator.settled !== (run.ok + run.wrongBodies) * run.settlementsPerCall)
    p.push(`facilitator settled ${run.facilitator.settled} payments for ${run.ok + run.wrongBodies} 200 answers`);
  if (run.facilitator.chainTransfers !== run.facilitator.settled)
    p.push(`${run.facilitator.chainTransfers} chain transfers for ${run.facilitator.settled} settlements`);
  if (run.facilitator.invalid || run.facilitator.settleFailed || run.facilitator.replaysRefused) {
    p.push(
      `facilitator: ${run.facilitator.invalid} invalid, ${run.facilitator.settleFailed} failed settlements, ${run.facilitator.replaysRefused} replays refused ${JSON.stringify(run.facilitator.reasons)}`,
    );
  }
  return p;
}
