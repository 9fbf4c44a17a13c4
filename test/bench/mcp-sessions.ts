/**
 * MCP session memory (`npm run bench`, or alone: `node --import tsx test/bench/mcp-sessions.ts`): one Tollbooth
 * instance in its own process (test/bench/load-server.ts) gets 20,000 (BENCH_MCP_SESSIONS) `initialize` requests on
 * `/mcp`, none of them ended with DELETE, from 2,000 client addresses (X-Forwarded-For behind TRUST_PROXY=loopback, so
 * the per-client cap is not what bounds them). Reports the server's RSS and heap before and after (each after a full
 * GC), the answers by status, the sessions left open and the heap each costs. Target: RSS growth <= 50 MB.
 */
import { fileURLToPath } from 'node:url';
import { startLoadServer } from './load-harness.js';
import type { ServerMemory } from './load-server.js';

const write = (line: string) => process.stdout.write(line + '\n');
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
});
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** What one run measured. */
export interface McpSessionFigures {
  requests: number;
  statuses: Record<string, number>;
  /** Sessions the server reported open at the end (`tollbooth_mcp_sessions_open`; the 200s when it has no gauge). */
  open: number;
  evicted: number | undefined;
  before: ServerMemory;
  /** Right after the last answer (after a full GC). */
  after: ServerMemory;
  /** After IDLE_MS more without requests (after a full GC): what V8 keeps once it has given back its spare heap. */
  idle: ServerMemory;
}

/** How long the server idles before the last measurement. */
const IDLE_MS = Number(process.env.BENCH_MCP_IDLE_MS ?? 10_000);

/** The value of one metric series (`name` with its labels, as the text page writes it), or undefined when absent. */
function metric(page: string, series: string): number | undefined {
  const line = page.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Sends `count` initialize requests (at most `concurrency` at once) and measures the server before and after. */
export async function measureMcpSessions(
  count: number,
  concurrency = 16,
  env: Record<string, string> = {},
): Promise<McpSessionFigures> {
  const server = await startLoadServer({ RATE_LIMIT_IP_PER_MINUTE: '0', TRUST_PROXY: 'loopback', ...env });
  try {
    const init = (i: number) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: { ...HEADERS, 'x-forwarded-for': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
        body: INIT,
      });
    // Warm-up: the MCP SDK loads on the first request to /mcp; that session is ended so it is not counted.
    const first = await init(0);
    await first.text();
    const id = first.headers.get('mcp-session-id');
    if (id) await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: { ...HEADERS, 'mcp-session-id': id } });
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const before = await server.memory();
    const statuses: Record<string, number> = {};
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const res = await init(next++ % 2000);
        await res.arrayBuffer();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const after = await server.memory();
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idle = await server.memory();
    const page = await (await fetch(`${server.url}/metrics`)).text();
    const open = metric(page, 'tollbooth_mcp_sessions_open') ?? statuses['200'] ?? 0;
    return {
      requests: count,
      statuses,
      open,
      evicted: metric(page, 'tollbooth_mcp_sessions_ended_total{reason="evicted"}'),
      before,
      after,
      idle,
    };
  } finally {
    await server.stop();
  }
}

/** Where one measurement's RSS sits: V8's spaces (committed/used), external memory, and the native rest. */
function breakdown(m: ServerMemory): string {
  const space = (k: keyof ServerMemory['spaces']) => `${k} ${mb(m.spaces[k].size)}/${mb(m.spaces[k].used)}`;
  const spaces = (['new', 'old', 'large', 'other'] as const).map(space).join(', ');
  const rest = m.rss - m.heapTotal - m.external;
  const anon = m.rssAnon === undefined ? '' : `; rss anon ${mb(m.rssAnon)}, file ${mb(m.rssFile ?? 0)}`;
  return `heap committed/used: ${spaces}; external ${mb(m.external)} (array buffers ${mb(m.arrayBuffers)}); rss - heap - external ${mb(rest)}${anon}`;
}

/**
 * Runs the measurement and prints it under `label`; false when RSS, once the server idled, grew more than 50 MB.
 * BENCH_MCP_MAX_SESSIONS sets MCP_MAX_SESSIONS (and the per-client cap) of the server, to compare with a higher cap.
 */
export async function runMcpSessions(label: string): Promise<boolean> {
  const count = Number(process.env.BENCH_MCP_SESSIONS ?? 20_000);
  const max = process.env.BENCH_MCP_MAX_SESSIONS;
  const f = await measureMcpSessions(count, 16, max ? { MCP_MAX_SESSIONS: max, MCP_MAX_SESSIONS_PER_CLIENT: max } : {});
  const grew = (m: NodeJS.MemoryUsage, key: 'rss' | 'heapUsed') => m[key] - f.before[key];
  const perSession = (bytes: number) => (f.open ? `${(bytes / f.open / 1024).toFixed(1)} KB` : 'n/a');
  const target = (bytes: number) => (bytes <= 50 * 1024 * 1024 ? 'met' : 'MISSED');
  write(
    `${label} MCP sessions: ${f.requests} initialize requests on /mcp from 2000 addresses, none ended (no DELETE), MCP_MAX_SESSIONS ${max ?? 'default'}`,
  );
  write(`    answers ${JSON.stringify(f.statuses)}; sessions open at the end ${f.open}, evicted ${f.evicted ?? 'n/a'}`);
  write(
    `    rss (each after a full GC): ${mb(f.before.rss)} idle before; ${mb(f.after.rss)} right after the last answer (+${mb(grew(f.after, 'rss'))}, target <= +50 MB ${target(grew(f.after, 'rss'))}); ${mb(f.idle.rss)} after ${IDLE_MS / 1000} s idle (+${mb(grew(f.idle, 'rss'))}, ${target(grew(f.idle, 'rss'))}; ${perSession(grew(f.idle, 'rss'))} per open session)`,
  );
  write(
    `    heap used ${mb(f.before.heapUsed)} -> ${mb(f.idle.heapUsed)} (+${mb(grew(f.idle, 'heapUsed'))}, ${perSession(grew(f.idle, 'heapUsed'))} per open session); heap committed ${mb(f.before.heapTotal)} -> ${mb(f.after.heapTotal)} right after -> ${mb(f.idle.heapTotal)} idle`,
  );
  for (const [name, m] of [
    ['before', f.before],
    ['right after', f.after],
    ['idle', f.idle],
  ] as const)
    write(`    ${name}: ${breakdown(m)}`);
  return grew(f.idle, 'rss') <= 50 * 1024 * 1024;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!(await runMcpSessions('(i)'))) process.exitCode = 1;
}
