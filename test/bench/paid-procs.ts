/**
 * Processes of the paid comparison (`npm run bench:paid`): free ports, spawning a server in its own process with its
 * output in a log file, waiting for its first 402, and reading a process's CPU time and resident memory from /proc.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built CLI (`npm run build` first). */
export const CLI = fileURLToPath(new URL('../../dist/bin/cli.js', import.meta.url));
/** The official @x402/express server, the stub facilitator and the bare express baseline. */
export const OFFICIAL_SERVER = fileURLToPath(new URL('./official-server.mjs', import.meta.url));
export const STUB_FACILITATOR = fileURLToPath(new URL('./stub-facilitator.mjs', import.meta.url));
export const BARE_SERVER = fileURLToPath(new URL('./bare-server.mjs', import.meta.url));

/** A free TCP port of 127.0.0.1 (found by listening on port 0 and closing again). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** One answer of a POST without body or payment (status only), or the connection error's code. */
export function probe(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', agent: false, headers: { 'content-length': '0' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? String(err)));
    req.end();
  });
}

/** A server (or the facilitator) running in its own node process. */
export interface Proc {
  name: string;
  url: string;
  pid: number;
  child: ChildProcess;
  /** File with the process's stdout and stderr (its logs). */
  logFile: string;
  /** Milliseconds from spawn to the first 402 of POST /api/annuity (0 when not waited for). */
  firstAnswerMs: number;
  exited: Promise<number | string>;
  /** SIGTERM (graceful stop; a --cpu-prof profile is written then), SIGKILL after `graceMs`; removes its temp dir. */
  stop(graceMs?: number): Promise<void>;
}

/** How to start one process: script and arguments after `node`, extra node flags, environment (PATH is added). */
export interface ProcSpec {
  name: string;
  args: string[];
  nodeFlags?: string[];
  /** The Node binary to run (default: the one running the bench). */
  node?: string;
  env: Record<string, string>;
  /** Wait for a 402 on POST `path` (default /api/annuity); false: wait for any HTTP answer on GET `path`. */
  expect402?: boolean;
  path?: string;
  /** A directory removed on stop (e.g. the server's DATA_DIR). */
  tempDir?: string;
}

/** Spawns `node [flags] args` on a fresh free port (PORT) and waits, polling in a tight loop, until it answers. */
export async function startProc(spec: ProcSpec, timeoutMs = 60_000): Promise<Proc> {
  const port = await freePort();
  const logDir = mkdtempSync(join(tmpdir(), `bench-${spec.name.replace(/\W+/g, '-')}-`));
  const logFile = join(logDir, 'out.log');
  const fd = openSync(logFile, 'a');
  const t0 = performance.now();
  const child = spawn(spec.node ?? process.execPath, [...(spec.nodeFlags ?? []), ...spec.args], {
    env: { PATH: process.env.PATH ?? '', ...spec.env, PORT: String(port) },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  let gone: number | string | undefined;
  void exited.then((code) => (gone = code));
  const url = `http://127.0.0.1:${port}`;
  const path = spec.path ?? '/api/annuity';
  const expect402 = spec.expect402 ?? true;
  let firstAnswerMs: number;
  for (;;) {
    if (gone !== undefined)
      throw new Error(`${spec.name} exited (${gone}) before answering:\n${readFileSync(logFile, 'utf8').slice(-4000)}`);
    if (performance.now() - t0 > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(
        `${spec.name} did not answer within ${timeoutMs} ms:\n${readFileSync(logFile, 'utf8').slice(-4000)}`,
      );
    }
    const status = expect402 ? await probe(url + path) : await getStatus(url + path);
    if (expect402 ? status === 402 : typeof status === 'number') {
      firstAnswerMs = performance.now() - t0;
      break;
    }
    if (typeof status === 'number' && expect402 && status !== 503)
      throw new Error(`${spec.name} answered ${status} instead of 402`);
  }
  return {
    name: spec.name,
    url,
    pid: child.pid ?? 0,
    child,
    logFile,
    firstAnswerMs,
    exited,
    stop: async (graceMs = 10_000) => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(killer);
      }
      rmSync(logDir, { recursive: true, force: true });
      if (spec.tempDir) rmSync(spec.tempDir, { recursive: true, force: true });
    },
  };
}

function getStatus(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? String(err)));
    req.end();
  });
}

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** CPU time (user + system, all threads) a process has used so far, in ms, from /proc/<pid>/stat; NaN off Linux. */
export function cpuMs(pid: number): number {
  const { user, system } = cpuSplitMs(pid);
  return user + system;
}

/** CPU time a process has used so far in user and in system (kernel) mode, in ms, from /proc/<pid>/stat; NaN off Linux. */
export function cpuSplitMs(pid: number): { user: number; system: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the command name start at field 3 (state); utime is field 14, stime field 15.
    return { user: (Number(fields[11]) * 1000) / clockTicks(), system: (Number(fields[12]) * 1000) / clockTicks() };
  } catch {
    return { user: NaN, system: NaN };
  }
}

/** CPU time of the whole machine so far (all cores), busy and total, in ms, from /proc/stat; NaN off Linux. */
export function machineCpuMs(): { busy: number; total: number } {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = ticks.reduce((a, b) => a + b, 0);
    const idle = ticks[3]! + ticks[4]!; // idle + iowait
    return { busy: ((total - idle) * 1000) / clockTicks(), total: (total * 1000) / clockTicks() };
  } catch {
    return { busy: NaN, total: NaN };
  }
}

/** Resident memory of a process in MB, from /proc/<pid>/status (VmRSS); NaN off Linux. */
export function rssMb(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Median of a list (NaN when empty). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
