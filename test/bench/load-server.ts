/**
 * The server process of the load and soak runs (forked by test/bench/load-harness.ts with an IPC channel): one
 * Tollbooth instance with the embedded SQLite store, configured from its environment, every paid handler wrapped so
 * each run's payment key is appended to a file (not kept in memory, whose growth the soak measures). Answers:
 * - `stats`: handler runs, runs without payment, payments that ran twice, runs whose payment settled or did not,
 *   receipts by status and the settled amount;
 * - `settled`: the nonces (last part of the replay key) of the settled payments;
 * - `memory`: a full garbage collection (it runs with --expose-gc), then `process.memoryUsage()` with V8's spaces and
 *   the anonymous and file-backed RSS (`ServerMemory`);
 * - `stop`: closes the server and the store, then exits.
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/shared/log.js';
import { createRuntime, listen } from '../../src/runtime/runtime.js';
import type { AnyToolDefinition, ToolContext } from '../../src/tool/tool.js';
import { paidTools as tools } from '../../tools/index.js';

/** What the server process reports about itself. */
export interface ServerStats {
  /** Handler runs by tool. */
  runs: Record<string, number>;
  /** Handler runs that had no verified payment in their context (must be 0). */
  unpaidRuns: number;
  /** Payments whose handler ran more than once (must be 0). */
  doubleExecutions: number;
  /** Runs whose payment settled (charged). */
  chargedRuns: number;
  /** Runs whose payment did not settle: released because the client left before settlement; nothing charged. */
  unchargedRuns: number;
  /** Settled payments without a handler run (must be 0). */
  settledWithoutRun: number;
  /** Receipts in the store by status, the distinct payments among the settled ones and their total amount. */
  receipts: {
    settled: number;
    failed: number;
    distinctSettled: number;
    settledAmount: string;
    failedReasons: Record<string, number>;
  };
}

/** `process.memoryUsage()` with where the heap and RSS sit: V8's spaces (committed and used), anonymous vs file RSS. */
export interface ServerMemory extends NodeJS.MemoryUsage {
  /** Committed (`size`) and used bytes of V8's new space, old space, large objects and the rest (code, maps...). */
  spaces: Record<'new' | 'old' | 'large' | 'other', { size: number; used: number }>;
  /** Anonymous RSS (heap, malloc arenas, stacks) and file-backed RSS (code of node and its libraries), on Linux. */
  rssAnon?: number;
  rssFile?: number;
}

/** Messages the parent sends. */
export type ServerRequest = { type: 'stats' } | { type: 'settled' } | { type: 'memory' } | { type: 'stop' };
/** Messages the server sends. */
export type ServerMessage =
  | { type: 'ready'; url: string }
  | { type: 'stats'; stats: ServerStats }
  | { type: 'settled'; nonces: string[] }
  | { type: 'memory'; memory: ServerMemory }
  | { type: 'error'; error: string };

const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-load-'));
const RUN_LOG = join(dataDir, 'runs.log');
appendFileSync(RUN_LOG, '');
const runs: Record<string, number> = {};
let unpaidRuns = 0;

function counted(tool: AnyToolDefinition): AnyToolDefinition {
  return {
    ...tool,
    handler: (input: unknown, ctx: ToolContext) => {
      runs[tool.name] = (runs[tool.name] ?? 0) + 1;
      if (ctx.payer === undefined) unpaidRuns++;
      else appendFileSync(RUN_LOG, ctx.payer.replayKey + '\n');
      return tool.handler(input, ctx);
    },
  };
}

const send = (message: ServerMessage) => process.send?.(message);
const runtime = await createRuntime(loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), {
  log: silentLogger,
  tools: tools.map(counted),
});
const running = await listen(runtime, 0, '127.0.0.1');

async function settledReceipts() {
  const receipts = await runtime.store.ledger.listReceipts({ limit: 10_000_000 });
  return { receipts, settled: receipts.filter((r) => r.status === 'settled') };
}

async function stats(): Promise<ServerStats> {
  const { receipts, settled } = await settledReceipts();
  const settledKeys = new Set(settled.map((r) => r.replayKey));
  const ran = new Map<string, number>();
  for (const key of readFileSync(RUN_LOG, 'utf8').split('\n')) if (key) ran.set(key, (ran.get(key) ?? 0) + 1);
  let chargedRuns = 0;
  let unchargedRuns = 0;
  let doubleExecutions = 0;
  for (const [key, count] of ran) {
    if (count > 1) doubleExecutions++;
    if (settledKeys.has(key)) chargedRuns += count;
    else unchargedRuns += count;
  }
  const failedReasons: Record<string, number> = {};
  for (const r of receipts)
    if (r.status === 'failed')
      failedReasons[r.errorReason ?? '(none)'] = (failedReasons[r.errorReason ?? '(none)'] ?? 0) + 1;
  return {
    runs: { ...runs },
    unpaidRuns,
    doubleExecutions,
    chargedRuns,
    unchargedRuns,
    settledWithoutRun: [...settledKeys].filter((k) => !ran.has(k)).length,
    receipts: {
      settled: settled.length,
      failed: receipts.length - settled.length,
      distinctSettled: settledKeys.size,
      settledAmount: settled.reduce((sum, r) => sum + BigInt(r.amount), 0n).toString(),
      failedReasons,
    },
  };
}

function memory(): ServerMemory {
  const spaces: ServerMemory['spaces'] = {
    new: { size: 0, used: 0 },
    old: { size: 0, used: 0 },
    large: { size: 0, used: 0 },
    other: { size: 0, used: 0 },
  };
  for (const s of getHeapSpaceStatistics()) {
    const key =
      s.space_name === 'new_space'
        ? 'new'
        : s.space_name === 'old_space'
          ? 'old'
          : /large/.test(s.space_name)
            ? 'large'
            : 'other';
    spaces[key].size += s.space_size;
    spaces[key].used += s.space_used_size;
  }
  const status = existsSync('/proc/self/status') ? readFileSync('/proc/self/status', 'utf8') : '';
  const kb = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  };
  return { ...process.memoryUsage(), spaces, rssAnon: kb('RssAnon'), rssFile: kb('RssFile') };
}

process.on('message', (request: ServerRequest) => {
  const answer = async () => {
    switch (request.type) {
      case 'memory':
        (globalThis as { gc?: () => void }).gc?.();
        send({ type: 'memory', memory: memory() });
        return;
      case 'stats':
        send({ type: 'stats', stats: await stats() });
        return;
      case 'settled':
        send({
          type: 'settled',
          nonces: (await settledReceipts()).settled.map((r) => r.replayKey.split(':').pop() ?? ''),
        });
        return;
      case 'stop':
        await running.close();
        await runtime.close();
        rmSync(dataDir, { recursive: true, force: true });
        process.exit(0);
    }
  };
  answer().catch((err: unknown) => send({ type: 'error', error: String((err as Error)?.stack ?? err) }));
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready', url: running.url });
