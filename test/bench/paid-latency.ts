/**
 * Latency of single calls one after the other on one kept-alive connection (node:http, timed with
 * performance.now(), so sub-millisecond answers keep their resolution): what one caller waits for a voucher call
 * and for an unpaid 402 when the server is not saturated, for the (c) figure of the batch comparison; also the unpaid
 * 402's p50 under load, and the disk's fsync latency (the floor under a durable answer).
 */
import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { cannon } from './load-harness.js';
import { CALL_BODY, type PaymentPool } from './paid-load.js';
import { cpuMs, type Proc } from './paid-procs.js';

/** Latencies of a sequential series, ms, the answers' statuses, and the server's CPU per call (all its threads). */
export interface Series {
  p50ms: number;
  p90ms: number;
  statuses: Record<string, number>;
  serverCpuMsPerCall: number;
}

function post(agent: Agent, url: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * `count` POST /api/annuity one after the other on one connection: with the pool's next payment each (one channel
 * in order, for vouchers) and the call's body, or bare (no body, no payment: the 402).
 */
export async function sequentialSeries(server: Proc, count: number, pool?: PaymentPool): Promise<Series> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  const context: Record<string, unknown> = {};
  pool?.startRun(count, 1);
  const cpuBefore = cpuMs(server.pid);
  try {
    for (let i = 0; i < count; i++) {
      const payment = pool?.take(context);
      const headers: Record<string, string> = pool
        ? { 'content-type': 'application/json', ...(payment ? { [pool.paymentHeader]: payment } : {}) }
        : { 'content-length': '0' };
      const t = performance.now();
      const status = await post(agent, `${server.url}/api/annuity`, headers, pool ? CALL_BODY : '');
      times.push(performance.now() - t);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  } finally {
    agent.destroy();
  }
  const serverCpuMsPerCall = (cpuMs(server.pid) - cpuBefore) / count;
  times.sort((a, b) => a - b);
  const [p50ms, p90ms] = [times[Math.floor(times.length / 2)]!, times[Math.floor(times.length * 0.9)]!];
  return { p50ms, p90ms, statuses, serverCpuMsPerCall };
}

/**
 * p50 of one fdatasync after a 4 KB append to a file in `dir` (the disk the store's WAL is on), ms: what a durable
 * answer waits for at least, since a voucher's charge must survive a power loss before its 200 promises it.
 */
export function fsyncP50ms(dir: string, count = 200): number {
  const path = join(dir, 'bench-fsync.tmp');
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(4096, 1);
  const times: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      writeSync(fd, block);
      const t = performance.now();
      fdatasyncSync(fd);
      times.push(performance.now() - t);
    }
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

/** p50 of unpaid 402s (bare POST) on a server, `amount` requests over `connections`. */
export async function unpaidP50(server: Proc, amount: number, connections: number): Promise<number> {
  const result = await cannon({
    url: `${server.url}/api/annuity`,
    connections,
    amount,
    requests: [{ method: 'POST', headers: { 'content-length': '0' } }],
  });
  return result.latency.p50;
}
