import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { ServerMemory, ServerMessage, ServerRequest, ServerStats } from './load-server.js';

/** One request of an autocannon sequence; `setupRequest` may rewrite it just before it is sent. */
export interface CannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: CannonRequest, context: Record<string, unknown>) => CannonRequest;
}

/** The autocannon options the load runs use. */
export interface CannonOptions {
  url: string;
  connections: number;
  duration?: number;
  amount?: number;
  /** Requests per second over all connections (unlimited when absent). */
  overallRate?: number;
  /** Seconds before a request counts as timed out. */
  timeout?: number;
  requests: CannonRequest[];
}

/** The parts of autocannon's result the load runs read. */
export interface CannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p90: number; p99: number; max: number; average: number };
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
}

/** autocannon with the request-hook options typed (its bundled declaration in autocannon.d.ts is minimal). */
export const cannon = autocannon as unknown as (options: CannonOptions) => Promise<CannonResult>;

/** Status counts of a run, e.g. `{ "200": 1234 }`. */
export function statuses(result: CannonResult): Record<string, number> {
  return Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, Number(s.count)]));
}

/** A Tollbooth server in its own process (test/bench/load-server.ts), with an IPC channel for its counters. */
export interface LoadServer {
  url: string;
  pid: number;
  stats(): Promise<ServerStats>;
  /** Nonces of the payments that settled. */
  settledNonces(): Promise<string[]>;
  /** Runs a full GC in the server (it runs with --expose-gc), then reports its memory. */
  memory(): Promise<ServerMemory>;
  /** Waits until the server's handler runs and receipts stop changing (in-flight calls finished). */
  settle(): Promise<ServerStats>;
  stop(): Promise<void>;
}

const SERVER_FILE = fileURLToPath(new URL('./load-server.ts', import.meta.url));

/** Starts the load server with the given environment (only PATH is inherited). */
export async function startLoadServer(env: Record<string, string>): Promise<LoadServer> {
  const child: ChildProcess = fork(SERVER_FILE, [], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting: Array<(m: ServerMessage) => void> = [];
  child.on('message', (m: ServerMessage) => waiting.shift()?.(m));
  const next = () => new Promise<ServerMessage>((resolve) => waiting.push(resolve));
  const ready = await Promise.race([
    next(),
    new Promise<never>((_, reject) =>
      child.once('exit', (code) => reject(new Error(`the load server exited with code ${code}`))),
    ),
  ]);
  if (ready.type !== 'ready') throw new Error(`the load server did not start: ${JSON.stringify(ready)}`);
  let queue: Promise<unknown> = Promise.resolve();
  const ask = (request: ServerRequest): Promise<ServerMessage> => {
    const answer = queue.then(() => {
      const reply = next();
      child.send(request);
      return reply;
    });
    queue = answer.catch(() => undefined);
    return answer;
  };
  const stats = async () => {
    const reply = await ask({ type: 'stats' });
    if (reply.type !== 'stats') throw new Error(`stats failed: ${JSON.stringify(reply)}`);
    return reply.stats;
  };
  return {
    url: ready.url,
    pid: child.pid ?? 0,
    stats,
    settledNonces: async () => {
      const reply = await ask({ type: 'settled' });
      if (reply.type !== 'settled') throw new Error(`settled failed: ${JSON.stringify(reply)}`);
      return reply.nonces;
    },
    memory: async () => {
      const reply = await ask({ type: 'memory' });
      if (reply.type !== 'memory') throw new Error(`memory failed: ${JSON.stringify(reply)}`);
      return reply.memory;
    },
    settle: async () => {
      let last = await stats();
      for (let quiet = 0, i = 0; quiet < 3 && i < 240; i++) {
        await new Promise((r) => setTimeout(r, 250));
        const now = await stats();
        const same = JSON.stringify([now.runs, now.receipts]) === JSON.stringify([last.runs, last.receipts]);
        quiet = same ? quiet + 1 : 0;
        last = now;
      }
      return last;
    },
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.send({ type: 'stop' } satisfies ServerRequest);
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** Sends each request once with at most `concurrency` in flight; returns the status counts and the bodies' error codes. */
export async function sendAll(
  requests: Array<() => Promise<Response>>,
  concurrency: number,
): Promise<{ statuses: Record<string, number>; reasons: Record<string, number> }> {
  const out = { statuses: {} as Record<string, number>, reasons: {} as Record<string, number> };
  let index = 0;
  const worker = async () => {
    while (index < requests.length) {
      const res = await requests[index++]!();
      out.statuses[res.status] = (out.statuses[res.status] ?? 0) + 1;
      const body = (await res.json().catch(() => ({}))) as { error?: unknown };
      const reason =
        typeof body.error === 'string' ? body.error : ((body.error as { code?: string } | undefined)?.code ?? '(none)');
      out.reasons[reason] = (out.reasons[reason] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, requests.length) }, worker));
  return out;
}
