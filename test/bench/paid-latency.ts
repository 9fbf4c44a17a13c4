/**
 * Latency of single calls one after the other on one kept-alive connection (node:http, timed with
 * performance.now(), so sub-millisecond answers keep their resolution): what one caller waits for a voucher call
 * and for an unpaid 402 when the server is not saturated, for the (c) figure of the batch comparison.
 */
import { Agent, request } from 'node:http';
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
