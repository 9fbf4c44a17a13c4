import { performance } from 'node:perf_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/shared/log.js';
import { createRuntime, listen } from '../../src/runtime/runtime.js';
import { solidityScan } from '../../tools/solidity-scan.js';
import { testContext } from '../support/context.js';
import { load, startBareExpress, type LoadResult } from './throughput.js';
import { measureBrokerLatency } from './broker.js';
import { measureCryptoIndicators } from './indicators.js';
import { measureDexTopPools } from './dex-top-pools.js';
import { runLoad } from './load.js';
import { runPaidComparison } from './paid-compare.js';
import { runMcpSessions } from './mcp-sessions.js';
import { runFlood } from './flood.js';
import { runAgentStartup } from './agent-startup.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const write = (line: string) => process.stdout.write(line + '\n');
const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

async function unpaidThroughput(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-bench-'));
  // Rate limits off: a per-IP limit would turn most probes into cheap 429s and flatter the figure.
  const limitsOff = {
    RATE_LIMIT_IP_PER_MINUTE: '0',
    RATE_LIMIT_PAYER_PER_MINUTE: '0',
    RATE_LIMIT_TOOL_PER_MINUTE: '0',
  };
  const runtime = await createRuntime(loadConfig({ ...limitsOff, DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), {
    log: silentLogger,
  });
  const ours = await listen(runtime, 0, '127.0.0.1');
  const real = await fetch(`${ours.url}/api/annuity`, { method: 'POST' });
  const sameBytes = {
    body: await real.text(),
    headers: { 'PAYMENT-REQUIRED': real.headers.get('payment-required') ?? '', 'Cache-Control': 'no-store' },
  };
  const small = await startBareExpress({
    body: JSON.stringify({ x402Version: 2, error: 'Payment required', accepts: [] }),
  });
  const same = await startBareExpress(sameBytes);
  const targets = {
    tollbooth: ours.url,
    'bare express, small fixed JSON': small.url,
    'bare express, same fixed bytes': same.url,
  };
  const runs: Record<string, LoadResult[]> = {};
  for (const url of Object.values(targets))
    await load(`${url}/api/annuity`, { method: 'POST', seconds: 1, connections });
  // Alternate the three targets twice so machine noise is shared evenly.
  for (let i = 0; i < 2; i++) {
    for (const [name, url] of Object.entries(targets))
      (runs[name] ??= []).push(await load(`${url}/api/annuity`, { method: 'POST', seconds, connections, expect: 402 }));
  }
  const avg = (rs: LoadResult[]) => rs.reduce((s, r) => s + r.rps, 0) / rs.length;
  write(
    `(a) unpaid 402 probe of POST /api/annuity (${(sameBytes.body.length / 1024).toFixed(1)} KB body + ${(sameBytes.headers['PAYMENT-REQUIRED'].length / 1024).toFixed(1)} KB header), ${connections} connections, ${seconds}s x2 alternating`,
  );
  for (const [name, rs] of Object.entries(runs)) {
    write(
      `    ${name.padEnd(32)} ${avg(rs).toFixed(0).padStart(6)} req/s, p99 ${Math.max(...rs.map((r) => r.p99ms))} ms, errors ${rs.reduce((s, r) => s + r.errors, 0)}, not 402: ${rs.reduce((s, r) => s + r.unexpected, 0)}`,
    );
  }
  const ours_ = avg(runs.tollbooth!);
  write(
    `    ratio vs small fixed JSON = ${(ours_ / avg(runs['bare express, small fixed JSON']!)).toFixed(2)} (target >= 0.70); vs same bytes = ${(ours_ / avg(runs['bare express, same fixed bytes']!)).toFixed(2)}`,
  );
  await ours.close();
  await small.close();
  await same.close();
  await runtime.close();
  rmSync(dataDir, { recursive: true, force: true });
}

async function scanLargeSource(): Promise<void> {
  const unit = `// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\ncontract Vault {\n  mapping(address => uint256) balances;\n  function withdraw() external {\n    require(tx.origin == msg.sender);\n    (bool ok, ) = msg.sender.call{value: balances[msg.sender]}("");\n    require(ok);\n    balances[msg.sender] = 0;\n  }\n  function lucky() external view returns (uint256) { return uint256(keccak256(abi.encodePacked(block.timestamp))) % 7; }\n}\n`;
  let source = '';
  while (Buffer.byteLength(source + unit) <= 512 * 1024) source += unit.replace('Vault', `Vault${source.length}`);
  const input = solidityScan.input.parse({ source });
  const times: number[] = [];
  let findings = 0;
  for (let i = 0; i < 7; i++) {
    const t0 = performance.now();
    const out = await solidityScan.handler(input, testContext());
    times.push(performance.now() - t0);
    findings = out.findings.length;
  }
  write(
    `(c) solidity-scan on ${(Buffer.byteLength(source) / 1024).toFixed(0)} KB (${findings} findings): median ${pct(times, 50).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms (target <= 300 ms)`,
  );
}

await unpaidThroughput();
const broker = await measureBrokerLatency(Number(process.env.BENCH_PAID_CALLS ?? 200));
write(
  `(b) broker added latency of a verified paid call (in-process facilitator, chain time excluded), ${broker.calls} calls`,
);
write(
  `    p50 ${pct(broker.added, 50).toFixed(2)} ms, p99 ${pct(broker.added, 99).toFixed(2)} ms (target p50 <= 3 ms); whole call p50 ${pct(broker.total, 50).toFixed(1)} ms, facilitator+chain p50 ${pct(broker.facilitator, 50).toFixed(1)} ms`,
);
await scanLargeSource();
const indicators = await measureCryptoIndicators(Number(process.env.BENCH_INDICATOR_CALLS ?? 500));
write(
  `(d) crypto-indicators, all indicators on 500 candles from a warm cache (handler level), ${indicators.calls} calls, ${indicators.upstreamRequestsWhileMeasuring} upstream requests`,
);
write(
  `    p50 ${pct(indicators.times, 50).toFixed(2)} ms, p99 ${pct(indicators.times, 99).toFixed(2)} ms (target p50 <= 5 ms)`,
);
const pools = await measureDexTopPools(Number(process.env.BENCH_POOL_CALLS ?? 1000));
write(
  `(e) dex-top-pools over a ${pools.pools}-pool cached list (handler level), ${pools.calls} calls, ${pools.upstreamRequestsWhileMeasuring} upstream requests; the one cold fetch+parse+rank took ${pools.coldFetchMs.toFixed(0)} ms`,
);
write(`    p50 ${pct(pools.times, 50).toFixed(3)} ms, p99 ${pct(pools.times, 99).toFixed(3)} ms (target p50 <= 5 ms)`);
for (const [name, times] of Object.entries(pools.byQuery))
  write(`      ${name.padEnd(28)} p50 ${pct(times, 50).toFixed(3)} ms, p99 ${pct(times, 99).toFixed(3)} ms`);
const loadOk = await runLoad(
  Number(process.env.BENCH_LOAD_SECONDS ?? 30),
  Number(process.env.BENCH_LOAD_CONNECTIONS ?? 200),
);
if (!loadOk) process.exitCode = 1;
// (g) paid path against the official @x402/express middleware, every party in its own process (test/bench/paid-compare.ts).
if (!(await runPaidComparison('(g)'))) process.exitCode = 1;
// (h) paid flood of the slowest inputs while /healthz is polled every 10 ms (test/bench/flood.ts).
if (!(await runFlood('(h)'))) process.exitCode = 1;
// (i) RSS before and after 20,000 MCP initialize requests never ended (test/bench/mcp-sessions.ts).
if (!(await runMcpSessions('(i)'))) process.exitCode = 1;
if (!(await runAgentStartup('(j)'))) process.exitCode = 1;
